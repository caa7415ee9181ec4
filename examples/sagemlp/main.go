// Command sagemlp is a dpgnn binary with a private method of its own beside
// the built-in ones, written outside the framework: nothing in methods/all
// or elsewhere names it. Build and try it with
//
//	go build -o sagemlp ./examples/sagemlp
//	./sagemlp train sagemlp --dataset cora --data-dir ../shared/datasets \
//	    --privacy node --epsilon 8 --delta 1e-5 --max-degree 168
//	./sagemlp inspect sagemlp --privacy node --epsilon 8 --delta 1e-5
//	./sagemlp account sagemlp --level node --epsilon 8 --delta 1e-5 --train-nodes 1000
//
// The method, sagemlp, is encode–aggregate–classify trained with node-level
// DP-SGD on the framework's declared examples: an MLP encodes every node's
// features, one SAGE-mean convolution (layers.SAGEConv: the mean of the
// neighbours' codes and the node's own) mixes them, and an MLP head
// classifies. Unlike the built-in sage (K SAGE layers on the raw features,
// a linear head, --degree-bound sample), it is one hop, encoders on both
// sides of the aggregation, and a public degree bound only. Its example is
// a training node's 1-hop rooted subgraph (degree.RootedSubgraphs). The
// method writes its Spec, its Plan (R, Change and their proof) and its
// network (Build); run.SGDMethod does the rest: calibration, Poisson
// sampling, the noisy steps in the ledger, training, the report, and the
// inspect, account and audit commands from the same plan and examples;
// dpnn checks at every step that no aggregation joins two examples' rows.
// Audit one step on G and G − v with
//
//	./sagemlp audit sagemlp --privacy node --epsilon 8 --delta 1e-5 --remove-node 0
package main

import (
	"errors"

	"github.com/dpgnn/dpgnn/cli"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all" // the built-in methods too
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

// main is dpgnn with sagemlp, at its defaults, beside the built-in methods.
func main() { cli.Main(func() methods.Method { return run.SGDMethod(&SageMLP{cfg: defaults}) }) }

// defaults is sagemlp's default configuration.
var defaults = Config{Hidden: 64, Epochs: 20, LR: 0.01, BatchSize: 64, Clip: 1, Flags: degree.DefaultFlags(40)}

// Config is sagemlp's hyperparameters; the struct tags make them flags of
// every command, record fields and sweep --set keys.
type Config struct {
	Hidden       int     `flag:"hidden" help:"width of the encoder, the convolution and the head"`
	Epochs       int     `flag:"epochs" help:"training epochs (⌈epochs/q⌉ DP-SGD steps)"`
	LR           float64 `flag:"lr" help:"Adam learning rate"`
	BatchSize    int     `flag:"batch-size" help:"expected Poisson batch size B (rate q = B/N_train)"`
	Clip         float64 `flag:"clip" help:"per-example gradient L2 bound C"`
	degree.Flags         // --max-degree D (node level), --degree-bound public
}

// SageMLP is the method.
type SageMLP struct{ cfg Config }

func (*SageMLP) Name() string                 { return "sagemlp" }
func (*SageMLP) Short() string                { return "MLP encoder, one SAGE-mean hop, MLP head (examples/sagemlp)" }
func (*SageMLP) Levels() []methods.Level      { return []methods.Level{methods.None, methods.Node} }
func (*SageMLP) DefaultSplit(d string) string { return methods.DefaultSplitFor(d) }
func (m *SageMLP) Config() any                { return &m.cfg }
func (m *SageMLP) Epochs() int                { return m.cfg.Epochs }
func (m *SageMLP) Validate() error {
	_, err := m.bound()
	return methods.CheckAll(err, methods.CheckFields(&m.cfg, methods.Width(&m.cfg.Hidden), methods.Epochs(&m.cfg.Epochs),
		methods.PositiveF(&m.cfg.LR), methods.Positive(&m.cfg.BatchSize), methods.PositiveF(&m.cfg.Clip)))
}

// bound is the node-level degree bound: D, a public bound on every node's
// degree; an input above it is refused before anything is released.
func (m *SageMLP) bound() (degree.Bound, error) {
	return m.cfg.Bound(degree.Undirected, "every node's degree (edges in either direction)", degree.Public)
}

// Plan is DP-SGD over n training nodes' 1-hop rooted subgraphs, from
// public numbers only (D, n, the flags): R = OccurrenceBound(1, D) = 1 + D
// examples per node, each moved by at most 2C, so one step is
// Occurrences{1 + D, 2, Poisson{q, Gaussian{z}}}, calibrated by the
// framework over ⌈epochs/q⌉ steps; the degree bound is p.Bound (nil
// without privacy: nothing is bounded).
//
// Proof (node level, raw neighbours G and G − v; G within D, as
// RootedSubgraphs checks before anything is released, so G − v is accepted
// too: removing a node lowers degrees). Example u is E(u), u's 1-hop rooted
// subgraph of the symmetrised raw graph, with the features of its rows and
// u's label; u's logits on E(u) are its logits on the whole graph (the
// encoder and head are per row, the convolution reads only u's
// neighbours), and the loss reads u's root row only. RootedSubgraphs
// proves that E(u) differs between G and G − v only for u = v (deleted)
// and u ∈ N(v) (modified): at most 1 + D examples. The framework clips
// each example's summed gradient to C and refuses any product joining two
// examples' rows, so a deleted example moves the clipped sum by at most C,
// a modified one by at most 2C; the Poisson draws are independent per
// example: dp.Occurrences' conditions, composed over the steps. N_train
// and the split are treated as public (the report says so); the last
// epoch is kept, no label is read for it.
func (m *SageMLP) Plan(ctx *methods.Context, n int) (run.SGDPlan, error) {
	p := run.SGDPlan{PrivateConfig: dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: m.cfg.BatchSize, Epochs: m.cfg.Epochs,
		Clip: m.cfg.Clip, What: "a training node's 1-hop rooted subgraph"}}
	b, err := m.bound()
	if ctx.Private() {
		p.R, p.Change, p.Bound = b.D+1, 2, &b // OccurrenceBound(1, D)
	}
	return p, err
}

