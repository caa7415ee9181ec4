// Package mlp is the feature-only baseline: an MLP on node features that
// never reads the graph's edges.
package mlp

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
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
	// DP-SGD (node level)
	BatchSize  int
	Clip       float64
	Accountant string
}

func (*MLP) Name() string { return "mlp" }
func (*MLP) Short() string {
	return "MLP on node features only (no edges); with --privacy node it is DP-MLP (DP-Adam, features and labels private)"
}
func (*MLP) Levels() []methods.Level {
	return []methods.Level{methods.None, methods.Edge, methods.Node}
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
	fs.StringVar(&m.Norm, "norm", "none", "none, batchnorm or groupnorm after each hidden layer (node level: groupnorm only)")
	fs.IntVar(&m.BatchSize, "batch-size", 64, "node level: expected Poisson batch size B (sampling rate q = B/N_train)")
	fs.Float64Var(&m.Clip, "clip", 1, "node level: per-sample gradient L2 clipping bound C")
	fs.StringVar(&m.Accountant, "conversion", "improved", "node level: RDP to (ε, δ) conversion, improved or standard")
}

func (m *MLP) Validate() error {
	return methods.CheckAll(
		methods.Positive("hidden", m.Hidden), methods.Positive("layers", m.Layers),
		methods.Positive("epochs", m.Epochs_), methods.PositiveF("lr", m.LR),
		methods.Prob("dropout", m.Dropout), methods.NonNegF("weight-decay", m.WeightDecay),
		methods.Positive("batch-size", m.BatchSize), methods.PositiveF("clip", m.Clip))
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
	if ctx.Level == methods.Node {
		return m.runDP(ctx)
	}
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

// runDP trains DP-MLP: node-level DP where a node's features and label are
// the private unit. The MLP never reads edges, so each node is one DP-SGD
// sample; the accountant is RDP of the Poisson-subsampled Gaussian over
// exactly the number of steps run. With ε = ∞ the same pipeline runs with
// clipping and no noise.
func (m *MLP) runDP(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	train := g.Split.Train
	n := len(train)
	if n == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	norm, err := layers.ParseNorm(m.Norm)
	if err != nil {
		return nil, err
	}
	if norm == layers.NormBatch {
		return nil, fmt.Errorf("--norm batchnorm mixes samples and cannot be trained with DP-SGD; use --norm groupnorm")
	}
	conv, err := dp.ParseConversion(m.Accountant)
	if err != nil {
		return nil, err
	}
	q := math.Min(1, float64(m.BatchSize)/float64(n))
	steps := dp.Steps(m.Epochs_, q)
	priv, err := methods.CalibrateSGD(ctx, n, q, steps, m.Clip, conv)
	if err != nil {
		return nil, err
	}
	cfg, err := m.config(g.X.F, g.NumClasses)
	if err != nil {
		return nil, err
	}
	cfg.InputDropout = 0 // rows of a sparse batch are rewritten every step
	capacity := dp.DefaultCapacity(q, n)

	model := nn.NewModel(ctx.Seed)
	var batch *layers.FeatureBatch
	var ce *nn.CrossEntropy
	var logits *G.Node
	var sgd *dp.SGD
	src := dp.NewSource(ctx.Seed).Split("mlp.dpsgd")
	err = nn.Build(func() error {
		p, err := layers.NewMLP(model, "mlp", cfg)
		if err != nil {
			return err
		}
		if batch, err = layers.NewFeatureBatch(model, g.X, capacity, "X.batch"); err != nil {
			return err
		}
		model.StartRecording()
		batchLogits := batch.MLP(p)
		model.StopRecording()
		full, err := layers.NewFeatures(model, g.X, "X")
		if err != nil {
			return err
		}
		logits = full.MLP(p)
		if ce, err = nn.NewCrossEntropy(model, batchLogits, "loss"); err != nil {
			return err
		}
		sgd, err = dp.BuildSGD(model, ce.PerRow, dp.SGDConfig{Clip: m.Clip, Multiplier: priv.Multiplier,
			Rate: q, Samples: n, Capacity: capacity}, src, []*G.Node{logits})
		return err
	})
	if err != nil {
		return nil, err
	}
	rows := make([]int, 0, capacity)
	pos := make([]int, capacity)
	labels := make([]int, capacity)
	for i := range pos {
		pos[i] = i
	}
	fill := func(samples []int) error {
		rows = rows[:0]
		for k, s := range samples {
			rows = append(rows, train[s])
			labels[k] = g.Labels[train[s]]
		}
		if err := batch.Fill(rows); err != nil {
			return err
		}
		sgd.Groups.Singletons(len(samples))
		return ce.SetRows(pos[:len(samples)], labels)
	}
	task := &trainers.SGDTask{SGD: sgd, Model: model, Logits: logits, Opt: nn.NewAdam(m.LR, m.WeightDecay),
		Fill: fill, TotalSteps: steps, Epochs: m.Epochs_, Recorder: ctx.Recorder, Run: ctx.Run}
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: m.Epochs_, Run: ctx.Run, Recorder: ctx.Recorder})
	if err != nil {
		return nil, err
	}
	return &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc, Privacy: priv.Report}, nil
}
