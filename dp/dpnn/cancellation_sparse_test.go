package dpnn_test

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
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
		n := len(start) - 1
		x, err := dpnn.NewExamples(n, start, nil, 1, 1, "two rows")
		if err != nil {
			t.Fatal(err)
		}
		cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "two rows"}
		capacity := dpnn.RowCapacity(x, cfg.Rate())
		m := nn.NewModel(1)
		xs := nn.NewSparse("Xb", &graphs.CSR{Rows: capacity, Cols: f, Indptr: make([]int, capacity+1)})
		tin := m.Input("Tb", make([]float64, capacity*o), capacity, o)
		var loss *G.Node
		mustBuild(t, func() error {
			lin := layers.NewLinear(m, "lin", f, o, false, layers.InitPyG)
			m.StartRecording()
			y := lin.ForwardSparse(xs)
			m.StopRecording()
			loss = nn.RowSums(G.Must(G.HadamardProd(y, tin)))
			return nil
		})
		sgd, err := dpnn.Private(m, loss, nil, x, cfg, 0, nil, dp.NewSource(1))
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		tb := make([]float64, capacity*o)
		fill := func(b *dpnn.Batch) error {
			clear(tb)
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
			if err := xs.Set(graphs.FromCOO(capacity, f, src, dst, val)); err != nil {
				return err
			}
			return nn.SetValue(tin, tb)
		}
		rel, err := sgd.ReleaseExamples(fill)
		if err != nil {
			t.Fatalf("step: %v", err)
		}
		for i := range rel {
			rel[i] *= float64(n)
		}
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
