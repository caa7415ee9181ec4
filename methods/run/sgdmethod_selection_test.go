package run_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
)

// pmlp: an MLP trained with node-level DP-SGD on each training node's own
// features and label (one-row examples: removing v deletes at most its own
// example, so R = 1, Change = 1 is a true bound for the TRAINING path), and
// evaluated with one propagation step over the whole graph (logits =
// Linear(mean over u's neighbours and u)): "PMLP"-style inference.
// run.SGDMethod lets the author choose those Logits; with R = 1, PlanSGD
// accepts --selection private and accounts the exponential mechanism over
// validation counts with sensitivity 1.
type pmlp struct{}

func (pmlp) Name() string               { return "pmlp-audit" }
func (pmlp) Short() string              { return "audit" }
func (pmlp) Levels() []methods.Level    { return []methods.Level{methods.None, methods.Node} }
func (pmlp) DefaultSplit(string) string { return "" }
func (pmlp) Config() any                { return nil }
func (pmlp) Validate() error            { return nil }
func (pmlp) Epochs() int                { return 1 }
func (pmlp) Plan(ctx *methods.Context, n int) (run.SGDPlan, error) {
	return run.SGDPlan{PrivateConfig: dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: 2, Epochs: 1, Clip: 1, What: "a training node's own row"}}, nil
}

func (pmlp) Build(ctx *methods.Context, p run.SGDPlan) (*run.Net, error) {
	g := ctx.Graph
	train := g.Split.Train
	x, err := dpnn.NewExamples(len(train), nil, nil, p.R, p.Change, p.What)
	if err != nil {
		return nil, err
	}
	rows, f := dpnn.RowCapacity(x, p.Rate()), g.X.F
	m := nn.NewModel(ctx.Seed)
	xb := m.Input("Xb", make([]float64, rows*f), rows, f)
	labels := make([]int, rows)
	net := &run.Net{Model: m, Examples: x, Opt: nn.NewAdam(0.01, 0)}
	// mean over u and its neighbours, whole graph (the evaluation path)
	a := graphs.Symmetrize(g.Adj)
	src, dst, val := []int{}, []int{}, []float64{}
	for u := 0; u < g.N; u++ {
		d := float64(a.Indptr[u+1] - a.Indptr[u] + 1)
		src, dst, val = append(src, u), append(dst, u), append(val, 1/d)
		for k := a.Indptr[u]; k < a.Indptr[u+1]; k++ {
			src, dst, val = append(src, u), append(dst, a.Indices[k]), append(val, 1/d)
		}
	}
	mean := nn.NewSparse("Amean", graphs.FromCOO(g.N, g.N, src, dst, val)).Fixed()
	err = nn.Build(func() error {
		head := layers.NewLinear(m, "head", f, g.NumClasses, true, layers.InitGlorot)
		m.StartRecording()
		ce, err := nn.NewCrossEntropy(m, head.Forward(xb), "loss")
		m.StopRecording()
		if err != nil {
			return err
		}
		xd := make([]float64, rows*f)
		net.Loss, net.Fill = ce.PerRow, func(b *dpnn.Batch) error {
			clear(xd)
			for k, e := range b.Examples {
				copy(xd[b.First[k]*f:(b.First[k]+1)*f], g.X.Dense[train[e]*f:(train[e]+1)*f])
				labels[b.First[k]] = g.Labels[train[e]]
			}
			if err := nn.SetValue(xb, xd); err != nil {
				return err
			}
			return ce.SetRows(b.First[:len(b.Examples)], labels)
		}
		agg, err := nn.SpMM(mean, m.Input("X", g.X.Dense, g.N, f))
		if err != nil {
			return err
		}
		net.Logits = head.Forward(agg)
		return nil
	})
	return net, err
}

// star: hub v = 0 with k validation leaves 1..k; leaves' features 0, the
// hub's large; training nodes k+1..k+4 isolated.
func star(k int, hub []float64, removeHub bool) *graphs.Graph {
	n, f := k+5, len(hub)
	xs := make([]float64, n*f)
	copy(xs, hub)
	for t := k + 1; t < n; t++ {
		xs[t*f+t%f] = 1
	}
	src, dst := []int{}, []int{}
	if !removeHub {
		for u := 1; u <= k; u++ {
			src, dst = append(src, 0, u), append(dst, u, 0)
		}
	}
	val := make([]float64, len(src))
	for i := range val {
		val[i] = 1
	}
	g := &graphs.Graph{N: n, Adj: graphs.FromCOO(n, n, src, dst, val), X: &graphs.Features{N: n, F: f, Dense: xs},
		Labels: make([]int, n), NumClasses: 2}
	for u := 1; u <= k; u++ {
		g.Split.Val = append(g.Split.Val, u)
	}
	for t := k + 1; t < n; t++ {
		g.Split.Train = append(g.Split.Train, t)
	}
	g.Split.Test = []int{0}
	return g
}

// TestSGDMethodRefusesPrivateSelection (the sixth outside audit): with R
// = 1 for the training path but evaluation logits that average over
// neighbours, a hub's removal moved 10 validation predictions of the
// private selection, accounted with sensitivity 1. A method made by
// run.SGDMethod bounds training examples, not predictions, so it refuses
// --selection private; --selection last runs.
func TestSGDMethodRefusesPrivateSelection(t *testing.T) {
	g := star(10, []float64{100, 0, 0, 0}, false)
	for _, sel := range []string{trainers.SelectPrivate, trainers.SelectLast} {
		ctx := methods.NewContext(methods.Context{Graph: g, Dataset: "star", Level: methods.Node, Epsilon: 8, Delta: 1e-5,
			DeltaRule: methods.DeltaGiven, Selection: sel, SelectionEpsilon: 1, Seed: 7})
		_, _, err := run.PrivateNet(ctx, pmlp{})
		if sel == trainers.SelectPrivate && (err == nil || !strings.Contains(err.Error(), "--selection private is not supported")) {
			t.Errorf("private selection: got %v, want the refusal", err)
		}
		if sel == trainers.SelectLast && err != nil {
			t.Errorf("last epoch: %v", err)
		}
	}
}
