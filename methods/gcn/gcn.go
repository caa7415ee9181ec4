// Package gcn is the non-private two-layer graph convolutional network of
// Kipf & Welling (2017): Â·ReLU(Â·X·W₁ + b₁)·W₂ + b₂ with
// Â = D^-1/2 (A+I) D^-1/2, trained full batch with Adam.
//
// It is the template a new method starts from: a configuration, a model of
// two layers.GCNConv (forward), its loss and paths (buildNet), a trainer
// (task) and Run. What makes it fast lives below it: layers.Reach computes
// only the rows each path reads, GCNConv the cheaper order of its products
// and a fixed Â·X for evaluation, nn the fused kernels and the frozen
// evaluation copies.
package gcn

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds GCN's hyperparameters.
type Config struct {
	Hidden      int     `flag:"hidden" help:"hidden width"`
	TrainEpochs int     `flag:"epochs" help:"training epochs (full-batch steps)"`
	LR          float64 `flag:"lr" help:"Adam learning rate"`
	WeightDecay float64 `flag:"weight-decay" help:"L2 weight decay"`
	Dropout     float64 `flag:"dropout" help:"dropout probability (input and hidden)"`
	// Kipf & Welling's L1 row normalisation of the features is --features
	// l1, the one switch every method shares (and the record states): GCN
	// has no flag of its own for it.
}

// DefaultConfig is Kipf & Welling's setting.
func DefaultConfig() Config {
	return Config{Hidden: 64, TrainEpochs: 200, LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5}
}

// Validate checks the hyperparameters.
func (c *Config) Validate() error {
	return methods.CheckFields(c, methods.Width(&c.Hidden), methods.Epochs(&c.TrainEpochs),
		methods.PositiveF(&c.LR), methods.Prob(&c.Dropout), methods.NonNegF(&c.WeightDecay))
}

// GCN is the method with its configuration.
type GCN struct{ cfg Config }

// New returns GCN with the configuration cfg.
func New(cfg Config) *GCN { return &GCN{cfg: cfg} }

func (*GCN) Name() string                       { return "gcn" }
func (*GCN) Short() string                      { return "2-layer GCN (Kipf & Welling 2017), non-private upper baseline" }
func (*GCN) Levels() []methods.Level            { return []methods.Level{methods.None} }
func (*GCN) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }
func (m *GCN) Config() any                      { return &m.cfg }
func (m *GCN) Validate() error                  { return m.cfg.Validate() }
func (m *GCN) Epochs() int                      { return m.cfg.TrainEpochs }

// net is the model, two GCNConv layers, with its paths. Each path
// computes only the rows it reads (layers.Reach), with the bits of the
// path over every node: training the rows its loss over the training nodes
// reaches through Â's two hops, monitoring those of the validation nodes
// (and the training nodes for a trace, run.WatchRows), the final
// prediction every node. Monitoring and prediction run on frozen copies of
// the model (nn.Frozen) without dropout, so that one epoch is monitored
// while the next trains.
type net struct {
	model      *nn.Model
	l1, l2     *layers.GCNConv
	train      *layers.Reach    // the training path's rows
	logits     *G.Node          // the training path's output, with dropout
	ce         *nn.CrossEntropy // the loss over the training nodes
	watch, all *run.Watch       // the monitoring and all-nodes paths
	// fixed is set when evaluation starts from a fixed Â·X: it is then a
	// small part of an epoch, and monitoring it in turn leaves both cores
	// to the training step (overlapping it made a 10⁵-node epoch 10 %
	// slower).
	fixed bool
}

// forward is the model over the rows r plans, on the features x:
// Â·ReLU(Â·X·W₁ + b₁)·W₂ + b₂ with dropout p on the input and the hidden
// layer.
func (n *net) forward(r *layers.Reach, x *layers.Features, p float64) *G.Node {
	h := nn.ReLU(r.Conv(n.l1, 0).ForwardInput(n.model, x, p))
	return r.Conv(n.l2, 1).Forward(r.Dropout(n.model, h, p, 0))
}

