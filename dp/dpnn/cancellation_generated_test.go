package dpnn_test

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
)

// TestCancellationGenerated: the Gram cancellation in the generated shape
// (Examples.Generated, ASGL's): each example's 2 rows are loaded and
// tagged by the fill. y = x·W (layers.Linear, no bias), loss Σ_j y_rj·T_rj.
// Example 0 (present on G only; on G′ the fill loads no rows for it):
// features 2^40, 2^40, targets 1, −(1 − 2^−30).
func TestCancellationGenerated(t *testing.T) {
	const n, f = 4, 2
	A, eta := math.Ldexp(1, 40), math.Ldexp(1, -30)
	feats := [][]float64{{A, 0, A, 0}, {0.3, 0.1, -0.2, 0.4}, {0.5, -0.3, 0.1, 0.2}, {-0.4, 0.6, 0.7, -0.1}}
	targ := [][]float64{{1, -(1 - eta)}, {0.5, -0.5}, {0.25, 0.75}, {-1, 0.2}}
	release := func(drop0 bool) []float64 {
		x, err := dpnn.GeneratedExamples(n, 2, 1, 1, "generated")
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := gramStep{what: "generated", clip: 1, f: f, o: 1, rows: func(b *dpnn.Batch, xb, tb []float64) {
			r := 0
			for k, e := range b.Examples {
				if e == 0 && drop0 {
					continue
				}
				for q := 0; q < 2; q++ {
					copy(xb[r*f:(r+1)*f], feats[e][q*f:(q+1)*f])
					tb[r] = targ[e][q]
					b.Tags.Of[r] = k
					r++
				}
			}
		}}.release(t, x)
		return rel
	}
	a, b := release(false), release(true)
	d := dist(a, b)
	t.Logf("generated: G %v, G' %v: ‖Δ clipped sum‖ = %.4f (declared 1)", a, b, d)
	if d > 1+1e-9 {
		t.Errorf("one removed example moved the clipped sum by %.4f > 1", d)
	}
}
