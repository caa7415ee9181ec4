package gcn

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

func smallGraph(t *testing.T) *graphs.Graph {
	t.Helper()
	g := graphs.CSBM(graphs.CSBMConfig{Nodes: 40, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 3)
	spec, _ := graphs.ParseSplit("ratio:0.5:0.25")
	g, err := graphs.ApplySplit(g, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGCNGradCheck(t *testing.T) {
	g := smallGraph(t)
	m := New(Config{Hidden: 5, TrainEpochs: 1, LR: 0.01, Dropout: 0.5, NormFeatures: true})
	model, _, ce, err := m.Build(g, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ce.SetRows(g.Split.Train, g.Labels); err != nil {
		t.Fatal(err)
	}
	res, err := model.GradCheck(1e-4, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.MaxRel > 1e-6 {
			t.Errorf("%s: relative error %.3g", r.Param, r.MaxRel)
		}
	}
}
