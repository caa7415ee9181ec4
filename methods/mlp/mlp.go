// Package mlp is the feature-only baseline: an MLP on node features that
// never reads the graph's edges.
package mlp

import (
	"fmt"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds the MLP's hyperparameters.
type Config struct {
	Hidden      int     `flag:"hidden" help:"hidden width"`
	Layers      int     `flag:"layers" help:"number of Linear layers"`
	TrainEpochs int     `flag:"epochs" help:"training epochs (full-batch steps)"`
	LR          float64 `flag:"lr" help:"Adam learning rate"`
	WeightDecay float64 `flag:"weight-decay" help:"L2 weight decay"`
	Dropout     float64 `flag:"dropout" help:"dropout probability between layers"`
	// InDropout -1 is automatic: Dropout without DP-SGD, 0 with it.
	InDropout  float64 `flag:"input-dropout" help:"dropout probability on the input features; default: --dropout without DP-SGD,\n0 with it (DP-MLP on cora_ml at ε = 8, seed 1: 0.651 without, 0.513 with input dropout 0.5)"`
	Activation string  `flag:"activation" help:"relu or selu"`
	Norm       string  `flag:"norm" help:"none, batchnorm or groupnorm after each hidden layer (node level: groupnorm only)"`
	// DP-SGD (node level)
	BatchSize  int     `flag:"batch-size" help:"node level: expected Poisson batch size B (sampling rate q = B/N_train)"`
	Clip       float64 `flag:"clip" help:"node level: per-sample gradient L2 clipping bound C"`
	Accountant string  `flag:"conversion" help:"node level: auto (the PLD accountant where every release has a PLD, else RDP with the improved conversion), improved or standard (RDP to (ε, δ) conversion)"`
}

// DefaultConfig is the baseline's setting.
func DefaultConfig() Config {
	return Config{Hidden: 64, Layers: 2, TrainEpochs: 200, LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5, InDropout: -1,
		Activation: "relu", Norm: "none", BatchSize: 64, Clip: 1, Accountant: dp.Auto}
}

// Validate checks the hyperparameters.
func (c *Config) Validate() error {
	return methods.CheckFields(c,
		methods.Width(&c.Hidden), methods.Depth(&c.Layers),
		methods.Epochs(&c.TrainEpochs), methods.PositiveF(&c.LR),
		methods.Prob(&c.Dropout), methods.NonNegF(&c.WeightDecay),
		methods.Require(&c.InDropout, c.InDropout == -1 || (c.InDropout >= 0 && c.InDropout < 1), "must be in [0, 1) (or -1: automatic), got %v", c.InDropout),
		methods.Positive(&c.BatchSize), methods.PositiveF(&c.Clip))
}

// MLP is the feature-only baseline. Non-private training is full batch with
// Adam and best-validation restore.
type MLP struct{ cfg Config }

// New returns the MLP with the configuration cfg.
func New(cfg Config) *MLP { return &MLP{cfg: cfg} }

func (*MLP) Name() string { return "mlp" }
func (*MLP) Short() string {
	return "MLP on node features only (no edges); with --privacy node it is DP-MLP (DP-Adam, features and labels private)"
}
func (*MLP) Levels() []methods.Level {
	return []methods.Level{methods.None, methods.Edge, methods.Node}
}
func (*MLP) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }
func (m *MLP) Config() any                      { return &m.cfg }
func (m *MLP) Validate() error                  { return m.cfg.Validate() }
func (m *MLP) Epochs() int                      { return m.cfg.TrainEpochs }

// inputDropout resolves --input-dropout: the given value, or by default
// --dropout without DP-SGD and 0 with it.
func (m *MLP) inputDropout(dpsgd bool) float64 {
	switch {
	case m.cfg.InDropout >= 0:
		return m.cfg.InDropout
	case dpsgd:
		return 0
	}
	return m.cfg.Dropout
}

// config is the MLP of a run (dpsgd: trained with DP-SGD at node level).
func (m *MLP) config(in, out int, dpsgd bool) (layers.MLPConfig, error) {
	act, err := layers.ParseActivation(m.cfg.Activation)
	if err != nil {
		return layers.MLPConfig{}, err
	}
	norm, err := layers.ParseNorm(m.cfg.Norm)
	if err != nil {
		return layers.MLPConfig{}, err
	}
	dims := []int{in}
	for i := 1; i < m.cfg.Layers; i++ {
		dims = append(dims, m.cfg.Hidden)
	}
	dims = append(dims, out)
	return layers.MLPConfig{Dims: dims, Activation: act, Norm: norm, Dropout: m.cfg.Dropout,
		InputDropout: m.inputDropout(dpsgd), PlainLast: true}, nil
}

