package dpnn_test

// The tenth outside audit of issue 38: the layout check writes synthetic
// data in [−1, 1) (and [−1000, 1000) in training mode) into every batch
// input, so a legitimate row-local model defined only on its data's
// domain — log(1 + x) or sqrt(x) of features that are non-negative in
// every real batch — got NaN norms there and was refused with a message
// blaming the whitelist. A non-finite norm now counts as equal to itself
// (its example is clipped out, factor 0, and adds exactly 0).

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

func TestLayoutCheckAcceptsModelsOfNonNegativeData(t *testing.T) {
	const n, f = 6, 3
	for _, kind := range []string{"relu", "log", "sqrt"} {
		x, err := dpnn.OneRow(n, 1, 1, "row")
		if err != nil {
			t.Fatal(err)
		}
		cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
		capacity := dpnn.RowCapacity(x, cfg.Rate())
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
		var ce *nn.CrossEntropy
		err = nn.Build(func() error {
			l := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
			var h *G.Node
			switch kind {
			case "relu":
				h = nn.ReLU(xin)
			case "log":
				h = G.Must(G.Log(G.Must(G.Add(xin, G.NewConstant(1.0))))) // log(1 + x), x ≥ 0 in real data
			case "sqrt":
				h = G.Must(G.Sqrt(xin))
			}
			m.StartRecording()
			y := l.Forward(h)
			m.StopRecording()
			var err error
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
		t.Logf("%s: Private → %v", kind, err)
		if err != nil {
			t.Errorf("legitimate row-local model (%s of non-negative features) refused by the layout check: %v", kind, err)
		}
	}
}
