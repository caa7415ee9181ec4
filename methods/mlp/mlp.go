// Package mlp is the feature-only baseline: an MLP on node features that
// never reads the graph's edges.
package mlp

import (
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/pflag"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return &MLP{} }) }

// MLP is the feature-only baseline. Non-private training is full batch with
// Adam and best-validation restore.
type MLP struct {
	Hidden      int
	Layers      int
	Epochs_     int
	LR          float64
	WeightDecay float64
	Dropout     float64
	Activation  string
	Norm        string
}

func (*MLP) Name() string  { return "mlp" }
func (*MLP) Short() string { return "MLP on node features only (no edges); the feature-only baseline" }
func (*MLP) Levels() []methods.Level {
	return []methods.Level{methods.None, methods.Edge}
}
func (*MLP) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }
func (m *MLP) Epochs() int                      { return m.Epochs_ }

func (m *MLP) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&m.Hidden, "hidden", 64, "hidden width")
	fs.IntVar(&m.Layers, "layers", 2, "number of Linear layers")
	fs.IntVar(&m.Epochs_, "epochs", 200, "training epochs (full-batch steps)")
	fs.Float64Var(&m.LR, "lr", 0.01, "Adam learning rate")
	fs.Float64Var(&m.WeightDecay, "weight-decay", 5e-4, "L2 weight decay")
	fs.Float64Var(&m.Dropout, "dropout", 0.5, "dropout probability (input and hidden)")
	fs.StringVar(&m.Activation, "activation", "relu", "relu or selu")
	fs.StringVar(&m.Norm, "norm", "none", "none, batchnorm or groupnorm after each hidden layer")
}

func (m *MLP) Validate() error {
	return methods.CheckAll(
		methods.Positive("hidden", m.Hidden), methods.Positive("layers", m.Layers),
		methods.Positive("epochs", m.Epochs_), methods.PositiveF("lr", m.LR),
		methods.Prob("dropout", m.Dropout), methods.NonNegF("weight-decay", m.WeightDecay))
}

func (m *MLP) config(in, out int) (layers.MLPConfig, error) {
	act, err := layers.ParseActivation(m.Activation)
	if err != nil {
		return layers.MLPConfig{}, err
	}
	norm, err := layers.ParseNorm(m.Norm)
	if err != nil {
		return layers.MLPConfig{}, err
	}
	dims := []int{in}
	for i := 1; i < m.Layers; i++ {
		dims = append(dims, m.Hidden)
	}
	dims = append(dims, out)
	return layers.MLPConfig{Dims: dims, Activation: act, Norm: norm, Dropout: m.Dropout,
		InputDropout: m.Dropout, PlainLast: true}, nil
}

// Run trains the MLP once. Edge-level privacy is free: the model never
// reads edges, so its ε is 0 for any edge-level budget.
func (m *MLP) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	cfg, err := m.config(g.X.F, g.NumClasses)
	if err != nil {
		return nil, err
	}
	model := nn.NewModel(ctx.Seed)
	var logits *G.Node
	var ce *nn.CrossEntropy
	err = nn.Build(func() error {
		x, err := layers.NewFeatures(model, g.X, "X")
		if err != nil {
			return err
		}
		p, err := layers.NewMLP(model, "mlp", cfg)
		if err != nil {
			return err
		}
		logits = x.MLP(p)
		if ce, err = nn.NewCrossEntropy(model, logits, "loss"); err != nil {
			return err
		}
		return model.Compile(ce.Mean, []*G.Node{logits})
	})
	if err != nil {
		return nil, err
	}
	if err := ce.SetRows(g.Split.Train, g.Labels); err != nil {
		return nil, err
	}
	task := &trainers.ModelTask{Model: model, Logits: logits, Opt: nn.NewAdam(m.LR, m.WeightDecay)}
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: m.Epochs_, Run: ctx.Run, Recorder: ctx.Recorder})
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	if ctx.Level == methods.Edge {
		zero := 0.0
		out.Privacy = &trainers.PrivacyReport{Level: "edge", Accountant: "none", Epsilon: &zero,
			Delta: 0, Notes: "the MLP never reads edges: ε = 0 at edge level"}
	}
	return out, nil
}
