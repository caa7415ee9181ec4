package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
)

// sparseRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over examples declared by start, first layer layers.Linear.ForwardSparse
// over a sparse feature batch (as sagemlp's encoder / audit4_gram_sparse),
// per-row loss Σ_j y_rj·T_rj. rowsOf(u) gives the CSR row (cols, vals) the
// fill writes for data row u: the example's own data, in a non-canonical
// encoding (graphs.CSR.Validate allows unsorted rows and duplicates; Sparse.Set
// checks only finiteness).
func sparseRelease(t *testing.T, start []int, f int, rowsOf func(u int) ([]int, []float64), targ []float64) []float64 {
	rel, _ := gramStep{what: "rows", clip: 1, f: f, o: 1, sparseRows: func(b *dpnn.Batch, capacity int, tb []float64) *graphs.CSR {
		a := &graphs.CSR{Rows: capacity, Cols: f, Indptr: make([]int, capacity+1)}
		for r := 0; r < capacity; r++ {
			if r < len(b.Rows) {
				u := b.Rows[r]
				cols, vals := rowsOf(u)
				a.Indices = append(a.Indices, cols...)
				a.Data = append(a.Data, vals...)
				tb[r] = targ[u]
			}
			a.Indptr[r+1] = len(a.Indices)
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("CSR invalid: %v", err)
		}
		return a
	}}.release(t, startExamples(t, start, "rows"))
	return rel
}

// TestSparseDuplicates: one-row examples; example 0's feature row is
// the value d·v in column 0 written as d duplicate entries v (a valid CSR
// per graphs.CSR.Validate, accepted by Sparse.Set). The forward pass and the
// clipped sum (SpMM/SpMMT) add the duplicates; the ghost norm's rowDot
// pairs them one to one: ‖a‖² counted as d·v² instead of d²·v².
func TestSparseDuplicates(t *testing.T) {
	const f = 2
	for _, d := range []int{1, 4, 100, 10000, 1000000} {
		v := 1.0 // true feature value d; ghost norm sees √d
		rowsOf := func(u int) ([]int, []float64) {
			if u == 0 {
				cols, vals := make([]int, d), make([]float64, d)
				for i := range cols {
					vals[i] = v
				}
				return cols, vals
			}
			return []int{0, 1}, []float64{0.1 * float64(u), -0.05 * float64(u)}
		}
		targ := []float64{1, 0.5, -0.5, 0.25}
		a := sparseRelease(t, []int{0, 1, 2, 3, 4}, f, rowsOf, targ)
		// G′: example 0 deleted (its data row kept, its rows empty)
		b := sparseRelease(t, []int{0, 0, 1, 2, 3}, f, func(u int) ([]int, []float64) { return rowsOf(u + 1) }, targ[1:])
		dd := dist(a, b)
		t.Logf("d = %5d duplicates: G %v, G' %v: ‖Δ clipped sum‖ = %.4f (declared 1)", d, a, b, dd)
		if dd > 1+1e-9 {
			t.Errorf("d = %d: one deleted example moved the clipped sum by %.4f > 1", d, dd)
		}
	}
}

// TestSparseUnsorted: two-row examples; example 0's two rows hold the
// same vector (3, 4), row 1's entries written in the order (col 1, col 0).
// rowDot's merge assumes sorted rows and misses the cross term.
func TestSparseUnsorted(t *testing.T) {
	const f = 2
	rowsOf := func(u int) ([]int, []float64) {
		switch u {
		case 0:
			return []int{0, 1}, []float64{3, 4}
		case 1:
			return []int{1, 0}, []float64{4, 3}
		}
		return []int{0, 1}, []float64{0.1 * float64(u), -0.05 * float64(u)}
	}
	targ := []float64{1, 1, 0.5, -0.5, 0.25, 0.75}
	a := sparseRelease(t, []int{0, 2, 4, 6}, f, rowsOf, targ)
	b := sparseRelease(t, []int{0, 0, 2, 4}, f, func(u int) ([]int, []float64) { return rowsOf(u + 2) }, targ[2:])
	dd := dist(a, b)
	t.Logf("unsorted: G %v, G' %v: ‖Δ clipped sum‖ = %.4f (declared 1)", a, b, dd)
	if dd > 1+1e-9 {
		t.Errorf("one deleted example moved the clipped sum by %.4f > 1", dd)
	}
}
