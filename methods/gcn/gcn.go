// Package gcn is the non-private two-layer graph convolutional network of
// Kipf & Welling (2017): Â·ReLU(Â·X·W₁ + b₁)·W₂ + b₂ with
// Â = D^-1/2 (A+I) D^-1/2, trained full batch with Adam.
package gcn

import (
	"fmt"
	"slices"

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

func (*GCN) Name() string  { return "gcn" }
func (*GCN) Short() string { return "2-layer GCN (Kipf & Welling 2017), non-private upper baseline" }
func (*GCN) Levels() []methods.Level {
	return []methods.Level{methods.None}
}
func (*GCN) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }
func (m *GCN) Config() any                      { return &m.cfg }
func (m *GCN) Validate() error                  { return m.cfg.Validate() }
func (m *GCN) Epochs() int                      { return m.cfg.TrainEpochs }

// net is the GCN's model with its paths. logits is the training path's
// output (with dropout) over the rows its loss reads: the training nodes
// (train, sorted) when they are at most 90 % of the nodes, every node
// otherwise (train nil). The second layer's sparse product, its gradient
// and the loss then cover only those rows: at 10⁶ nodes the all-rows
// product, its transpose and the log-softmax of 10⁶ rows were a fifth of
// an epoch. The first layer in turn covers only the rows the second reads
// (hidden, hiddenRows): a fifth to a quarter of an epoch at 10⁵ and 10⁶
// nodes. The same holds for monitoring: watch predicts the validation
// nodes (and the training nodes for a trace, run.WatchRows) after
// every epoch, and all every node for the final prediction, each on a
// frozen copy of the model (nn.Frozen) without dropout, computed from a
// fixed Â·X where the first layer allows it (GCNConv.FixedInput), so an
// evaluation does not gather the rows of X. Each path's rows are those of
// the all-nodes product bit for bit (graphs.CSR.SelectRows, and every
// other op is row-wise), so training and selection are unchanged.
type net struct {
	model      *nn.Model
	logits     *G.Node
	watch, all *run.Watch
	// fixed is set when the evaluation starts from a fixed Â·X: it is then
	// a small part of an epoch, and monitoring it in turn leaves both cores
	// to the training step's parallel loops (overlapping it made a 10⁵-node
	// epoch 10 % slower).
	fixed bool
	ce    *nn.CrossEntropy
	train []int
	// hidden are the rows of the first layer the training path computes:
	// those its second layer reads (hiddenRows); nil: every node.
	hidden []int
	l1, l2 *layers.GCNConv
}

// paths chooses a net's paths: Run's are the defaults (every field set
// but lossAll); tests turn each off to compare.
type paths struct {
	fixed   bool  // evaluation may start from a fixed Â·X
	watch   []int // the monitored rows (nil: every node)
	lossAll bool  // the training path covers every node
}

