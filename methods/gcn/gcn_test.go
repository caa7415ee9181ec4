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

// TestGCNGradCheck: the training path over the rows its loss reaches
// (both layers restricted) has the gradients of finite differences.
func TestGCNGradCheck(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 60, Classes: 3, Features: 6, AvgDegree: 3, Homophily: 0.8, Signal: 1}, 3, "ratio:0.15:0.25", 1)
	m := New(Config{Hidden: 5, TrainEpochs: 1, LR: 0.01, Dropout: 0.5})
	n, err := m.buildNet(g, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.train.Rows[0] == nil || n.train.Rows[1] == nil {
		t.Fatalf("layer rows %d and %d of %d: the gradient check should cover the restricted path", len(n.train.Rows[0]), len(n.train.Rows[1]), g.N)
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

// TestEvaluationPaths: after every epoch, the monitoring path's logits are
// the all-nodes path's at the monitored nodes, and the training path's (in
// evaluation mode) at the training nodes, bit for bit — with the
// monitoring path's first layer over every node and over the rows its
// nodes reach; evaluation starts from a fixed Â·X exactly when the
// features are dense and narrower than the hidden layer.
func TestEvaluationPaths(t *testing.T) {
	dense := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.5}, 3, "ratio:0.3:0.3", 1)
	sparseVal := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 400, Classes: 3, Features: 6, AvgDegree: 3, Homophily: 0.8, Signal: 0.5}, 3, "ratio:0.1:0.8", 1)
	for _, c := range []struct {
		name            string
		g               *graphs.Graph
		hidden          int
		withTrain       bool
		restrictedWatch bool // the monitoring path's first layer computes some rows only
	}{
		{"fixed Â·X", dense, 16, true, false},
		{"wide features", dense, 6, true, false},
		{"few monitored nodes, fixed Â·X", sparseVal, 16, false, true},
		{"few monitored nodes, wide features", sparseVal, 4, false, true},
	} {
		g := c.g
		m := New(Config{Hidden: c.hidden, TrainEpochs: 25, LR: 0.05, Dropout: 0.5})
		watch := run.WatchRows(g.Split, g.N, c.withTrain)
		n, err := m.buildNet(g, 4, watch)
		if err != nil {
			t.Fatal(err)
		}
		if n.fixed != (c.hidden > g.X.F) || n.fixed != hasNode(n, "Â.eval·X") {
			t.Fatalf("%s: fixed %v, fixed Â·X node %v", c.name, n.fixed, hasNode(n, "Â.eval·X"))
		}
		if n.watch == n.all || n.train.Out() == nil || hasNode(n, "SpMM(Â.eval[0])") != (c.restrictedWatch && !n.fixed) ||
			hasNode(n, "Â.eval[0]·X") != (c.restrictedWatch && n.fixed) {
			t.Fatalf("%s: the monitoring path is the all-nodes path, the loss reads every node, or the monitoring path's first layer is not as planned", c.name)
		}
		task := n.task(nn.NewAdam(0.05, 0))
		train, err := n.model.NewRunner(n.logits) // the training path, in evaluation mode
		if err != nil {
			t.Fatal(err)
		}
		k := g.NumClasses
		check := func(what string, got []float64, rows []int, all []float64) {
			t.Helper()
			for r, i := range rows {
				for j := range k {
					if math.Float64bits(got[r*k+j]) != math.Float64bits(all[i*k+j]) {
						t.Fatalf("%s, node %d: %s logit %v, all-nodes path %v", c.name, i, what, got[r*k+j], all[i*k+j])
					}
				}
			}
		}
		for range 3 {
			if _, err := task.TrainEpoch(); err != nil {
				t.Fatal(err)
			}
			if _, err := task.MonitorPredict(); err != nil {
				t.Fatal(err)
			}
			watched := slices.Clone(nn.Values(n.watch.Logits()))
			if _, err := task.Predict(); err != nil {
				t.Fatal(err)
			}
			if err := train.Run(); err != nil {
				t.Fatal(err)
			}
			all := nn.Values(n.all.Logits())
			check("monitored", watched, watch, all)
			check("training path", nn.Values(n.logits), n.train.Out(), all)
		}
	}
}

// hasNode reports whether n's model has a node named name (an input) or
// whose op is name.
func hasNode(n *net, name string) bool {
	for _, x := range n.model.G.AllNodes() {
		if x.Name() == name || x.Op() != nil && x.Op().String() == name {
			return true
		}
	}
	return false
}

// TestInference: the trained model's query over its own graph with its
// own features gives the posteriors of the final prediction; over another
// graph (a subgraph) it gives a distribution per node; features of the
// wrong width are refused.
func TestInference(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 90, Classes: 3, Features: 5, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 3, "ratio:0.3:0.3", 1)
	m := New(Config{Hidden: 8, TrainEpochs: 10, LR: 0.05, Dropout: 0.5})
	n, err := m.buildNet(g, 2, run.WatchRows(g.Split, g.N, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trainers.FullBatch(n.task(nn.NewAdam(0.05, 0)), g.Labels, g.Split, trainers.LoopConfig{Epochs: 10}); err != nil {
		t.Fatal(err)
	}
	want := run.Softmax(nn.Values(n.all.Logits()), g.N, g.NumClasses)
	on := n.inference(g.X)
	inf, err := on(g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inf.Query(g.X)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
		t.Fatal("the query over the training graph differs from the final prediction")
	}
	if _, err := inf.Query(&graphs.Features{N: g.N, F: g.X.F + 1, Dense: make([]float64, g.N*(g.X.F+1))}); err == nil {
		t.Fatal("features of the wrong width accepted")
	}
	nodes := graphstest.Range(40)
	sub, _ := graphs.InducedSubgraph(g, nodes)
	inf, err = on(sub)
	if err != nil {
		t.Fatal(err)
	}
	p, err := inf.Query(sub.X)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != sub.N*g.NumClasses {
		t.Fatalf("%d posteriors for %d nodes", len(p), sub.N)
	}
	for i := range sub.N {
		s := 0.0
		for _, v := range p[i*g.NumClasses : (i+1)*g.NumClasses] {
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("node %d: posteriors sum to %v", i, s)
		}
	}
}
