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

// underRule is LinearWeight with a norm that under-reports the truth:
// "tenth" a tenth of it everywhere; "dropnorm" (the tenth outside audit)
// the norm of a dropout of the input at p = 0.999, exact in evaluation
// and about 0 in training; "clampnorm" (the same audit) the norm of the
// input clamped to [−1, 1], exact on small data only. Each lets an
// example's clipped gradient exceed C (2,117·C and 108·C were shown).
type underRule struct {
	nn.LinearWeight
	m    *nn.Model
	kind string
}

func (r underRule) NormSq(delta *G.Node, groups *nn.RowGroups, name string) (*G.Node, error) {
	a := r.Input
	switch r.kind {
	case "tenth":
		n, err := r.LinearWeight.NormSq(delta, groups, name)
		if err != nil {
			return nil, err
		}
		return G.Mul(n, G.NewConstant(0.01))
	case "dropnorm":
		a = r.m.Dropout(a, 0.999)
	case "clampnorm":
		one := G.NewConstant(1.0)
		hi := nn.ReLU(G.Must(G.Sub(a, one)))
		lo := nn.ReLU(G.Must(G.Sub(G.Must(G.Neg(a)), one)))
		a = G.Must(G.Add(G.Must(G.Sub(a, hi)), lo))
	}
	return nn.GhostNormSq(a, delta, groups, name)
}
func (r underRule) String() string { return "under-reporting linear (" + r.kind + ", wrong)" }

// A per-sample rule an author registers (Model.Record) that under-reports
// its parameter's norm passes the row-locality check, which cannot see a
// rule's arithmetic; the construction's layout check runs the step alone
// per example, in evaluation mode on small data and in training mode on
// large data, and refuses each: one example's clipped gradient would
// exceed C.
func TestPrivateRefusesAnUnderReportingRule(t *testing.T) {
	const n, f = 6, 3
	for _, kind := range []string{"", "tenth", "dropnorm", "clampnorm"} {
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
			var rule nn.PerSampleRule = nn.LinearWeight{Input: xin}
			if kind != "" {
				rule = underRule{nn.LinearWeight{Input: xin}, m, kind}
			}
			y := m.Record(nn.MatMul(xin, l.W.Node), l.W, rule)
			m.StopRecording()
			var err error
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		_, err = dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
		switch {
		case kind == "" && err != nil:
			t.Fatalf("the true rule was refused: %v", err)
		case kind != "" && (err == nil || !strings.Contains(err.Error(), "under-reports")):
			t.Errorf("%s: want the under-reporting rule refused, got %v", kind, err)
		}
	}
}
