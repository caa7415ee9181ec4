package dpnn_test

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
)

// TestCancellationSparse: the cancellation through GhostNormSqSparse (a
// LinearWeight with a sparse feature batch: layers.Linear.ForwardSparse, as
// sagemlp's encoder): 2-row examples declared with Start, per-row loss
// Σ_j y_rj·T_rj (T a batch leaf). Example 0: feature rows 2^40, 2^40 and
// targets 1, −(1 − 2^−30): true gradient 2^10, Gram form 0 (unclipped before
// nn.gramBound); fails where Δ > 1.
func TestCancellationSparse(t *testing.T) {
	const f, o = 2, 1
	A, eta := math.Ldexp(1, 40), math.Ldexp(1, -30)
	release := func(start []int, feats, targ []float64) []float64 {
		rel, _ := gramStep{what: "two rows", clip: 1, f: f, o: o, sparseRows: func(b *dpnn.Batch, capacity int, tb []float64) *graphs.CSR {
			var src, dst []int
			var val []float64
			for r, u := range b.Rows {
				for j := 0; j < f; j++ {
					if v := feats[u*f+j]; v != 0 {
						src, dst, val = append(src, r), append(dst, j), append(val, v)
					}
				}
				tb[r] = targ[u]
			}
			return graphs.FromCOO(capacity, f, src, dst, val)
		}}.release(t, startExamples(t, start, "two rows"))
		return rel
	}
	feats := []float64{A, 0, A, 0, 0.3, 0.1, -0.2, 0.4, 0.5, -0.3, 0.1, 0.2, -0.4, 0.6, 0.7, -0.1}
	targ := []float64{1, -(1 - eta), 0.5, -0.5, 0.25, 0.75, -1, 0.2}
	a := release([]int{0, 2, 4, 6, 8}, feats, targ)
	b := release([]int{0, 0, 2, 4, 6}, feats[4:], targ[2:])
	d := dist(a, b)
	t.Logf("sparse input: ‖Δ clipped sum‖ = %.4f (declared 1)", d)
	if d > 1+1e-9 {
		t.Errorf("one deleted example moved the clipped sum by %.4f > 1", d)
	}
}
