package layers

import (
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
)

// A batch filled by sample index after From(rows) holds the same rows, in
// the same order, as one filled by node with the whole matrix, for dense
// and sparse (weighted) features.
func TestFeatureBatchFrom(t *testing.T) {
	const n, f = 9, 3
	dense := make([]float64, n*f)
	for i := range dense {
		dense[i] = float64(i) + 0.5
	}
	var src, dst []int
	var vals []float64
	for i := range n {
		for j := range f {
			if (i+j)%2 == 0 {
				src, dst, vals = append(src, i), append(dst, j), append(vals, float64(10*i+j))
			}
		}
	}
	sparse := &graphs.Features{N: n, F: f, Sparse: graphs.FromCOO(n, f, src, dst, vals)}
	rows := []int{7, 2, 5, 0, 8}
	samples := []int{3, 1, 4, 1} // rows 0, 2, 8, 2
	nodes := []int{0, 2, 8, 2}
	for _, x := range []*graphs.Features{{N: n, F: f, Dense: dense}, sparse} {
		m := nn.NewModel(1)
		whole, err := NewFeatureBatch(m, x, 6, "whole")
		if err != nil {
			t.Fatal(err)
		}
		part, err := NewFeatureBatch(m, x, 6, "part")
		if err != nil {
			t.Fatal(err)
		}
		part.From(rows)
		part.From(rows) // From selects from the whole matrix each time
		if err := whole.Fill(nodes); err != nil {
			t.Fatal(err)
		}
		if err := part.Fill(samples); err != nil {
			t.Fatal(err)
		}
		if x.Sparse != nil {
			a, b := whole.Sparse.A, part.Sparse.A
			if !slices.Equal(a.Indptr, b.Indptr) || !slices.Equal(a.Indices, b.Indices) || !slices.Equal(a.Data, b.Data) {
				t.Fatalf("sparse batches differ: %+v against %+v", b, a)
			}
			continue
		}
		if a, b := nn.Values(whole.Dense), nn.Values(part.Dense); !slices.Equal(a, b) {
			t.Fatalf("dense batches differ: %v against %v", b, a)
		}
	}
}
