package asgl

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Accounting modes (--accounting).
const (
	AccountingStrict = "strict"
	AccountingPaper  = "paper"
)

// Optimisers (--optimizer).
const (
	OptSGD  = "sgd"
	OptAdam = "adam"
)

// Config holds ASGL's hyperparameters.
type Config struct {
	Dim    int `flag:"embedding-dim" help:"k: embedding dimension of the discriminator and the generator"`
	Paths  int `flag:"paths" help:"N: walks per root (the discriminator's fakes, the generator's walks) and the most real pairs per root"`
	MaxLen int `flag:"max-len" help:"L: most hops of a walk (the depth of the BFS trees); R = Σ_{l≤L} D^l training subgraphs can differ between neighbours"`
	// Flags is D, the degree bound of each walk graph (G+ and G−), and
	// how it is enforced (Bound): public, sample (a keyed greedy cap: the
	// paper's constrained trees) or none (the raw graph, as the authors'
	// code: only without privacy or with --accounting paper). Without
	// privacy public walks the raw graph.
	degree.Flags
	Window      int     `flag:"window" help:"w: the generator's pairs are the walk nodes at most w hops apart"`
	TrainEpochs int     `flag:"epochs" help:"epochs of the alternating loop (each: the positive phase, then the negative)"`
	DiscSteps   int     `flag:"disc-steps" help:"discriminator steps per phase and epoch (n_dis; one fixed-size batch each)"`
	GenSteps    int     `flag:"gen-steps" help:"generator steps per phase and epoch (n_gen; one fixed-size batch each)"`
	DiscBatch   int     `flag:"disc-batch" help:"B_d: roots (training subgraphs) per discriminator batch, drawn without replacement from the node ids"`
	GenBatch    int     `flag:"gen-batch" help:"B_g: roots per generator batch"`
	Clip        float64 `flag:"clip" help:"C: L2 clip of each root's gradient (private runs)"`
	LR          float64 `flag:"lr" help:"learning rate of both players"`
	Optimizer   string  `flag:"optimizer" help:"adam or sgd (the authors' code, on summed rather than averaged losses)"`
	WeightDecay float64 `flag:"weight-decay" help:"λ: weight decay of every parameter row (decoupled from the gradient, so data-independent)"`
	Accounting  string  `flag:"accounting" help:"strict (discriminator and generator steps clipped, noised and accounted: proven) or paper (σ from Theorem 2 as printed:\ndiscriminator steps only, generators trained without noise as post-processing; the report then states ε = ∞)"`
}

// DefaultConfig is the paper's setting where the appendix gives one (N = 3,
// L = 4, B = 256) and the authors' code where it is silent (k = 128,
// window 3, λ = 1e-5, 10 steps per player per epoch, C = 1), with the
// degree bound D = N, the strict accounting, and Adam at 0.01 for 10
// epochs: the losses are averaged over each batch's roots (the code sums
// them for SGD at 0.05), and non-private runs on bitcoin_otc change by
// less than 0.01 in every metric from 10 to 30 epochs.
func DefaultConfig() Config {
	return Config{Dim: 128, Paths: 3, MaxLen: 4, Flags: degree.DefaultFlags(3), Window: 3,
		TrainEpochs: 10, DiscSteps: 10, GenSteps: 10, DiscBatch: 256, GenBatch: 256, Clip: 1, LR: 0.01,
		Optimizer: OptAdam, WeightDecay: 1e-5, Accounting: AccountingStrict}
}

// Bound is the degree bound of the walk graphs the flags set: D on every
// node's degree in G+ and in G−, public, a keyed sample
// (degree.SampleSymmetric) or none.
func (c *Config) Bound() (degree.Bound, error) {
	return c.Flags.Bound(degree.Undirected, "every node's degree in G+ and in G−")
}

// Validate checks the hyperparameters, and that the occurrence bound
// R_{D,L} is within walk.MaxReceptiveField.
func (c *Config) Validate() error {
	_, rErr := walk.ReceptiveField(c.MaxDegree, c.MaxLen)
	_, modeErr := c.Flags.Mode()
	return methods.CheckFields(c,
		methods.Width(&c.Dim), methods.Positive(&c.Paths), methods.Depth(&c.MaxLen), methods.Positive(&c.MaxDegree),
		methods.Require(&c.MaxDegree, rErr == nil || c.MaxDegree <= 0, "with MaxLen (--max-len) %d gives too large an occurrence bound: %v", c.MaxLen, rErr),
		methods.Require(&c.DegreeBound, modeErr == nil, "%v", modeErr), methods.Depth(&c.Window),
		methods.Epochs(&c.TrainEpochs),
		methods.Require(&c.DiscSteps, c.DiscSteps > 0 && c.DiscSteps <= methods.MaxEpochs, "must be in [1, %d], got %d", methods.MaxEpochs, c.DiscSteps),
		methods.Require(&c.GenSteps, c.GenSteps >= 0 && c.GenSteps <= methods.MaxEpochs, "must be in [0, %d], got %d", methods.MaxEpochs, c.GenSteps),
		methods.Positive(&c.DiscBatch), methods.Positive(&c.GenBatch),
		methods.PositiveF(&c.Clip), methods.PositiveF(&c.LR), methods.OneOf(&c.Optimizer, OptSGD, OptAdam),
		methods.NonNegF(&c.WeightDecay), methods.OneOf(&c.Accounting, AccountingStrict, AccountingPaper))
}

