package graphs

import (
	"math"
	"testing"
)

// tcDenseNorm is the dense reference: M = A with its diagonal replaced as
// PyG's add_remaining_self_loops does (existing weight kept, else 1), then
// D^{-1/2} M D^{-1/2} (sym) or D^{-1} M, D = row sums of M.
func tcDenseNorm(a *CSR, sym bool) []float64 {
	n := a.Rows
	m := tcDense(a)
	for i := 0; i < n; i++ {
		if m[i*n+i] == 0 {
			m[i*n+i] = 1
		}
	}
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			deg[i] += m[i*n+j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if sym {
				m[i*n+j] /= math.Sqrt(deg[i] * deg[j])
			} else {
				m[i*n+j] /= deg[i]
			}
		}
	}
	return m
}

func TestNormAgainstDense(t *testing.T) {
	cases := []struct {
		name string
		a    *CSR
	}{
		{"symmetric", Symmetrize(RemoveSelfLoops(tcRandomCSR(12, 0.2, false, 1)))},
		{"sparse with isolated", Symmetrize(RemoveSelfLoops(tcRandomCSR(15, 0.05, false, 2)))},
		{"directed with loops", tcRandomCSR(10, 0.3, false, 3)},
		{"weighted with loops", tcRandomCSR(10, 0.3, true, 4)},
		{"weighted symmetric", Symmetrize(tcRandomCSR(11, 0.25, true, 5))},
		{"empty", &CSR{Rows: 4, Cols: 4, Indptr: make([]int, 5)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gcn, rw *CSR
			tcImmutable(t, "norms", tc.a, func() { gcn, rw = GCNNorm(tc.a), RowNorm(tc.a) })
			for _, r := range []struct {
				name string
				got  *CSR
				sym  bool
			}{{"GCNNorm", gcn, true}, {"RowNorm", rw, false}} {
				tcCheckCanonical(t, r.name, r.got)
				if r.got.Data == nil {
					t.Fatalf("%s: result must be weighted", r.name)
				}
				want := tcDenseNorm(tc.a, r.sym)
				got := tcDense(r.got)
				for k := range want {
					if math.Abs(got[k]-want[k]) > 1e-12 {
						t.Fatalf("%s[%d,%d] = %v, want %v", r.name, k/tc.a.Rows, k%tc.a.Rows, got[k], want[k])
					}
				}
				// Exactly one stored diagonal entry per row.
				for i := 0; i < r.got.Rows; i++ {
					cols, _ := r.got.Row(i)
					loops := 0
					for _, j := range cols {
						if j == i {
							loops++
						}
					}
					if loops != 1 {
						t.Fatalf("%s row %d has %d self-loops", r.name, i, loops)
					}
				}
			}
			for i, s := range rw.RowSums() {
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("RowNorm row %d sums to %v", i, s)
				}
			}
		})
	}
}

// TestGCNNormClosedForm checks Â_uu = 1/(d_u+1), Â_uw = 1/sqrt((d_u+1)(d_w+1))
// (Â = D^−½(A + I)D^−½, as CARIBOU defines it) on a path with a pendant
// triangle, where an existing unit self-loop must not count twice.
func TestGCNNormClosedForm(t *testing.T) {
	adj := Symmetrize(FromCOO(9, 9, []int{0, 1, 2, 3, 4, 5, 6, 7, 5}, []int{1, 2, 3, 4, 5, 6, 7, 8, 7}, nil))
	for _, a := range []*CSR{adj, AddSelfLoops(adj, 1)} {
		h := GCNNorm(a)
		deg := adj.Degrees()
		for i := 0; i < h.Rows; i++ {
			cols, vals := h.Row(i)
			for k, j := range cols {
				want := 1 / math.Sqrt(float64((deg[i]+1)*(deg[j]+1)))
				if math.Abs(vals[k]-want) > 1e-15 {
					t.Fatalf("Â[%d,%d] = %v, want %v", i, j, vals[k], want)
				}
			}
		}
	}
}
