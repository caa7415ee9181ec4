package dpnn_test

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
)

// TestGramUnderflow: gramBound's error model (|fl(x·y) − x·y| ≤
// γ_n·Σ|xᵢyᵢ|) holds only without underflow. One-row examples, y = x·W (no
// bias, in = 2^20 features, 1 output), per-row loss y·T (T a batch leaf).
// Example 0: every feature 2^-537.5 (inside graphs.CheckFeatureRange: tiny
// values are public-range), T = 2^511.9. Each xᵢ² is below half the
// smallest subnormal, so ‖x‖² computes as 0, the ghost norm as 0, and the
// clip factor as min(1, C/1e-6); the true gradient norm is
// 2^10·2^-537.5·2^511.9 ≈ 2.0e-5.
func TestGramUnderflow(t *testing.T) {
	const in = 1 << 20
	tiny := math.Ldexp(math.Sqrt2, -538) * (1 - 1e-12) // < 2^-537.5
	big := math.Ldexp(1, 511) * math.Pow(2, 0.9)
	if tiny*tiny != 0 {
		t.Fatalf("tiny² = %g, want 0", tiny*tiny)
	}
	for _, clip := range []float64{1e-6, 1e-7, 1e-5} {
		release := func(start []int, feat func(u int) []float64, targ []float64) []float64 {
			rel, sgd := gramStep{what: "row", clip: clip, f: in, o: 1, rows: func(b *dpnn.Batch, xb, tb []float64) {
				for r, u := range b.Rows {
					copy(xb[r*in:(r+1)*in], feat(u))
					tb[r] = targ[u]
				}
			}}.release(t, startExamples(t, start, "row"))
			t.Logf("C = %g: per-sample norm² (computed) %v", clip, nn.Values(sgd.NormSq)[:len(start)-1])
			return rel
		}
		row0 := make([]float64, in)
		for i := range row0 {
			row0[i] = tiny
		}
		other := make([]float64, in)
		other[0], other[1] = 1e-7, -2e-7
		feat := func(u int) []float64 {
			if u == 0 {
				return row0
			}
			return other
		}
		targ := []float64{big, 1, -1, 0.5}
		a := release([]int{0, 1, 2, 3, 4}, feat, targ)
		b := release([]int{0, 0, 1, 2, 3}, func(u int) []float64 { return feat(u + 1) }, targ[1:])
		d := dist(a, b)
		t.Logf("C = %g: ‖Δ clipped sum‖ = %.4g = %.2f·C (declared 1·C)", clip, d, d/clip)
		if d > clip*(1+1e-9) {
			t.Errorf("C = %g: one deleted example moved the clipped sum by %.2f·C", clip, d/clip)
		}
	}
}
