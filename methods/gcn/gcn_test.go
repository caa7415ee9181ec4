package gcn

import (
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
)

func smallGraph(t *testing.T) *graphs.Graph {
	t.Helper()
	return graphstest.CSBM(t, gen.CSBMConfig{Nodes: 40, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 3, "ratio:0.5:0.25", 1)
}

func TestGCNGradCheck(t *testing.T) {
	g := smallGraph(t)
	m := New(Config{Hidden: 5, TrainEpochs: 1, LR: 0.01, Dropout: 0.5})
	n, err := m.buildNet(g, 1, paths{fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	if n.train == nil {
		t.Fatal("the loss reads every node: the gradient check should cover the training rows' path")
	}
	if err := n.setTrain(g); err != nil {
		t.Fatal(err)
	}
	res, err := n.model.GradCheck(1e-4, 0)
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
// through the training path's layers (in evaluation mode: the training
// nodes' rows) bit for bit after every epoch, and so does the frozen path
// without it; the monitoring path's rows are the all-nodes path's; so
// training selects the same epoch and predicts the same. With features as
// wide as the layer there is no fixed input.
func TestFixedInputEvaluation(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.5}, 3, "ratio:0.3:0.3", 1)
	m := New(Config{Hidden: 16, TrainEpochs: 25, LR: 0.05, Dropout: 0.5})
	watch := run.WatchRows(g.Split, g.N, false)
	var tasks [2]*trainers.ModelTask
	var nets [2]*net
	for k, fixed := range []bool{false, true} {
		n, err := m.buildNet(g, 4, paths{fixed: fixed, watch: watch})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.setTrain(g); err != nil {
			t.Fatal(err)
		}
		if fixed != hasFixedInput(n) {
			t.Fatalf("fixed %v: evaluation from a fixed Â·X: %v", fixed, hasFixedInput(n))
		}
		if !slices.Equal(n.train, slices.Sorted(slices.Values(g.Split.Train))) || n.watch == n.all {
			t.Fatalf("the loss reads rows %v, the monitoring its own path %v", n.train, n.watch != n.all)
		}
		nets[k], tasks[k] = n, n.task(nn.NewAdam(0.05, 0))
	}
	train, err := nets[0].model.NewRunner(nets[0].logits) // the training path, in evaluation mode
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	c := g.NumClasses
	for ep := 0; ep < 3; ep++ {
		var logits [2][]float64
		for k, task := range tasks {
			if _, err := task.TrainEpoch(); err != nil {
				t.Fatal(err)
			}
			if _, err := task.MonitorPredict(); err != nil {
				t.Fatal(err)
			}
			watched := slices.Clone(nn.Values(nets[k].watch.Logits()))
			if _, err := task.Predict(); err != nil {
				t.Fatal(err)
			}
			logits[k] = nn.Values(nets[k].all.Logits())
			for r, i := range watch {
				for j := 0; j < c; j++ {
					if !same(watched[r*c+j], logits[k][i*c+j]) {
						t.Fatalf("epoch %d, node %d: monitored logit %v, all-nodes path %v", ep, i, watched[r*c+j], logits[k][i*c+j])
					}
				}
			}
		}
		if err := train.Run(); err != nil {
			t.Fatal(err)
		}
		for i := range logits[0] {
			if !same(logits[0][i], logits[1][i]) {
				t.Fatalf("epoch %d, logit %d: fixed Â·X %v, frozen path %v", ep, i, logits[1][i], logits[0][i])
			}
		}
		for r, i := range nets[0].train {
			for j := 0; j < c; j++ {
				if v := nn.Values(nets[0].logits)[r*c+j]; !same(v, logits[0][i*c+j]) {
					t.Fatalf("epoch %d, node %d: training path %v, frozen path %v", ep, i, v, logits[0][i*c+j])
				}
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
	n, err := wide.buildNet(g, 4, paths{fixed: true})
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

// TestTrainingRowsPath: the training path over just the training nodes'
// rows (the loss, its last sparse product and their gradients) trains the
// model of the path over every node bit for bit, epoch after epoch, and
// gives the same loss up to the order of its sum.
func TestTrainingRowsPath(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 150, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.5}, 3, "ratio:0.2:0.3", 1)
	m := New(Config{Hidden: 8, TrainEpochs: 1, LR: 0.05, WeightDecay: 5e-4, Dropout: 0.5})
	var tasks [2]*trainers.ModelTask
	var nets [2]*net
	for k, all := range []bool{false, true} {
		n, err := m.buildNet(g, 9, paths{fixed: true, lossAll: all})
		if err != nil {
			t.Fatal(err)
		}
		if (n.train == nil) != all || (n.hidden == nil) != all {
			t.Fatalf("lossAll %v: training rows %v, hidden rows %v", all, n.train, n.hidden)
		}
		if err := n.setTrain(g); err != nil {
			t.Fatal(err)
		}
		nets[k], tasks[k] = n, n.task(nn.NewAdam(0.05, 5e-4))
	}
	for ep := 0; ep < 5; ep++ {
		var loss [2]float64
		for k, task := range tasks {
			var err error
			if loss[k], err = task.TrainEpoch(); err != nil {
				t.Fatal(err)
			}
		}
		if math.Abs(loss[0]-loss[1]) > 1e-12*math.Abs(loss[1]) {
			t.Fatalf("epoch %d: loss %v over the training rows, %v over every node", ep, loss[0], loss[1])
		}
		for p, v := range nets[1].model.ParamValues() {
			w := nets[0].model.ParamValues()[p]
			for i := range v {
				if !(math.Float64bits(v[i]) == math.Float64bits(w[i])) {
					t.Fatalf("epoch %d, parameter %d[%d]: %v over the training rows, %v over every node", ep, p, i, w[i], v[i])
				}
			}
		}
	}
}
