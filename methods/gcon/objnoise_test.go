package gcon

import (
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
)

func TestSampleObjectiveNoise(t *testing.T) {
	const d, c = 4, 3
	b, err := SampleObjectiveNoise(d, c, 2, dp.NewSource(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != d*c {
		t.Fatalf("len %d, want %d", len(b), d*c)
	}
	// Column j is the j-th GammaNorm draw from the same stream.
	src := dp.NewSource(7)
	for j := 0; j < c; j++ {
		col, err := GammaNorm{Beta: 2, Dim: d}.Sample(src)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < d; r++ {
			if b[r*c+j] != col[r] {
				t.Fatalf("B[%d,%d] = %v, want %v", r, j, b[r*c+j], col[r])
			}
		}
	}
	z, err := SampleObjectiveNoise(d, c, math.Inf(1), dp.NewSource(7))
	if err != nil || slices.ContainsFunc(z, func(v float64) bool { return v != 0 }) {
		t.Fatalf("β = ∞ must give B = 0, got %v (err %v)", z, err)
	}
	if _, err := SampleObjectiveNoise(d, c, 0, dp.NewSource(1)); err == nil {
		t.Error("β = 0 accepted")
	}
	if _, err := SampleObjectiveNoise(0, c, 1, dp.NewSource(1)); err == nil {
		t.Error("d = 0 accepted")
	}
}
