// Package graphstest holds the small graphs and keys dpgnn's tests build:
// a contextual SBM with a split applied, Chung–Lu power-law graphs with
// hubs, random directed graphs, and reproducible degree-sampling keys. It
// is for tests only; it imports graphs and its subpackages, so graphs' own
// in-package tests cannot use it.
package graphstest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

// CSBM returns gen.CSBM(cfg, seed) with the split spec applied (drawn
// with splitSeed); a bad spec fails t.
func CSBM(t testing.TB, cfg gen.CSBMConfig, seed uint64, spec string, splitSeed uint64) *graphs.Graph {
	t.Helper()
	s, err := graphs.ParseSplit(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graphs.ApplySplit(gen.CSBM(cfg, seed), s, splitSeed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Key is a reproducible degree-sampling key for seed s (tests only: a
// mechanism draws its key from its noise source with degree.NewKey).
func Key(s uint64) degree.Key {
	var k degree.Key
	r := rand.New(rand.NewPCG(s, 77))
	for i := range k {
		k[i] = byte(r.Uint32())
	}
	return k
}

// PowerLaw is a Chung–Lu graph on n nodes with expected degrees
// ∝ (i+1)^(−1/(γ−1)), scaled to the given mean (hubs of degree ≫ mean,
// the low ids): symmetric, unweighted, no self-loops.
func PowerLaw(n int, gamma, mean float64, seed uint64) *graphs.CSR {
	r := rand.New(rand.NewPCG(seed, 91))
	w := make([]float64, n)
	sum := 0.0
	for i := range w {
		w[i] = math.Pow(float64(i+1), -1/(gamma-1))
		sum += w[i]
	}
	scale := mean * float64(n) / sum
	for i := range w {
		w[i] *= scale
	}
	var src, dst []int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < math.Min(1, w[i]*w[j]/(mean*float64(n))) {
				src, dst = append(src, i, j), append(dst, j, i)
			}
		}
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

// RandomDirected is a directed graph on n nodes with every ordered pair
// i ≠ j an edge with probability p, unweighted.
func RandomDirected(n int, p float64, seed uint64) *graphs.CSR {
	r := rand.New(rand.NewPCG(seed, 93))
	var src, dst []int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && r.Float64() < p {
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

// Equal reports whether a and b store the same matrix the same way
// (shape, row pointers, columns, values, and whether values are stored).
func Equal(a, b *graphs.CSR) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && slices.Equal(a.Indptr, b.Indptr) &&
		slices.Equal(a.Indices, b.Indices) && slices.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil)
}

// CheckCanonical fails t unless m is a valid CSR whose rows are strictly
// sorted.
func CheckCanonical(t testing.TB, what string, m *graphs.CSR) {
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

// Immutable fails t if f changes a.
func Immutable(t testing.TB, what string, a *graphs.CSR, f func()) {
	t.Helper()
	before := a.Clone()
	f()
	if !Equal(before, a) {
		t.Fatalf("%s mutated its input", what)
	}
}

// WantErr fails t unless err is non-nil and its text contains every one of
// substrs.
func WantErr(t testing.TB, err error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil error, want one containing %q", substrs)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not contain %q", err, s)
		}
	}
}

// Row returns a copy of row i's columns.
func Row(m *graphs.CSR, i int) []int {
	c, _ := m.Row(i)
	return append([]int(nil), c...)
}

// Range returns 0, 1, ..., n−1.
func Range(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// Disjoint reports whether no id occurs twice across the sets.
func Disjoint(sets ...[]int) bool {
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

// CheckSymmetricSimple fails t unless m is canonical, symmetric and free
// of self-loops.
func CheckSymmetricSimple(t testing.TB, what string, m *graphs.CSR) {
	t.Helper()
	CheckCanonical(t, what, m)
	if !graphs.IsSymmetric(m) {
		t.Fatalf("%s: not symmetric", what)
	}
	for i := 0; i < m.Rows; i++ {
		c, _ := m.Row(i)
		if _, ok := slices.BinarySearch(c, i); ok {
			t.Fatalf("%s: self-loop at node %d", what, i)
		}
	}
}