// ASGL is the method with its configuration.
type ASGL struct{ cfg Config }

// New returns ASGL with the configuration cfg.
func New(cfg Config) *ASGL { return &ASGL{cfg: cfg} }

func (*ASGL) Name() string { return "asgl" }
func (*ASGL) Short() string {
	return "ASGL: adversarial signed-graph embedding (GraphGAN G+/D+, G−/D− on constrained BFS-tree walks), players trained with DP-SGD over training subgraphs (node DP); edge-sign prediction and SSI"
}

// Levels: ASGL runs without privacy and at node level.
func (*ASGL) Levels() []methods.Level { return []methods.Level{methods.None, methods.Node} }

// DefaultSplit is unused: the task holds out edges, not nodes.
func (*ASGL) DefaultSplit(string) string { return "fixed" }

// Task is edge-sign prediction (the datasets' published 80/20 edge split;
// 20 % of the edges held out on a signed graph without one).
func (*ASGL) Task() run.Task { return run.SignedLink{TestFraction: 0.2} }

func (m *ASGL) Config() any     { return &m.cfg }
func (m *ASGL) Validate() error { return m.cfg.Validate() }
func (m *ASGL) Epochs() int     { return m.cfg.TrainEpochs }

// Run trains ASGL once and measures the discriminator's embedding (the
// release) and the generator's (gen_* metrics).
func (m *ASGL) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := m.checkMemory(ctx); err != nil {
		return nil, err
	}
	p, err := m.calibrate(ctx, g.N)
	if err != nil {
		return nil, err
	}
	r, err := m.newRun(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := r.train(); err != nil {
		return nil, err
	}
	rep, err := run.Report(ctx, p.Plan)
	if err != nil {
		return nil, err
	}
	p.annotate(rep)
	k := m.cfg.Dim
	extra, err := run.SignMetrics(g, r.disc.p.Emb.Value(), k)
	if err != nil {
		return nil, fmt.Errorf("evaluating the discriminator's embedding: %w", err)
	}
	gen, err := run.SignMetrics(g, r.gen.p.Emb.Value(), k)
	if err != nil {
		return nil, fmt.Errorf("evaluating the generator's embedding: %w", err)
	}
	for key, v := range gen {
		extra["gen_"+key] = v
	}
	return &methods.Outcome{ValAcc: math.NaN(), Privacy: rep, Extra: extra}, nil
}

// BuildModel builds the positive phase's discriminator D+ as a run builds
// it, for inspection: embedding lookups, σ(d_uᵀd_v + b) over a batch of
// pairs and the weighted cross-entropy, and at node level DP-SGD's per-root
// clipping and noise nodes (the generators are built alike by
// layers.NewGANPlayer). Without privacy the first batch of roots' real and
// fake pairs is loaded, so the loss and its gradients can be evaluated
// (--grad-check). Batches larger than the graph's node ids are cut to them
// (the 40-node graph of --grad-check), which a run refuses instead.
func (m *ASGL) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	c := m.cfg
	c.DiscBatch, c.GenBatch = min(c.DiscBatch, ctx.Graph.N), min(c.GenBatch, ctx.Graph.N)
	cut := New(c)
	p, err := cut.calibrate(ctx, ctx.Graph.N)
	if err != nil {
		return nil, err
	}
	r, err := cut.newRun(ctx, p)
	if err != nil {
		return nil, err
	}
	if !p.private {
		ph := r.phases[0]
		if err := r.beginDisc(ph); err != nil {
			return nil, err
		}
		roots := make([]int, min(r.disc.chunk, ctx.Graph.N))
		for i := range roots {
			roots[i] = i
		}
		pairs, err := r.discPairs(ph, roots)
		if err != nil {
			return nil, err
		}
		if err := r.disc.p.SetPairs(pairs, nil, 0); err != nil {
			return nil, err
		}
	}
	return r.disc.m, nil
}

var _ run.Builder = (*ASGL)(nil)

// checkMemory refuses a run whose players would not fit: per player the
// embedding, its gradient, noise, clipped sum and optimiser state (about
// eight n×k matrices), and the pair tensors of one graph run.
func (m *ASGL) checkMemory(ctx *methods.Context) error {
	c := m.cfg
	n := ctx.Graph.N
	pairs := c.DiscBatch*2*c.Paths + min(c.GenBatch, genChunk)*c.Paths*walkPairs(c.MaxLen, c.Window)
	b := run.DenseBytes(n, c.Dim+1, 16) + run.DenseBytes(2*pairs, c.Dim, 12)
	return run.CheckMemory(ctx, fmt.Sprintf("asgl on %d nodes (dimension %d)", n, c.Dim), b)
}
