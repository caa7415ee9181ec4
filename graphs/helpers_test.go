package graphs

import (
	"slices"
	"strings"
	"testing"
)

// ---- test helpers shared by the generator/transform/split/norm/stats tests

// tcDense returns the dense row-major matrix of m (duplicates summed).
func tcDense(m *CSR) []float64 {
	d := make([]float64, m.Rows*m.Cols)
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			d[i*m.Cols+m.Indices[k]] += m.Value(k)
		}
	}
	return d
}

// tcCheckCanonical fails unless m validates and has strictly increasing
// column ids in every row.
func tcCheckCanonical(t *testing.T, what string, m *CSR) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("%s: invalid CSR: %v", what, err)
	}
	for i := 0; i < m.Rows; i++ {
		c, _ := m.Row(i)
		for k := 1; k < len(c); k++ {
			if c[k] <= c[k-1] {
				t.Fatalf("%s: row %d not strictly sorted: %v", what, i, c)
			}
		}
	}
}

// tcCheckSymmetricSimple fails unless m is canonical, symmetric and free
// of self-loops.
func tcCheckSymmetricSimple(t *testing.T, what string, m *CSR) {
	t.Helper()
	tcCheckCanonical(t, what, m)
	if !IsSymmetric(m) {
		t.Fatalf("%s: not symmetric", what)
	}
	for i := 0; i < m.Rows; i++ {
		c, _ := m.Row(i)
		if _, ok := slices.BinarySearch(c, i); ok {
			t.Fatalf("%s: self-loop at node %d", what, i)
		}
	}
}

func tcEqualCSR(a, b *CSR) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && slices.Equal(a.Indptr, b.Indptr) &&
		slices.Equal(a.Indices, b.Indices) && slices.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil)
}

func tcDisjoint(sets ...[]int) bool {
	seen := map[int]bool{}
	for _, s := range sets {
		for _, i := range s {
			if seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return true
}

func tcWantErr(t *testing.T, err error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error containing %q, got nil", substrs)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not contain %q", err, s)
		}
	}
}

func tcRange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// tcGraph is a labelled test graph: n nodes with balanced labels of the
// given class count (a seeded permutation of i mod classes), two feature
// columns holding the label and a seeded value, and a seeded random
// symmetric adjacency of about the given average degree, no self-loops.
func tcGraph(n, classes int, avgDegree float64, seed uint64) *Graph {
	r := newSeededRand(seed, 0x74657374) // "test"
	labels := make([]int, n)
	for i, p := range r.Perm(n) {
		labels[p] = i % classes
	}
	var src, dst []int
	for k := 0; k < int(avgDegree*float64(n)/2); k++ {
		if i, j := r.IntN(n), r.IntN(n); i != j {
			src, dst = append(src, i), append(dst, j)
		}
	}
	x := make([]float64, 2*n)
	for i := range n {
		x[2*i], x[2*i+1] = float64(labels[i]), r.NormFloat64()
	}
	return &Graph{Name: "test", N: n, Adj: Symmetrize(FromCOO(n, n, src, dst, nil)), X: &Features{N: n, F: 2, Dense: x},
		Labels: labels, NumClasses: classes}
}
