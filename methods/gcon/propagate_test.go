package gcon

import (
	"github.com/dpgnn/dpgnn/layers"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

type edge struct{ u, v int }

// randomEdges returns an undirected simple edge set (u < v) on n nodes.
func randomEdges(r *rand.Rand, n int, p float64) map[edge]bool {
	e := map[edge]bool{}
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if r.Float64() < p {
				e[edge{u, v}] = true
			}
		}
	}
	return e
}

// adjacency builds the symmetric CSR of an undirected edge set.
func adjacency(n int, e map[edge]bool) *graphs.CSR {
	var src, dst []int
	for k := range e {
		src = append(src, k.u, k.v)
		dst = append(dst, k.v, k.u)
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

func toggled(e map[edge]bool, k edge) map[edge]bool {
	out := map[edge]bool{}
	for x := range e {
		out[x] = true
	}
	if out[k] {
		delete(out, k)
	} else {
		out[k] = true
	}
	return out
}

func unitRows(r *rand.Rand, n, k int) []float64 {
	x := make([]float64, n*k)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	NormalizeRows(x, n, k)
	return x
}

func identity(n int) []float64 {
	x := make([]float64, n*n)
	for i := 0; i < n; i++ {
		x[i*n+i] = 1
	}
	return x
}

func dense(m *graphs.CSR) []float64 {
	return (&graphs.Features{N: m.Rows, F: m.Cols, Sparse: m}).ToDense()
}

// TestTransition is unit test 1, plus the hygiene of step 0.
func TestTransition(t *testing.T) {
	// A directed, duplicated edge list with a self-loop: 0→1, 1→0, 0→1 again,
	// 2→1 only, 3→3; node 4 isolated.
	a := graphs.FromCOO(5, 5, []int{0, 1, 0, 2, 3}, []int{1, 0, 1, 1, 3}, []float64{1, 1, 2, 1, 1})
	at := Transition(a)
	want := [][]float64{
		{0.5, 0.5, 0, 0, 0},
		{1. / 3, 1. / 3, 1. / 3, 0, 0},
		{0, 0.5, 0.5, 0, 0},
		{0, 0, 0, 1, 0},
		{0, 0, 0, 0, 1},
	}
	d := dense(at)
	for i := range want {
		for j := range want[i] {
			if math.Abs(d[i*5+j]-want[i][j]) > 1e-15 {
				t.Errorf("Ã[%d,%d] = %g, want %g", i, j, d[i*5+j], want[i][j])
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 5 + r.IntN(30)
		a := adjacency(n, randomEdges(r, n, r.Float64()*0.4))
		at := Transition(a)
		deg := a.Degrees()
		for i, s := range at.RowSums() {
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("row %d sums to %.17g", i, s)
			}
			cols, vals := at.Row(i)
			if len(cols) != deg[i]+1 {
				t.Fatalf("row %d has %d entries, want %d", i, len(cols), deg[i]+1)
			}
			for _, v := range vals {
				if math.Abs(v-1/float64(deg[i]+1)) > 1e-15 {
					t.Fatalf("row %d entry %g, want 1/%d", i, v, deg[i]+1)
				}
			}
		}
	}
}

// TestLemma1 is unit test 2: Ã^k (k ≤ 6), R_m and R_∞ are non-negative,
// have unit row sums and column sums ≤ max((k_i+1)/2, 1).
func TestLemma1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 60; trial++ {
		n := 4 + r.IntN(20)
		a := adjacency(n, randomEdges(r, n, 0.05+0.4*r.Float64()))
		at := Transition(a)
		deg := a.Degrees()
		alpha := 0.1 + 0.8*r.Float64()
		var mats [][]float64
		p := identity(n)
		for k := 1; k <= 6; k++ {
			next := make([]float64, n*n)
			at.MulDense(p, n, next)
			p = next
			mats = append(mats, p)
		}
		for _, m := range []int{1, 2, 5, 10, Inf} {
			rm, err := layers.PPR(at, identity(n), n, alpha, m)
			if err != nil {
				t.Fatal(err)
			}
			mats = append(mats, rm)
		}
		for mi, mat := range mats {
			for i := 0; i < n; i++ {
				var row, col float64
				for j := 0; j < n; j++ {
					if mat[i*n+j] < 0 {
						t.Fatalf("matrix %d entry (%d,%d) = %g < 0", mi, i, j, mat[i*n+j])
					}
					row += mat[i*n+j]
					col += mat[j*n+i]
				}
				if math.Abs(row-1) > 1e-9 {
					t.Fatalf("matrix %d row %d sums to %g", mi, i, row)
				}
				if bound := math.Max(float64(deg[i]+1)/2, 1); col > bound+1e-9 {
					t.Fatalf("matrix %d column %d sums to %g > %g", mi, i, col, bound)
				}
			}
		}
	}
}

// psiDist is ψ(Z, Z') = Σ_i ‖z'_i − z_i‖₂.
func psiDist(z, z2 []float64, n, k int) float64 {
	var s float64
	for i := 0; i < n; i++ {
		var ss float64
		for j := 0; j < k; j++ {
			d := z[i*k+j] - z2[i*k+j]
			ss += d * d
		}
		s += math.Sqrt(ss)
	}
	return s
}

// TestLemma2Empirical is unit test 3: toggling one undirected edge moves
// Z_m = R_m X by at most Ψ_m in ψ, and the bound is attained for m = 1.
func TestLemma2Empirical(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const k = 3
	worst := map[int]float64{}
	for trial := 0; trial < 80; trial++ {
		n := 4 + r.IntN(16)
		e := randomEdges(r, n, 0.05+0.35*r.Float64())
		u := r.IntN(n)
		v := (u + 1 + r.IntN(n-1)) % n
		e2 := toggled(e, edge{min(u, v), max(u, v)})
		at, at2 := Transition(adjacency(n, e)), Transition(adjacency(n, e2))
		x := unitRows(r, n, k)
		for _, alpha := range []float64{0.1, 0.2, 0.4, 0.6, 0.8} {
			for _, m := range []int{1, 2, 5, 10, Inf} {
				z, _ := layers.PPR(at, x, k, alpha, m)
				z2, _ := layers.PPR(at2, x, k, alpha, m)
				psi, bound := psiDist(z, z2, n, k), PsiStep(alpha, m)
				if psi > bound+1e-9 {
					t.Fatalf("n=%d α=%g m=%d: ψ = %.12g > Ψ = %.12g", n, alpha, m, psi, bound)
				}
				worst[m] = math.Max(worst[m], psi/bound)
			}
		}
	}
	t.Logf("max ψ/Ψ by m (−1 = ∞): %v", worst)
	// Tight example: two isolated nodes with x_1 = e_1, x_2 = −e_1.
	x := []float64{1, 0, -1, 0}
	for _, alpha := range []float64{0.2, 0.7} {
		z, _ := layers.PPR(Transition(adjacency(2, nil)), x, 2, alpha, 1)
		z2, _ := layers.PPR(Transition(adjacency(2, map[edge]bool{{0, 1}: true})), x, 2, alpha, 1)
		assertRel(t, "tight ψ", psiDist(z, z2, 2, 2), PsiStep(alpha, 1), 1e-12)
	}
}

// TestConcat is unit test 4: ψ(Z) ≤ (1/s)ΣΨ_{m_i} and ‖z_i‖ ≤ 1.
func TestConcat(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const k = 2
	for trial := 0; trial < 40; trial++ {
		n := 4 + r.IntN(16)
		e := randomEdges(r, n, 0.3)
		u := r.IntN(n)
		v := (u + 1 + r.IntN(n-1)) % n
		at, at2 := Transition(adjacency(n, e)), Transition(adjacency(n, toggled(e, edge{min(u, v), max(u, v)})))
		x := unitRows(r, n, k)
		for _, steps := range [][]int{{0, 1}, {1, 2, Inf}, {0, 2, 5}, {3}} {
			alpha := 0.2 + 0.6*r.Float64()
			z, err := Concat(at, x, k, alpha, steps)
			if err != nil {
				t.Fatal(err)
			}
			z2, _ := Concat(at2, x, k, alpha, steps)
			d := k * len(steps)
			if psi, b := psiDist(z, z2, n, d), Psi(alpha, steps); psi > b+1e-9 {
				t.Fatalf("steps %v: ψ = %g > Ψ = %g", steps, psi, b)
			}
			for i := 0; i < n; i++ {
				if nz := norm(z[i*d : (i+1)*d]); nz > 1+1e-12 {
					t.Fatalf("‖z_%d‖ = %g > 1", i, nz)
				}
			}
			// The blocks are the single-step propagations scaled by 1/s.
			zm, _ := layers.PPR(at, x, k, alpha, steps[len(steps)-1])
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					if got := z[i*d+(len(steps)-1)*k+j]; math.Abs(got-zm[i*k+j]/float64(len(steps))) > 1e-15 {
						t.Fatalf("block mismatch at (%d,%d)", i, j)
					}
				}
			}
		}
	}
	// R_∞ X solves (I − (1−α)Ã) Z = αX.
	n := 12
	at := Transition(adjacency(n, randomEdges(r, n, 0.3)))
	x := unitRows(r, n, k)
	z, _ := layers.PPR(at, x, k, 0.3, Inf)
	az := make([]float64, n*k)
	at.MulDense(z, k, az)
	for i := range z {
		if res := z[i] - 0.7*az[i] - 0.3*x[i]; math.Abs(res) > 1e-11 {
			t.Fatalf("R_∞ residual %g", res)
		}
	}
}
