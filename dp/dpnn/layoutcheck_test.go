package dpnn_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// underRule is LinearWeight with its norm reported a tenth of the truth:
// the clip factor then lets the example's gradient reach 10·C.
type underRule struct{ nn.LinearWeight }

func (r underRule) NormSq(delta *G.Node, groups *nn.RowGroups, name string) (*G.Node, error) {
	n, err := r.LinearWeight.NormSq(delta, groups, name)
	if err != nil {
		return nil, err
	}
	return G.Mul(n, G.NewConstant(0.01))
}
func (underRule) String() string { return "under-reporting linear (wrong)" }

// A per-sample rule an author registers (Model.Record) that under-reports
// its parameter's norm passes the row-locality check, which cannot see a
// rule's arithmetic; the construction's layout check runs the step and
// refuses it: one example's clipped gradient would exceed C.
func TestPrivateRefusesAnUnderReportingRule(t *testing.T) {
	const n, f = 6, 3
	for _, wrong := range []bool{false, true} {
		x, err := dpnn.OneRow(n, 1, 1, "row")
		if err != nil {
			t.Fatal(err)
		}
		cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1e-3, What: "row"}
		capacity := dpnn.RowCapacity(x, cfg.Rate())
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
		var ce *nn.CrossEntropy
		mustBuild(t, func() error {
			l := layers.NewLinear(m, "lin", f, 2, false, layers.InitPyG)
			m.StartRecording()
			var y *G.Node
			if wrong {
				y = m.Record(nn.MatMul(xin, l.W.Node), l.W, underRule{nn.LinearWeight{Input: xin}})
			} else {
				y = m.Record(nn.MatMul(xin, l.W.Node), l.W, nn.LinearWeight{Input: xin})
			}
			m.StopRecording()
			var err error
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		_, err = dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
		switch {
		case !wrong && err != nil:
			t.Fatalf("the true rule was refused: %v", err)
		case wrong && (err == nil || !strings.Contains(err.Error(), "under-reports")):
			t.Fatalf("want the under-reporting rule refused, got %v", err)
		}
	}
}
