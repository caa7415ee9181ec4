package gap

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/spf13/pflag"
)

func newGAP(t *testing.T, args ...string) *GAP {
	t.Helper()
	m := &GAP{}
	fs := pflag.NewFlagSet("gap", pflag.ContinueOnError)
	m.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGAPRunsAtEveryLevelWithinBudget trains GAP briefly at each level on
// a small graph: the privacy report's ε stays within the budget, the noise
// is there, and the method learns something (well above the 1/3 chance of
// three classes).
func TestGAPRunsAtEveryLevelWithinBudget(t *testing.T) {
	g := graphs.CSBM(graphs.CSBMConfig{Nodes: 300, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.9, Signal: 1.5}, 5)
	spec, _ := graphs.ParseSplit("ratio:0.5:0.25")
	g, err := graphs.ApplySplit(g, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		level methods.Level
		eps   float64
		min   float64
	}{{methods.Edge, 8, 0.6}, {methods.Node, 8, 0.4}} {
		t.Run(string(tc.level), func(t *testing.T) {
			m := newGAP(t, "--hops", "2", "--epochs", "20", "--encoder-epochs", "20", "--batch-size", "32", "--max-degree", "5")
			out, err := m.Run(&methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			p := out.Privacy
			if p == nil || p.Epsilon == nil || *p.Epsilon > tc.eps || p.Noise["multiplier"] <= 0 {
				t.Fatalf("privacy report %+v", p)
			}
			ok := 0
			for _, i := range g.Split.Test {
				if out.Pred[i] == g.Labels[i] {
					ok++
				}
			}
			if acc := float64(ok) / float64(len(g.Split.Test)); acc < tc.min {
				t.Fatalf("test accuracy %.3f, want ≥ %.2f", acc, tc.min)
			}
		})
	}
}
