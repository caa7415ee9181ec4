package dpnn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// gramRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over n examples of up to 2 rows declared with Start, a linear layer
// y = x·W (layers.Linear, no bias) and the per-row loss ℓ_r = Σ_j y_rj·T_rj
// (T a batch-rows leaf written by the fill with each row's target). Every
// op is on the whitelist; the fill writes each row with its example's data.
func gramRelease(t *testing.T, start []int, feats, targ []float64, f, o int, bias bool) ([]float64, error) {
	n := len(start) - 1
	x, err := dpnn.NewExamples(n, start, nil, 1, 1, "two rows")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "two rows"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	tin := m.Input("Tb", make([]float64, capacity*o), capacity, o)
	var loss *G.Node
	mustBuild(t, func() error {
		y := recordedLinear(m, "lin", xin, f, o, bias)
		loss = nn.RowSums(G.Must(G.HadamardProd(y, tin)))
		return nil
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	xb, tb := make([]float64, capacity*f), make([]float64, capacity*o)
	fill := func(b *dpnn.Batch) error {
		clear(xb)
		clear(tb)
		for r, u := range b.Rows {
			copy(xb[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			copy(tb[r*o:(r+1)*o], targ[u*o:(u+1)*o])
		}
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		return nn.SetValue(tin, tb)
	}
	return mustScaledRelease(t, "", sgd, cfg, fill), nil
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
		a, errA := gramRelease(t, startG, feats, targ, 1, 1, bias)
		// G′: example 0 deleted (no rows), the others identical
		startG2 := []int{0, 0, 2, 4, 6}
		b, errB := gramRelease(t, startG2, feats[2:], targ[2:], 1, 1, bias)
		within(t, fmt.Sprintf("bias=%v", bias), a, b, errA, errB, 1)
	}
}
