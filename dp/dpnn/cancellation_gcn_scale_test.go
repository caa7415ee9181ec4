package dpnn_test

import (
	"math"
	"testing"
)

// TestCancellationGCNScale: the GCN construction of TestCancellationGCN at
// smaller feature scales (A = 2^k, neighbours (A, 0) and (−A + B, 0)):
// features of the size of Unix timestamps (2^31 ≈ 2.1e9) or of money in
// cents. Reports Δ for both labels of example 0; fails where Δ > 1.
func TestCancellationGCNScale(t *testing.T) {
	for _, k := range []int{24, 28, 31, 34} {
		A := math.Ldexp(1, k)
		for _, bexp := range []int{k - 27, k - 26, k - 25} {
			B := math.Ldexp(1, bexp)
			worst := 0.0
			for _, lab0 := range []int{0, 1} {
				rest := []float64{0.3, 0.1, -0.2, 0.4, 0.5, -0.3, 0.1, 0.2, -0.4, 0.6, 0.7, -0.1, 0.2, 0.2, -0.1, 0.3, 0.4, -0.5}
				featsG := append([]float64{0, 0, A, 0, -A + B, 0}, rest...)
				labels := []int{lab0, 1, 0, 1}
				a, errA := gcnRelease(t, []int{3, 3, 3, 3}, featsG, labels)
				b, errB := gcnRelease(t, []int{0, 3, 3, 3}, rest, labels)
				if errA != nil || errB != nil {
					t.Fatalf("refused: %v / %v", errA, errB)
				}
				worst = math.Max(worst, dist(a, b))
			}
			t.Logf("A = 2^%d (%.3g), B = 2^%d: max over labels ‖Δ clipped sum‖ = %.4f (declared 1)", k, A, bexp, worst)
			if worst > 1+1e-9 {
				t.Errorf("A = 2^%d, B = 2^%d: Δ %.4f > 1", k, bexp, worst)
			}
		}
	}
}