// BuildModel builds the graph Run trains: with ctx.Level node, the DP-SGD
// graph (ghost norms, clip factors, clipped sums, noise).
func (m *MLP) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	if ctx.Level == methods.Node {
		mod, tr, _, src, err := m.dpTask(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := mod.Prepare(ctx, tr, src); err != nil {
			return nil, err
		}
		return mod.Model, nil
	}
	mod, tr, err := m.module(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := mod.Prepare(ctx, tr, nil); err != nil {
		return nil, err
	}
	return mod.Model, nil
}

// module builds the non-private MLP as a run.Module: full-batch
// training on the training rows, evaluation on every node.
func (m *MLP) module(ctx *methods.Context) (*run.Module, run.ModuleTraining, error) {
	g := ctx.Graph
	tr := run.ModuleTraining{Epochs: m.cfg.TrainEpochs, LR: m.cfg.LR, WeightDecay: m.cfg.WeightDecay}
	cfg, err := m.config(g.X.F, g.NumClasses, false)
	if err != nil {
		return nil, tr, err
	}
	mod, err := run.BuildModule(ctx.Seed, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train), run.MLPBody("mlp", cfg))
	return mod, tr, err
}

// dpModule builds DP-MLP: node-level DP where a node's features and label
// are the private unit. The MLP never reads edges, so each node is one
// DP-SGD sample; the noise multiplier is calibrated for RDP of the
// Poisson-subsampled Gaussian over exactly the steps run (ε = ∞: clipping
// and no noise). It is a run.Module: a batch path over Poisson-sampled
// training rows and an evaluation path over all nodes.
func (m *MLP) dpModule(ctx *methods.Context) (*run.Module, run.ModuleTraining, *run.Calibrated, error) {
	g := ctx.Graph
	train := g.Split.Train
	var tr run.ModuleTraining
	if len(train) == 0 {
		return nil, tr, nil, fmt.Errorf("the split has no training nodes")
	}
	cfg, err := m.config(g.X.F, g.NumClasses, true)
	if err != nil {
		return nil, tr, nil, err
	}
	if cfg.Norm == layers.NormBatch {
		return nil, tr, nil, fmt.Errorf("--norm batchnorm mixes samples and cannot be trained with DP-SGD; use --norm groupnorm")
	}
	conv, err := m.accountant()
	if err != nil {
		return nil, tr, nil, err
	}
	q := run.NodeRate(m.cfg.BatchSize, len(train))
	tr = run.ModuleTraining{Epochs: m.cfg.TrainEpochs, LR: m.cfg.LR, WeightDecay: m.cfg.WeightDecay, Private: true, Clip: m.cfg.Clip, Rate: q, Ledger: "dpsgd"}
	priv, err := calibrate(ctx, len(train), q, tr.SGDSteps(), m.cfg.Clip, conv)
	if err != nil {
		return nil, tr, nil, err
	}
	tr.Multiplier, tr.Plan = priv.Multiplier, priv.Plan
	run.NoteSelection(ctx, priv.Plan, 1)
	mod, err := run.BuildModule(ctx.Seed, []*graphs.Features{g.X}, []string{"X"}, tr, len(train), run.MLPBody("mlp", cfg))
	return mod, tr, priv, err
}

// dpTask is dpModule plus the DP-SGD noise source.
func (m *MLP) dpTask(ctx *methods.Context) (*run.Module, run.ModuleTraining, *run.Calibrated, *dp.Source, error) {
	mod, tr, priv, err := m.dpModule(ctx)
	if err != nil {
		return nil, tr, nil, nil, err
	}
	src, err := ctx.NoiseSource("mlp.dpsgd")
	return mod, tr, priv, src, err
}

