package dpnn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
)

// gramRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over n examples of up to 2 rows declared with Start, a linear layer
// y = x·W (layers.Linear, no bias) and the per-row loss ℓ_r = Σ_j y_rj·T_rj
// (T a batch-rows leaf written by the fill with each row's target). Every
// op is on the whitelist; the fill writes each row with its example's data.
func gramRelease(t *testing.T, start []int, feats, targ []float64, f, o int, bias bool) []float64 {
	rel, _ := gramStep{what: "two rows", clip: 1, f: f, o: o, bias: bias, rows: func(b *dpnn.Batch, xb, tb []float64) {
		for r, u := range b.Rows {
			copy(xb[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			copy(tb[r*o:(r+1)*o], targ[u*o:(u+1)*o])
		}
	}}.release(t, startExamples(t, start, "two rows"))
	return rel
}

// TestCancellationLinear: example 0 has two rows with the same feature
// A = 2^40 and targets 1 and −(1 − 2^−30): its gradient on W is
// A·(1 − (1 − 2^−30)) = 2^10, but GhostNormSq's Gram form
// A²·1 + A²·(1−2^−30)² − 2·A²·(1−2^−30) rounds to exactly 0, so the clip
// factor was min(1, C/(0 + 1e-6)) = 1 and the example's clipped gradient had
// norm 1024 for C = 1, before the norm became a float64 upper bound
// (nn.gramBound); the test fails where Δ > 1. G′ = G without example 0 (it keeps its id, no rows).
func TestCancellationLinear(t *testing.T) {
	A := math.Ldexp(1, 40)
	eta := math.Ldexp(1, -30)
	for _, bias := range []bool{false, true} {
		// rows: example 0 = rows 0,1; examples 1..3 = rows 2..7 (benign)
		feats := []float64{A, A, 0.3, -0.2, 0.5, 0.1, -0.4, 0.7}
		targ := []float64{1, -(1 - eta), 0.5, -0.5, 0.25, 0.75, -1, 0.2}
		startG := []int{0, 2, 4, 6, 8}
		a := gramRelease(t, startG, feats, targ, 1, 1, bias)
		// G′: example 0 deleted (no rows), the others identical
		startG2 := []int{0, 0, 2, 4, 6}
		b := gramRelease(t, startG2, feats[2:], targ[2:], 1, 1, bias)
		checkWithin(t, fmt.Sprintf("bias=%v", bias), a, b, 1) // a refusal fails the test in the step
	}
}
