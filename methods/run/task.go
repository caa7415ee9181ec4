package run

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// Task is what a method is trained and evaluated for: which datasets suit
// it, how a run's graph is split, and which metrics a run's outcome gives.
// A method names its task by implementing Tasked; without it the task is
// node classification.
type Task interface {
	Name() string
	// Check reports whether dataset g suits the task.
	Check(g *graphs.Graph) error
	// NodeSplit reports whether runs on g draw a node split (--split).
	NodeSplit(g *graphs.Graph) bool
	// Prepare finishes a run's graph (after its node split, if any), e.g.
	// holding out test edges; seed is the run's.
	Prepare(g *graphs.Graph, seed uint64) (*graphs.Graph, error)
	// Metrics are a run's measurements (test, validation, training).
	Metrics(g *graphs.Graph, out *methods.Outcome) (map[string]float64, error)
	// Evaluation says what private data the metrics read (for the report).
	Evaluation() string
}

// SplitRecorder is a task whose runs are not split (only) by the node
// split --split names: one that holds out edges. SplitRecord checks the
// --split text given ("" when none was) against what the task does on g,
// and returns what a record states as the runs' split, so the record
// names the split that ran: spec is the parsed node split (the given one,
// or the method's default).
type SplitRecorder interface {
	SplitRecord(g *graphs.Graph, given string, spec graphs.SplitSpec) (string, error)
}

// SplitRecord is what a record states as the split of task's runs on g:
// the task's own (SplitRecorder) or the node split spec. given is --split
// as typed ("" when none was), checked by a SplitRecorder.
func SplitRecord(task Task, g *graphs.Graph, given string, spec graphs.SplitSpec) (string, error) {
	if r, ok := task.(SplitRecorder); ok {
		return r.SplitRecord(g, given, spec)
	}
	return spec.String(), nil
}

// edgeHoldOut is the record's text of a random hold-out of a fraction frac
// of the edges, drawn from each run's seed.
func edgeHoldOut(frac float64) string { return fmt.Sprintf("edges:random:%g", frac) }

// Tasked is a method whose task is not node classification.
type Tasked interface {
	Task() Task
}

// TaskOf returns m's task.
func TaskOf(m methods.Method) Task {
	if t, ok := m.(Tasked); ok {
		return t.Task()
	}
	return NodeClassification{}
}

// NodeClassification predicts every node's class; a run's outcome holds
// one prediction per node (Outcome.Pred) and the validation accuracy of the
// model kept.
type NodeClassification struct{}

func (NodeClassification) Name() string { return "node classification" }

// Check refuses a graph without labels, with labels of a single class, or
// without a feature column (every node-classification model reads
// features; a graph with none used to crash the sparse products). The
// loaders refuse the last already; this covers graphs built in code.
func (NodeClassification) Check(g *graphs.Graph) error {
	switch {
	case g.Labels == nil || g.NumClasses < 1:
		return fmt.Errorf("dataset %s has no node labels", g.Name)
	case g.NumClasses < 2:
		return fmt.Errorf("dataset %s has labels of one class only (every labelled node is in class 0), and classification needs at least two classes", g.Name)
	case g.X == nil || g.X.F < 1:
		return fmt.Errorf("dataset %s has no node features (0 feature columns), and every node-classification model reads at least one", g.Name)
	}
	return nil
}

func (NodeClassification) NodeSplit(*graphs.Graph) bool { return true }

func (NodeClassification) Prepare(g *graphs.Graph, _ uint64) (*graphs.Graph, error) { return g, nil }

func (NodeClassification) Metrics(g *graphs.Graph, out *methods.Outcome) (map[string]float64, error) {
	if len(out.Pred) != g.N {
		return nil, fmt.Errorf("%d predictions for %d nodes", len(out.Pred), g.N)
	}
	sp := g.Split
	m := map[string]float64{
		"test_acc":      trainers.Accuracy(out.Pred, g.Labels, sp.Test),
		"test_f1_micro": trainers.MicroF1(out.Pred, g.Labels, sp.Test),
		"val_acc":       out.ValAcc,
		"train_acc":     trainers.Accuracy(out.Pred, g.Labels, sp.Train),
	}
	for k, v := range out.Extra {
		m[k] = v
	}
	return m, nil
}

func (NodeClassification) Evaluation() string {
	return "test, validation and training accuracy on the split's labels (the metrics of this record)"
}

// LinkPrediction tells held-out edges from random node pairs: each run
// holds out TestFraction of the undirected edges (Graph.EdgeTest; the
// training graph lacks them) and the method scores them against as many
// random pairs. A run's outcome reports "test_auc" (and any other metric)
// in Outcome.Extra; node splits are drawn when the dataset has labels.
type LinkPrediction struct {
	TestFraction float64
}

func (LinkPrediction) Name() string { return "link prediction" }

// SplitRecord: the node split where the dataset has labels, and the edge
// hold-out, "ratio:0.5:0.2+edges:random:0.1"; without labels no node split
// is drawn and --split is refused.
func (t LinkPrediction) SplitRecord(g *graphs.Graph, given string, spec graphs.SplitSpec) (string, error) {
	if !t.NodeSplit(g) {
		if given != "" {
			return "", fmt.Errorf("--split %s: dataset %s has no node labels, so link prediction draws no node split; it holds out a fraction %g of the edges at random (leave --split out)",
				given, g.Name, t.TestFraction)
		}
		return edgeHoldOut(t.TestFraction), nil
	}
	return spec.String() + "+" + edgeHoldOut(t.TestFraction), nil
}

func (LinkPrediction) Check(g *graphs.Graph) error {
	if g.Adj == nil || g.Adj.NNZ() < 4 {
		return fmt.Errorf("dataset %s has too few edges for link prediction", g.Name)
	}
	return nil
}

func (LinkPrediction) NodeSplit(g *graphs.Graph) bool { return g.Labels != nil && g.NumClasses >= 2 }

func (t LinkPrediction) Prepare(g *graphs.Graph, seed uint64) (*graphs.Graph, error) {
	return graphs.HoldOutEdges(g, t.TestFraction, seed)
}

func (LinkPrediction) Metrics(_ *graphs.Graph, out *methods.Outcome) (map[string]float64, error) {
	if v, ok := out.Extra["test_auc"]; !ok || math.IsNaN(v) {
		return nil, fmt.Errorf("a link-prediction outcome must report test_auc")
	}
	return out.Extra, nil
}

func (LinkPrediction) Evaluation() string {
	return "the AUC of held-out edges against random pairs (the metrics of this record); the held-out edges are private at edge level and publishing it is not covered"
}