// Run trains the MLP once. Edge-level privacy is free: the model never
// reads edges, so its ε is 0 for any edge-level budget.
func (m *MLP) Run(ctx *methods.Context) (*methods.Outcome, error) {
	if err := run.Begin(ctx, "mlp", m.cfg.Hidden, m.cfg.Layers); err != nil {
		return nil, err
	}
	if ctx.Level == methods.Node {
		mod, tr, priv, src, err := m.dpTask(ctx)
		if err != nil {
			return nil, err
		}
		res, err := mod.Train(ctx, tr, src)
		if err != nil {
			return nil, err
		}
		out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
		return out, m.finish(ctx, out, mod, priv.Plan)
	}
	mod, tr, err := m.module(ctx)
	if err != nil {
		return nil, err
	}
	res, err := mod.Train(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	var plan *dp.Plan
	if ctx.Level == methods.Edge {
		plan = &dp.Plan{Level: "edge", Accountant: "none", Epsilon: ctx.Epsilon,
			Relation: dp.Relation{Unit: dp.UnitEdge, Change: dp.ChangeAddRemove}, // ε = 0 for any edge relation
			Notes:    []string{"the MLP never reads edges: ε = 0 at edge level"}}
	}
	return out, m.finish(ctx, out, mod, plan)
}

// finish completes the outcome: the privacy report of plan (nil: no
// privacy claim), the scores (the trained MLP's posteriors) and queries:
// the MLP over the query features. A query reads no edge and applies the
// released model to the querier's features, so it costs nothing beyond
// the run.
func (m *MLP) finish(ctx *methods.Context, out *methods.Outcome, mod *run.Module, plan *dp.Plan) error {
	g := ctx.Graph
	out.Scores = run.Softmax(nn.Values(mod.Logits), g.N, g.NumClasses)
	return run.Finish(ctx, out, plan, run.FeatureInference(mod, g.NumClasses, func(*graphs.Graph) *methods.QueryCost {
		if plan == nil || !ctx.Private() {
			return nil
		}
		return methods.NewQueryCost(ctx, plan, "the MLP on the query features (reads no edge; post-processing of the released model)", nil)
	}))
}

var _ run.Builder = (*MLP)(nil)

// AuditTarget is one DP-SGD step of DP-MLP, for `dpgnn audit`.
func (m *MLP) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	return run.SGDAudit(ctx, opts, m.dpModule)
}

var _ run.Auditor = (*MLP)(nil)

// AccountCounts: DP-MLP's plan needs the training-node count (node level).
func (m *MLP) AccountCounts(level methods.Level) []string {
	if level == methods.Node {
		return []string{run.CountTrainNodes}
	}
	return nil
}

// AccountPlan is DP-MLP's privacy plan for these counts (`dpgnn account
// mlp`): one DP-SGD run and its private selection, if any.
func (m *MLP) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	if ctx.Level != methods.Node {
		return nil, fmt.Errorf("mlp releases nothing private at %s level (it never reads edges)", ctx.Level)
	}
	if err := methods.CheckAll(m.Validate(), run.CheckCounts(c, []string{run.CountTrainNodes})); err != nil {
		return nil, err
	}
	conv, err := m.accountant()
	if err != nil {
		return nil, err
	}
	q := run.NodeRate(m.cfg.BatchSize, c.TrainNodes)
	return calibrate(ctx, c.TrainNodes, q, dpnn.Steps(m.cfg.TrainEpochs, q), m.cfg.Clip, conv)
}

// accountant returns the accountant --conversion names: dp.Auto, or the
// RDP accountant with that conversion.
func (m *MLP) accountant() (string, error) {
	if strings.EqualFold(m.cfg.Accountant, dp.Auto) {
		return dp.Auto, nil
	}
	conv, err := dp.ParseConversion(m.cfg.Accountant)
	if err != nil {
		return "", fmt.Errorf("--conversion: %w (or auto)", err)
	}
	return conv.Accountant(), nil
}

// calibrate is DP-MLP's privacy plan: one Poisson-subsampled Gaussian
// DP-SGD run of `steps` steps at rate q over n training nodes (node units;
// the named accountant: dp.Auto, rdp or rdp-standard), plus the run's
// private model selection. A private plan lists n as treated as public
// (run.TrainCountUse): the rate, the steps and the noise follow it.
func calibrate(ctx *methods.Context, n int, q float64, steps int, clip float64, accountant string) (*run.Calibrated, error) {
	c, err := run.Calibrate(ctx, run.DeltaUnits{Unit: "node", Paper: run.PaperDigits(n, "training nodes")}, accountant,
		func(z float64) []dp.Planned {
			return append([]dp.Planned{run.SGDRelease(q, steps, clip, z)}, run.SelectionReleases(ctx, 1)...)
		},
		func(z float64) map[string]float64 { return run.SGDNoise(q, steps, clip, z) })
	if err != nil {
		return nil, err
	}
	if ctx.Private() {
		c.Plan.Uses = append(c.Plan.Uses, run.TrainCountUse(n, q))
	}
	return c, nil
}

var _ run.Accountable = (*MLP)(nil)