// Build builds the examples and the model: the network the framework
// makes private and trains.
func (m *SageMLP) Build(ctx *methods.Context, p run.SGDPlan) (*run.Net, error) {
	g, train, adj := ctx.Graph, ctx.Graph.Split.Train, graphs.Symmetrize(ctx.Graph.Adj)
	if err := run.Begin(ctx, "sagemlp", m.cfg.Hidden, 3); err != nil { // a model too large is refused
		return nil, err
	}
	b := degree.Bound{Mode: degree.None} // without privacy nothing is bounded
	if p.Bound != nil {
		b = *p.Bound
	}
	var x *dpnn.Examples
	rs, err := degree.RootedSubgraphs(adj, b, train, 1, 0)
	if errors.As(err, new(*degree.BoundError)) { // G above D: refused, naming only the bound
		err = b.Refusal(ctx.Dataset, err)
	} else if err == nil {
		x, err = dpnn.NewExamples(len(train), rs.Start, rs.Adj, p.R, p.Change, p.What)
	}
	if err != nil {
		return nil, err
	}
	// The training path reads a batch's rows: their features (xb, from
	// xrows, the features of every example row) and their block-diagonal
	// adjacency (nb), both set by fill; the evaluation path reads the
	// whole graph.
	rows, h, xall := dpnn.RowCapacity(x, p.Rate()), m.cfg.Hidden, features(g.X)
	xrows, xb, mod, labels := xall.SelectRows(rs.Node), nn.NewSparse("Xb", gather(xall, nil, rows)), nn.NewModel(ctx.Seed), make([]int, rows)
	nb, err := layers.NewNeighbours("batch", &graphs.CSR{Rows: rows, Cols: rows, Indptr: make([]int, rows+1)})
	net := &run.Net{Model: mod, Examples: x, Opt: nn.NewAdam(m.cfg.LR, 0)}
	err = errors.Join(err, nn.Build(func() error {
		enc, err1 := layers.NewMLP(mod, "enc", layers.MLPConfig{Dims: []int{g.X.F, h}, Activation: layers.ReLU})
		head, err2 := layers.NewMLP(mod, "head", layers.MLPConfig{Dims: []int{h, h, g.NumClasses}, Activation: layers.ReLU, PlainLast: true})
		conv := layers.NewSAGEConv(mod, "conv", h, h, layers.Mean, layers.SAGEOptions{})
		all, err := layers.NewNeighbours("H", adj)
		if err = errors.Join(err, err1, err2); err != nil || nb == nil {
			return err
		}
		mod.StartRecording() // the training path (encoder, convolution, head): its layers record their per-sample rules
		z, err := conv.Forward(nb, enc.ForwardSparse(xb))
		if err == nil {
			var ce *nn.CrossEntropy
			ce, err = nn.NewCrossEntropy(mod, head.Forward(nn.ReLU(z)), "loss")
			net.Loss, net.Fill = ce.PerRow, func(b *dpnn.Batch) error {
				for k, e := range b.Examples {
					labels[b.First[k]] = g.Labels[train[e]]
				}
				return errors.Join(xb.Set(gather(xrows, b.Rows, rows)), nb.Set(b.Adj), ce.SetRows(b.First[:len(b.Examples)], labels))
			}
		}
		mod.StopRecording()
		zall, err2 := conv.Forward(all, enc.ForwardSparse(nn.NewSparse("X", xall).Fixed())) // the evaluation path
		if err = errors.Join(err, err2); err == nil {
			net.Logits = head.Forward(nn.ReLU(zall))
		}
		return err
	}))
	return net, err
}

// features returns x as CSR (through a dense copy: fine at this
// example's sizes).
func features(x *graphs.Features) *graphs.CSR {
	src, dst, val := []int(nil), []int(nil), []float64(nil)
	for k, v := range x.ToDense() {
		if v != 0 {
			src, dst, val = append(src, k/x.F), append(dst, k%x.F), append(val, v)
		}
	}
	return graphs.FromCOO(x.N, x.F, src, dst, val)
}

// gather returns the rows of x, then empty rows up to n.
func gather(x *graphs.CSR, rows []int, n int) *graphs.CSR {
	s := x.SelectRows(rows)
	for ; s.Rows < n; s.Rows++ {
		s.Indptr = append(s.Indptr, s.Indptr[s.Rows])
	}
	return s
}
