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

// net is the MLP's expression graph and what training it needs. Run and
// BuildModel both get it from build.
type net struct {
	model  *nn.Model
	logits *G.Node // over all nodes (evaluation)
	ce     *nn.CrossEntropy
	// node-level DP-SGD only
	sgd      *dp.SGD
	batch    *layers.FeatureBatch
	priv     *methods.SGDPrivacy
	steps    int
	capacity int
}

// BuildModel builds the graph Run trains: with ctx.Level node, the DP-SGD
// graph (ghost norms, clip factors, clipped sums, noise).
func (m *MLP) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	n, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	return n.model, nil
}

// build constructs the MLP. Without node-level privacy it is compiled for
// full-batch training on the split's training nodes. At node level it is
// DP-MLP: a node's features and label are the private unit, and since the
// MLP never reads edges each node is one DP-SGD sample; the noise
// multiplier is calibrated for RDP of the Poisson-subsampled Gaussian over
// exactly the steps run (ε = ∞: clipping and no noise). The training path
// is a fixed-capacity batch of feature rows; the evaluation path shares the
// parameters over all nodes.
func (m *MLP) build(ctx *methods.Context) (*net, error) {
	g := ctx.Graph
	private := ctx.Level == methods.Node
	cfg, err := m.config(g.X.F, g.NumClasses)
	if err != nil {
		return nil, err
	}
	n := &net{model: nn.NewModel(ctx.Seed)}
	var q float64
	train := g.Split.Train
	if private {
		if len(train) == 0 {
			return nil, fmt.Errorf("the split has no training nodes")
		}
		if cfg.Norm == layers.NormBatch {
			return nil, fmt.Errorf("--norm batchnorm mixes samples and cannot be trained with DP-SGD; use --norm groupnorm")
		}
		conv, err := dp.ParseConversion(m.Accountant)
		if err != nil {
			return nil, err
		}
		q = math.Min(1, float64(m.BatchSize)/float64(len(train)))
		n.steps = dp.Steps(m.Epochs_, q)
		if n.priv, err = methods.CalibrateSGD(ctx, len(train), q, n.steps, m.Clip, conv); err != nil {
			return nil, err
		}
		cfg.InputDropout = 0 // rows of a sparse batch are rewritten every step
		n.capacity = dp.DefaultCapacity(q, len(train))
	}
	model := n.model
	err = nn.Build(func() error {
		p, err := layers.NewMLP(model, "mlp", cfg)
		if err != nil {
			return err
		}
		var lossLogits *G.Node
		if private {
			if n.batch, err = layers.NewFeatureBatch(model, g.X, n.capacity, "X.batch"); err != nil {
				return err
			}
			model.StartRecording()
			lossLogits = n.batch.MLP(p)
			model.StopRecording()
		}
		full, err := layers.NewFeatures(model, g.X, "X")
		if err != nil {
			return err
		}
		n.logits = full.MLP(p)
		if !private {
			lossLogits = n.logits
		}
		if n.ce, err = nn.NewCrossEntropy(model, lossLogits, "loss"); err != nil {
			return err
		}
		if !private {
			return model.Compile(n.ce.Mean, []*G.Node{n.logits})
		}
		src, err := ctx.NoiseSource("mlp.dpsgd")
		if err != nil {
			return err
		}
		n.sgd, err = dp.BuildSGD(model, n.ce.PerRow, dp.SGDConfig{Clip: m.Clip, Multiplier: n.priv.Multiplier,
			Rate: q, Samples: len(train), Capacity: n.capacity}, src, []*G.Node{n.logits})
		return err
	})
	if err != nil {
		return nil, err
	}
	if !private {
		if err := n.ce.SetRows(train, g.Labels); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Run trains the MLP once. Edge-level privacy is free: the model never
// reads edges, so its ε is 0 for any edge-level budget.
func (m *MLP) Run(ctx *methods.Context) (*methods.Outcome, error) {
	n, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	if n.sgd != nil {
		return m.runDP(ctx, n)
	}
	g := ctx.Graph
	task := &trainers.ModelTask{Model: n.model, Logits: n.logits, Opt: nn.NewAdam(m.LR, m.WeightDecay)}
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

// runDP trains DP-MLP (built by build at node level) with Poisson-sampled
// DP-SGD and Adam for exactly the accounted number of steps.
func (m *MLP) runDP(ctx *methods.Context, n *net) (*methods.Outcome, error) {
	g := ctx.Graph
	train := g.Split.Train
	rows := make([]int, 0, n.capacity)
	pos := make([]int, n.capacity)
	labels := make([]int, n.capacity)
	for i := range pos {
		pos[i] = i
	}
	fill := func(samples []int) error {
		rows = rows[:0]
		for k, s := range samples {
			rows = append(rows, train[s])
			labels[k] = g.Labels[train[s]]
		}
		if err := n.batch.Fill(rows); err != nil {
			return err
		}
		n.sgd.Groups.Singletons(len(samples))
		return n.ce.SetRows(pos[:len(samples)], labels)
	}
	task := &trainers.SGDTask{SGD: n.sgd, Model: n.model, Logits: n.logits, Opt: nn.NewAdam(m.LR, m.WeightDecay),
		Fill: fill, TotalSteps: n.steps, Epochs: m.Epochs_, Recorder: ctx.Recorder, Run: ctx.Run}
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: m.Epochs_, Run: ctx.Run, Recorder: ctx.Recorder})
	if err != nil {
		return nil, err
	}
	return &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc, Privacy: n.priv.Report}, nil
}

var _ methods.Builder = (*MLP)(nil)