// buildNet builds the net on g with the paths o.
func (m *GCN) buildNet(g *graphs.Graph, seed uint64, o paths) (*net, error) {
	model := nn.NewModel(seed)
	adj := graphs.GCNNorm(g.Adj)
	n := &net{model: model}
	if !o.lossAll {
		n.train = lossRows(g.Split.Train, g.N)
	}
	err := nn.Build(func() error {
		feats := g.X
		x, err := layers.NewFeatures(model, feats, "X")
		if err != nil {
			return err
		}
		a := nn.NewSparse("Â", adj).Fixed() // built here, never written
		n.l1 = layers.NewGCNConv(model, "gcn.0", a, g.X.F, m.cfg.Hidden)
		n.l2 = layers.NewGCNConv(model, "gcn.1", a, m.cfg.Hidden, g.NumClasses)
		first, out := n.l1, n.l2
		if n.train != nil {
			at := adj.SelectRows(n.train)
			if rows, read := hiddenRows(at); rows != nil {
				n.hidden, at = rows, read
				first = &layers.GCNConv{Linear: n.l1.Linear, Adj: nn.NewSparse("Â.hidden", adj.SelectRows(rows)).Fixed()}
			}
			out = &layers.GCNConv{Linear: n.l2.Linear, Adj: nn.NewSparse("Â.train", at).Fixed()}
		}
		n.logits = m.forwardRows(model, first, out, x, n.hidden, g.N)
		// The frozen paths read the same matrices through wrappers of their
		// own: nothing they touch is written while the next epoch trains.
		// Both start from the same hidden layer (one fixed Â·X between them).
		xe, err := layers.NewFeatures(model, feats, "X.eval")
		if err != nil {
			return err
		}
		ae := nn.NewSparse("Â.eval", adj)
		c1 := &layers.GCNConv{Linear: n.l1.Linear, Adj: ae}
		var ax *G.Node
		if o.fixed {
			ax, n.fixed = c1.FixedInput(model, xe, "ÂX")
		}
		hidden := func() *G.Node {
			if n.fixed {
				return nn.ReLU(c1.Affine(ax))
			}
			return nn.ReLU(c1.ForwardInput(model, xe, 0))
		}
		path := func(rows []int, name string) (*run.Watch, error) {
			f, outs, err := model.NewFrozen(func() ([]*G.Node, error) {
				h := hidden()
				a := ae
				if rows != nil {
					a = nn.NewSparse(name, adj.SelectRows(rows))
				}
				return []*G.Node{(&layers.GCNConv{Linear: n.l2.Linear, Adj: a}).Forward(h)}, nil
			})
			if err != nil {
				return nil, err
			}
			return run.NewWatch(f, outs[0], rows, g.N), nil
		}
		if n.all, err = path(nil, ""); err != nil {
			return err
		}
		n.watch = n.all
		if o.watch != nil {
			if n.watch, err = path(o.watch, "Â.watch"); err != nil {
				return err
			}
		}
		if n.ce, err = nn.NewCrossEntropy(model, n.logits, "loss"); err != nil {
			return err
		}
		return model.Compile(n.ce.Mean, nil)
	})
	return n, err
}

// predict evaluates the all-nodes path (the prediction once training
// ends), after a monitoring path of its own has given its buffers (a
// hidden layer of every node) back (Watch.Retire).
func (n *net) predict() error {
	if n.watch != n.all {
		n.watch.Retire()
	}
	return n.all.Evaluate()
}

// lossRows returns the rows of the training path's logits: the training
// nodes, sorted, when they are distinct and at most 90 % of the n nodes;
// nil (every node) otherwise.
func lossRows(train []int, n int) []int {
	rows := slices.Sorted(slices.Values(train))
	if len(rows) == 0 || 10*len(rows) > 9*n || len(slices.Compact(slices.Clone(rows))) != len(rows) {
		return nil
	}
	return rows
}

// setTrain makes the loss average over g's training nodes.
func (n *net) setTrain(g *graphs.Graph) error {
	if n.train == nil {
		return n.ce.SetRows(g.Split.Train, g.Labels)
	}
	rows, labels := make([]int, len(n.train)), make([]int, len(n.train))
	for k, r := range n.train {
		rows[k], labels[k] = k, g.Labels[r]
	}
	return n.ce.SetRows(rows, labels)
}

// task is the net's training task: full-batch Adam, monitoring through the
// watch path, while the next epoch trains unless the evaluation starts
// from a fixed Â·X, and predicting through the all-nodes path.
func (n *net) task(opt nn.Optimizer) *trainers.ModelTask {
	t := &trainers.ModelTask{Model: n.model, Logits: n.all.Logits(), Opt: opt, Watch: n.watch.Predict, Eval: n.predict}
	if !n.fixed {
		t.Pipe = n.watch
	}
	return t
}

// forward is the two layers over the features x: Â·ReLU(Â·X·W₁ + b₁)·W₂ + b₂
// with dropout on the input and the hidden layer.
func (m *GCN) forward(model *nn.Model, l1, l2 *layers.GCNConv, x *layers.Features) *G.Node {
	return m.forwardRows(model, l1, l2, x, nil, 0)
}