// buildNet builds the net on g, its loss over g's training nodes and its
// monitoring path over the nodes watch (nil: every node).
func (m *GCN) buildNet(g *graphs.Graph, seed uint64, watch []int) (*net, error) {
	adj := graphs.GCNNorm(g.Adj)
	n := &net{model: nn.NewModel(seed)}
	err := nn.Build(func() error {
		x, err := layers.NewFeatures(n.model, g.X, "X")
		if err != nil {
			return err
		}
		// never written: the first layer gathers X's rows under the
		// dropout mask from a copy (nn.Model.DropoutSpMM)
		x.Const = true
		a := nn.NewSparse("Â", adj).Fixed() // built here, never written
		n.l1 = layers.NewGCNConv(n.model, "gcn.0", a, g.X.F, m.cfg.Hidden)
		n.l2 = layers.NewGCNConv(n.model, "gcn.1", a, m.cfg.Hidden, g.NumClasses)
		n.train = layers.NewReach(a, 2, g.Split.Train)
		n.logits = n.forward(n.train, x, m.cfg.Dropout)
		// The frozen paths read features and adjacencies of their own:
		// nothing they touch is written while the next epoch trains. The
		// features are constant, so the first layer starts from a fixed
		// Â·X where it takes (Â·X)·W.
		xe, err := layers.NewFeatures(n.model, g.X, "X.eval")
		if err != nil {
			return err
		}
		xe.Const, n.fixed = true, n.l1.InputFirst(xe)
		ae := nn.NewSparse("Â.eval", adj)
		path := func(rows []int) (*run.Watch, error) {
			r := layers.NewReach(ae, 2, rows)
			f, outs, err := n.model.NewFrozen(func() ([]*G.Node, error) { return []*G.Node{n.forward(r, xe, 0)}, nil })
			if err != nil {
				return nil, err
			}
			return run.NewWatch(f, outs[0], r.Out(), g.N), nil
		}
		if n.all, err = path(nil); err != nil {
			return err
		}
		if n.watch = n.all; watch != nil {
			if n.watch, err = path(watch); err != nil {
				return err
			}
		}
		if n.ce, err = nn.NewCrossEntropy(n.model, n.logits, "loss"); err != nil {
			return err
		}
		return n.model.Compile(n.ce.Mean, nil)
	})
	if err != nil {
		return nil, err
	}
	return n, n.ce.SetRows(n.train.Loss(g.Labels))
}

// task is the net's training task: full-batch Adam, monitoring through the
// watch path (while the next epoch trains unless evaluation starts from a
// fixed Â·X) and predicting through the all-nodes path, once the
// monitoring path has given its buffers back (Watch.Retire).
func (n *net) task(opt nn.Optimizer) *trainers.ModelTask {
	t := &trainers.ModelTask{Model: n.model, Logits: n.all.Logits(), Opt: opt, Watch: n.watch.Predict}
	t.Eval = func() error {
		if n.watch != n.all {
			n.watch.Retire()
		}
		return n.all.Evaluate()
	}
	if !n.fixed {
		t.Pipe = n.watch
	}
	return t
}

// inference is the trained GCN's query over a graph h: the same layers
// with h's normalised adjacency, on features of h's size (preprocessed as
// the training features were). The GCN is not private: its queries have no
// privacy cost to state.
func (n *net) inference(like *graphs.Features) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		q := run.NewQuery(h.N, like.F, nil, func() (methods.QueryFunc, error) {
			var x *layers.Features
			var logits *G.Node
			err := nn.Build(func() error {
				var err error
				if x, err = run.NewQueryInput(n.model, like, h.N, fmt.Sprintf("X.query%d", h.N)); err != nil {
					return err
				}
				a := nn.NewSparse(fmt.Sprintf("Â.query%d", h.N), graphs.GCNNorm(h.Adj))
				logits = n.forward(layers.NewReach(a, 2, nil), x, 0)
				return nil
			})
			if err != nil {
				return nil, err
			}
			return run.QueryRunner(n.model, x, logits, func(v []float64) ([]float64, error) {
				return run.Softmax(v, h.N, h.NumClasses), nil
			})
		})
		return &run.Inference{Query: q}, nil
	}
}

// BuildModel builds the graph Run trains, its loss over the split's
// training nodes.
func (m *GCN) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	n, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	return n.model, nil
}

// build is buildNet on the context's graph.
func (m *GCN) build(ctx *methods.Context) (*net, error) {
	if ctx.Level != methods.None {
		return nil, fmt.Errorf("gcn is not private: it supports only --privacy none")
	}
	g := ctx.Graph
	return m.buildNet(g, ctx.Seed, run.WatchRows(g.Split, g.N, trainers.KeepsStats(ctx.Recorder)))
}

// Run trains once on the context's split.
func (m *GCN) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := run.CheckModelMemory(ctx, "gcn", m.cfg.Hidden, 2); err != nil {
		return nil, err
	}
	n, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	task := n.task(nn.NewAdam(m.cfg.LR, m.cfg.WeightDecay))
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: m.cfg.TrainEpochs, Run: ctx.Run, Recorder: ctx.Recorder})
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc, Scores: run.Softmax(nn.Values(n.all.Logits()), g.N, g.NumClasses)}
	return out, run.SetInference(out, g, n.inference(g.X))
}

var _ run.Builder = (*GCN)(nil)
