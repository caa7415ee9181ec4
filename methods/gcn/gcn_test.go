package gcn

import (
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testgraphs"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
)

func smallGraph(t *testing.T) *graphs.Graph {
	t.Helper()
	return testgraphs.CSBM(t, graphs.CSBMConfig{Nodes: 40, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 3, "ratio:0.5:0.25", 1)
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

// TestFixedInputEvaluation: with dense features narrower than the hidden
// layer, evaluation from the fixed Â·X gives the logits of the evaluation
// through the training path's layers (in evaluation mode) bit for bit
// after every epoch, and so does the frozen path without it, so training
// selects the same epoch and predicts the same; with features as wide as
// the layer there is no fixed input.
func TestFixedInputEvaluation(t *testing.T) {
	g := testgraphs.CSBM(t, graphs.CSBMConfig{Nodes: 120, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.5}, 3, "ratio:0.3:0.3", 1)
	m := New(Config{Hidden: 16, TrainEpochs: 25, LR: 0.05, Dropout: 0.5})
	var tasks [2]*trainers.ModelTask
	var nets [2]*net
	for k, fixed := range []bool{false, true} {
		n, err := m.buildNet(g, 4, fixed)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.ce.SetRows(g.Split.Train, g.Labels); err != nil {
			t.Fatal(err)
		}
		if fixed != hasFixedInput(n) {
			t.Fatalf("fixed %v: evaluation from a fixed Â·X: %v", fixed, hasFixedInput(n))
		}
		nets[k], tasks[k] = n, n.task(nn.NewAdam(0.05, 0))
	}
	train, err := nets[0].model.NewRunner(nets[0].logits) // the training path, in evaluation mode
	if err != nil {
		t.Fatal(err)
	}
	for ep := 0; ep < 3; ep++ {
		var logits [3][]float64
		for k, task := range tasks {
			if _, err := task.TrainEpoch(); err != nil {
				t.Fatal(err)
			}
			if _, err := task.Predict(); err != nil {
				t.Fatal(err)
			}
			logits[k] = nn.Values(nets[k].eval)
		}
		if err := train.Run(); err != nil {
			t.Fatal(err)
		}
		logits[2] = nn.Values(nets[0].logits)
		for i, v := range logits[2] {
			if math.Float64bits(v) != math.Float64bits(logits[0][i]) || math.Float64bits(v) != math.Float64bits(logits[1][i]) {
				t.Fatalf("epoch %d, logit %d: fixed Â·X %v, frozen path %v, training path %v", ep, i, logits[1][i], logits[0][i], v)
			}
		}
	}
	var res [2]trainers.LoopResult
	for k, task := range tasks {
		var err error
		if res[k], err = trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: 25}); err != nil {
			t.Fatal(err)
		}
	}
	if res[0].BestEpoch != res[1].BestEpoch || res[0].ValAcc != res[1].ValAcc || !slices.Equal(res[0].Pred, res[1].Pred) {
		t.Fatalf("fixed Â·X: best epoch %d, val %v; training path: %d, %v", res[1].BestEpoch, res[1].ValAcc, res[0].BestEpoch, res[0].ValAcc)
	}

	wide := New(Config{Hidden: 6, TrainEpochs: 1, LR: 0.05})
	n, err := wide.buildNet(g, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	if hasFixedInput(n) {
		t.Fatal("features as wide as the layer: evaluation from a fixed Â·X")
	}
}

// hasFixedInput reports whether n's evaluation reads a fixed Â·X.
func hasFixedInput(n *net) bool {
	for _, x := range n.model.G.AllNodes() {
		if x.Name() == "ÂX" {
			return true
		}
	}
	return false
}