// forwardRows is forward when l1's adjacency holds only the rows hidden
// of the first layer (of n nodes) and l2's reads only those: the hidden
// layer's dropout masks them as rows of the whole layer (nn.DropoutRows),
// so every computed entry has forward's bits. hidden nil: every node.
func (m *GCN) forwardRows(model *nn.Model, l1, l2 *layers.GCNConv, x *layers.Features, hidden []int, n int) *G.Node {
	h := nn.ReLU(l1.ForwardInput(model, x, m.cfg.Dropout))
	if hidden != nil {
		h = model.DropoutRows(h, m.cfg.Dropout, hidden, n)
	} else {
		h = model.Dropout(h, m.cfg.Dropout)
	}
	return l2.Forward(h)
}

// hiddenRows returns the rows of the first layer that a second layer over
// the adjacency rows at reads (the columns with an entry, in order) and
// at with its columns renumbered to them, when they are at most 90 % of
// the nodes (nil otherwise). With the training nodes' rows of Â (a tenth
// of a graph of average degree 10) they are about 70 % of the nodes; on
// cora about a quarter. The renumbering keeps each row's entries in
// order, so every sum of the second layer adds the same terms in the same
// order; the weight and bias gradients of the first layer then leave out
// only rows whose gradient is zero.
func hiddenRows(at *graphs.CSR) ([]int, *graphs.CSR) {
	pos := make([]int, at.Cols)
	for _, j := range at.Indices {
		pos[j] = 1
	}
	var rows []int
	for j, used := range pos {
		if used != 0 {
			pos[j] = len(rows)
			rows = append(rows, j)
		}
	}
	if len(rows) == 0 || 10*len(rows) > 9*at.Cols {
		return nil, nil
	}
	idx := make([]int, len(at.Indices))
	for e, j := range at.Indices {
		idx[e] = pos[j]
	}
	return rows, &graphs.CSR{Rows: at.Rows, Cols: len(rows), Indptr: at.Indptr, Indices: idx, Data: at.Data}
}

// inference is the trained GCN's query over a graph h: the same layers
// with h's normalised adjacency, on features of h's size (preprocessed as
// the training features were). The GCN is not private: its queries have no
// privacy cost to state.
func (m *GCN) inference(n *net, like *graphs.Features) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		q := run.Lazy(func() (methods.QueryFunc, error) {
			var x *layers.Features
			var logits *G.Node
			err := nn.Build(func() error {
				adj := nn.NewSparse(fmt.Sprintf("Â.query%d", h.N), graphs.GCNNorm(h.Adj))
				var err error
				if x, err = run.NewQueryInput(n.model, like, h.N, fmt.Sprintf("X.query%d", h.N)); err != nil {
					return err
				}
				c1 := &layers.GCNConv{Linear: n.l1.Linear, Adj: adj}
				c2 := &layers.GCNConv{Linear: n.l2.Linear, Adj: adj}
				logits = m.forward(n.model, c1, c2, x)
				return nil
			})
			if err != nil {
				return nil, err
			}
			runner, err := n.model.NewRunner(logits)
			if err != nil {
				return nil, err
			}
			return func(f *graphs.Features) ([]float64, error) {
				if err := run.CheckQuery(f, h.N, like.F); err != nil {
					return nil, err
				}
				if err := run.SetQueryInput(x, f); err != nil {
					return nil, err
				}
				if err := runner.Run(); err != nil {
					return nil, err
				}
				return run.Softmax(nn.Values(logits), h.N, h.NumClasses), nil
			}, nil
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

// build is buildNet on the context's graph with the loss set to the
// training nodes.
func (m *GCN) build(ctx *methods.Context) (*net, error) {
	if ctx.Level != methods.None {
		return nil, fmt.Errorf("gcn is not private: it supports only --privacy none")
	}
	g := ctx.Graph
	n, err := m.buildNet(g, ctx.Seed, paths{fixed: true, watch: run.WatchRows(g.Split, g.N, trainers.KeepsStats(ctx.Recorder))})
	if err != nil {
		return nil, err
	}
	if err := n.setTrain(g); err != nil {
		return nil, err
	}
	return n, nil
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
	return out, run.SetInference(out, g, m.inference(n, g.X))
}

var _ run.Builder = (*GCN)(nil)
