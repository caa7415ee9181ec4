package dpnn_test

import (
	"fmt"
	"math"
	"testing"
)

// TestCancellationPooledCrossEntropy: the Gram-form cancellation with the
// stock pieces only — layers.Linear (with bias), the pooling product over
// Examples.Weights (0.5 per row, as leaf_count_pooled_test.go) and
// nn.CrossEntropy — reusing pooledRelease (mode "pooled-none") from
// position_test.go. Example 0's two rows have the features
// (2^41, 0) and (−2^41 + 2^11, 0): its pooled input is 2^10, its logits saturate, and
// with the label the model gets wrong δ = ±(1, −1). Its true W-gradient
// is 0.5·2^11·‖δ‖ ≈ 1448, but GhostNormSq sums 2^81 + (2^81 − 2^52) −
// (2^82 − 2^52) = 0, so only the bias (norm √2) was clipped
// before nn.gramBound; fails where Δ > 1.
func TestCancellationPooledCrossEntropy(t *testing.T) {
	const n, f = 4, 2
	A := math.Ldexp(1, 41)
	for _, lab0 := range []int{0, 1} {
		mk := func(absent0 bool) ([]float64, []int) {
			feats := []float64{}
			if !absent0 {
				feats = append(feats, A, 0, -A+math.Ldexp(1, 11), 0)
			}
			feats = append(feats, 0.3, 0.1, -0.2, 0.4, 0.5, -0.3, 0.1, 0.2, -0.4, 0.6, 0.7, -0.1)
			return feats, []int{lab0, 1, 0, 1}
		}
		fG, lG := mk(false)
		fG2, lG2 := mk(true)
		a, errA := pooledRelease(t, n, f, fG, lG, false, "pooled-none")
		b, errB := pooledRelease(t, n, f, fG2, lG2, true, "pooled-none")
		within(t, fmt.Sprintf("label of example 0 = %d", lab0), a, b, errA, errB, 1)
	}
}
