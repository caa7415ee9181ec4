// Package gcn is the non-private two-layer graph convolutional network of
// Kipf & Welling (2017): Â·ReLU(Â·X·W₁ + b₁)·W₂ + b₂ with
// Â = D^-1/2 (A+I) D^-1/2, trained full batch with Adam.
package gcn

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
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
	// NormFeatures L1-normalises feature rows first (Kipf & Welling's and
	// PyG's NormalizeFeatures preprocessing).
	NormFeatures bool `flag:"normalize-features" help:"L1-normalise feature rows (Kipf & Welling's preprocessing)"`
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

// Build constructs the GCN's expression graph on g and returns the model,
// its logits over all nodes and its loss.
func (m *GCN) Build(g *graphs.Graph, seed uint64) (*nn.Model, *G.Node, *nn.CrossEntropy, error) {
	model := nn.NewModel(seed)
	adj := nn.NewSparse("Â", graphs.GCNNorm(g.Adj))
	var logits *G.Node
	var ce *nn.CrossEntropy
	err := nn.Build(func() error {
		feats := g.X
		if m.cfg.NormFeatures {
			feats = graphs.L1NormalizeFeatures(feats)
		}
		x, err := layers.NewFeatures(model, feats, "X")
		if err != nil {
			return err
		}
		l1 := layers.NewGCNConv(model, "gcn.0", adj, g.X.F, m.cfg.Hidden)
		l2 := layers.NewGCNConv(model, "gcn.1", adj, m.cfg.Hidden, g.NumClasses)
		h := model.Dropout(nn.ReLU(l1.ForwardInput(model, x, m.cfg.Dropout)), m.cfg.Dropout)
		logits = l2.Forward(h)
		if ce, err = nn.NewCrossEntropy(model, logits, "loss"); err != nil {
			return err
		}
		return model.Compile(ce.Mean, []*G.Node{logits})
	})
	return model, logits, ce, err
}

// BuildModel builds the graph Run trains, its loss over the split's
// training nodes.
func (m *GCN) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	model, _, err := m.build(ctx)
	return model, err
}

// build is Build on the context's graph with the loss set to the training
// nodes.
func (m *GCN) build(ctx *methods.Context) (*nn.Model, *G.Node, error) {
	if ctx.Level != methods.None {
		return nil, nil, fmt.Errorf("gcn is not private: it supports only --privacy none")
	}
	g := ctx.Graph
	model, logits, ce, err := m.Build(g, ctx.Seed)
	if err != nil {
		return nil, nil, err
	}
	if err := ce.SetRows(g.Split.Train, g.Labels); err != nil {
		return nil, nil, err
	}
	return model, logits, nil
}

// Run trains once on the context's split.
func (m *GCN) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := methods.CheckModelMemory(ctx, "gcn", m.cfg.Hidden, 2); err != nil {
		return nil, err
	}
	model, logits, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	task := &trainers.ModelTask{Model: model, Logits: logits, Opt: nn.NewAdam(m.cfg.LR, m.cfg.WeightDecay)}
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: m.cfg.TrainEpochs, Run: ctx.Run, Recorder: ctx.Recorder})
	if err != nil {
		return nil, err
	}
	return &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}, nil
}

var _ methods.Builder = (*GCN)(nil)
