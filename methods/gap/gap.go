// Package gap is GAP (Sajadmanesh et al., USENIX Security 2023): an encoder
// MLP trained without edges, K hops of aggregation perturbation (NAP with
// noise at every hop) computed once and cached, and a classifier over all
// hops concatenated, at edge or node level. --encoder-folds k (not in the
// paper) replaces the encoder embedding by cross-fitted class probabilities
// so the classifier sees honest hop-0 features on its own training nodes.
package gap

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/ap"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds GAP's hyperparameters: aggregation perturbation's and the
// encoder's.
type Config struct {
	ap.Config
	EncoderLayers int `flag:"encoder-layers" help:"encoder MLP layers (0: no encoder, aggregate raw features); -1: automatic, 0 without privacy\n(--privacy none or ε = inf) and 2 in a private run or with --encoder-folds, selected on validation (docs/results.md)"`
	EncoderEpochs int `flag:"encoder-epochs" help:"encoder pre-training epochs"`
	EncoderFolds  int `flag:"encoder-folds" help:"k ≥ 2: cross-fit the encoder over k folds of the training nodes and use its class probabilities\n(out-of-fold on training nodes) as X0 — not in the GAP paper; edge level and non-private only. 0: GAP's encoder"`
}

// DefaultConfig is aggregation perturbation's defaults (selected on
// validation) and GAP's encoder by privacy (Auto, resolved by At): none
// without privacy (the hops aggregate the raw features; on cora 70 / 10 /
// 20 validation accuracy 0.873 against 0.847 with the encoder,
// docs/results.md), the paper's two-layer encoder trained for 100 epochs
// in a private run.
func DefaultConfig() Config {
	return Config{Config: ap.DefaultConfig(), EncoderLayers: Auto, EncoderEpochs: 100}
}

// Auto is the value of --encoder-layers that At resolves by privacy level.
const Auto = -1

// At is the configuration a run uses: an automatic --encoder-layers set
// to 0 for a non-private run (--privacy none, or ε = ∞ at any level: no
// noise) and to 2 for a private one (methods.Context.Private) or with
// --encoder-folds (which needs an encoder); an explicit value as given. It
// reads only whether the run is private and the flags, never the data,
// and for a private run it gives the old default (two encoder layers), so
// no private run's releases or accounting change. At is idempotent.
func (c Config) At(private bool) Config {
	if c.EncoderLayers == Auto {
		c.EncoderLayers = 2
		if !private && c.EncoderFolds < 2 {
			c.EncoderLayers = 0
		}
	}
	return c
}

// Validate checks the hyperparameters.
func (c *Config) Validate() error {
	return methods.CheckAll(c.Config.Validate(), methods.CheckFields(c,
		methods.Epochs(&c.EncoderEpochs),
		methods.Require(&c.EncoderLayers, c.EncoderLayers == Auto || (c.EncoderLayers >= 0 && c.EncoderLayers <= methods.MaxDepth),
			"must be in [0, %d] (or -1: automatic), got %d", methods.MaxDepth, c.EncoderLayers),
		methods.Require(&c.EncoderFolds, c.EncoderFolds == 0 || c.EncoderFolds >= 2, "must be 0 (GAP's encoder) or at least 2, got %d", c.EncoderFolds),
		methods.Require(&c.EncoderFolds, c.EncoderFolds < 2 || c.EncoderLayers != 0, "needs an encoder: EncoderLayers (--encoder-layers) must be positive or automatic, got %d", c.EncoderLayers)))
}

// GAP is the method with its configuration.
type GAP struct {
	cfg Config
	// Base gives its levels, default split, audit target and plan from
	// counts.
	ap.Base
}

// New returns GAP with the configuration cfg.
func New(cfg Config) *GAP {
	m := &GAP{cfg: cfg}
	m.Base = ap.Base{Cfg: &m.cfg.Config, Calibrate: m.calibrate}
	return m
}

// at is the method with its configuration resolved for a private or a
// non-private run (Config.At); Run and BuildModel work on it, calibrate
// resolves its own.
func (m *GAP) at(private bool) *GAP { return New(m.cfg.At(private)) }

func (*GAP) Name() string { return "gap" }
func (*GAP) Short() string {
	return "GAP: encoder, K hops of perturbed aggregation (cached), classifier over all hops (edge or node DP)"
}

func (m *GAP) Config() any     { return &m.cfg }
func (m *GAP) Validate() error { return m.cfg.Validate() }

// Epochs is the number of training epochs a run reports (the progress bar's
// total): every encoder's (k of them when cross-fitting), then the
// classifier's. An automatic --encoder-layers counts the encoder (whether
// the run is private is not known here; a non-private run, which has none,
// reports fewer).
func (m *GAP) Epochs() int {
	if m.cfg.EncoderLayers == 0 {
		return m.cfg.TrainEpochs
	}
	return max(1, m.cfg.EncoderFolds)*m.cfg.EncoderEpochs + m.cfg.TrainEpochs
}

// Ledger names of GAP's releases.
const (
	ledgerNAP = "nap"
)

// calibrate returns the noise multiplier: at edge level for K NAP calls of
// sensitivity 1; at node level one z shared by the encoder's DP-SGD, the K
// NAP calls (std z·√D) and the classifier's DP-SGD (and private model
// selections), composed in RDP.
func (m *GAP) calibrate(ctx *methods.Context, setup *ap.APSetup) (*run.Calibrated, error) {
	// account and audit reach here unresolved
	m = m.at(ctx.Private())
	modules := 1 // the classifier, plus each encoder
	if m.cfg.EncoderLayers > 0 {
		modules += max(1, m.cfg.EncoderFolds)
	}
	tEnc, tCls := m.cfg.ModuleSteps(ctx, setup.Rate, m.cfg.EncoderLayers > 0, m.cfg.EncoderEpochs)
	return m.cfg.Plan(ctx, setup, func(z float64) []dp.Planned {
		rel := []dp.Planned{{Name: ledgerNAP, What: fmt.Sprintf("NAP aggregation, %d hop(s): Gaussian noise std %.4g on sums of row-normalised embeddings (sensitivity %.4g)",
			m.cfg.Hops, z*setup.Sensitivity, setup.Sensitivity), Event: dp.GaussianEvent{Multiplier: z, Count: m.cfg.Hops}}}
		rel = append(rel, m.cfg.ModuleReleases(ctx, setup.Rate, z, tEnc, tCls)...)
		return append(rel, run.SelectionReleases(ctx, modules)...)
	}, func(z float64, rec map[string]float64) {
		m.cfg.ModuleNoise(rec, setup.Rate, z, tEnc, tCls)
	}, modules)
}

// prepare bounds degrees (node level), calibrates the noise and picks the
// norm layer: BatchNorm at edge level and without privacy, none at node
// level (GAP's node level runs without BatchNorm), unless --norm says.
func (m *GAP) prepare(ctx *methods.Context) (*ap.APSetup, *run.Calibrated, layers.NormKind, error) {
	if m.cfg.EncoderFolds >= 2 {
		if ctx.Level == methods.Node {
			return nil, nil, 0, fmt.Errorf("--encoder-folds is for edge level and non-private runs: at node level each fold's DP-SGD run would need its own accounting")
		}
		if m.cfg.EncoderFolds > len(ctx.Graph.Split.Train) {
			return nil, nil, 0, fmt.Errorf("--encoder-folds %d: only %d training nodes", m.cfg.EncoderFolds, len(ctx.Graph.Split.Train))
		}
	}
	return ap.Prepare(ctx, &m.cfg.Modules, m.cfg.SetupAP, m.calibrate)
}

// Run trains GAP once, with its configuration resolved for the run
// (Config.At).
func (m *GAP) Run(ctx *methods.Context) (*methods.Outcome, error) {
	return m.at(ctx.Private()).run(ctx)
}

// run trains the resolved method once.
func (m *GAP) run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := run.Begin(ctx, "gap", m.cfg.Hidden, m.cfg.Hops+2*max(1, m.cfg.BaseLayers)+m.cfg.EncoderLayers); err != nil {
		return nil, err
	}
	setup, priv, norm, err := m.prepare(ctx)
	if err != nil {
		return nil, err
	}
	z := priv.Multiplier
	src, err := ctx.NoiseSource("gap")
	if err != nil {
		return nil, err
	}
	nTrain := len(g.Split.Train)

	// 1. Encoder, trained on features and labels only.
	x0, width, enc, err := m.encode(ctx, setup, priv, norm, src.Split("gap.encoder"))
	if err != nil {
		return nil, err
	}
	// 2. K hops of NAP, computed once and cached: the only adjacency access.
	hops, err := m.aggregate(ctx, setup, priv.Plan, z, x0, width, src.Split("gap.nap"))
	if err != nil {
		return nil, err
	}
	// 3. Classifier over the cached hops (post-processing at edge level).
	names := make([]string, len(hops))
	for i := range names {
		names[i] = fmt.Sprintf("X%d", i)
	}
	tr := m.cfg.Training(ctx, priv.Plan, setup.Rate, z, m.cfg.TrainEpochs, ap.LedgerClassifier)
	mod, err := run.BuildModule(ctx.Seed+1, hops, names, tr, nTrain, m.cfg.Classifier(ctx.Level, "gap", g.NumClasses, norm, m.cfg.EncoderLayers == 0))
	if err != nil {
		return nil, err
	}
	res, err := mod.Train(ctx, tr, src.Split("gap.classifier"))
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	return out, run.FinishModel(ctx, out, "gap", priv.Plan, mod.Logits, func(qsrc *dp.Source) func(*graphs.Graph) (*run.Inference, error) {
		return m.inference(ctx, setup, priv, enc, mod, qsrc)
	})
}

// inference is the trained GAP's query over a graph h: the encoder over
// the query features, K NAP hops over h with fresh noise from the
// mechanism source (each query K new Gaussian releases, recorded under
// methods.LedgerQueries), the classifier over the hops.
func (m *GAP) inference(ctx *methods.Context, setup *ap.APSetup, priv *run.Calibrated, enc, cls *run.Module, qsrc *dp.Source) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		cost := m.cfg.NAPQueryCost(ctx, priv, setup.Sensitivity)
		src := qsrc.Split("graph")
		q := run.NewQuery(h.N, ctx.Graph.X.F, cost, func() (methods.QueryFunc, error) {
			if m.cfg.EncoderFolds >= 2 {
				return nil, fmt.Errorf("gap --encoder-folds %d: queries are not supported (X0 comes from %d cross-fitted encoders)", m.cfg.EncoderFolds, m.cfg.EncoderFolds)
			}
			adj, err := m.cfg.QueryAdj(ctx.Level, h, src.Split("degree-bound"))
			if err != nil {
				return nil, err
			}
			nap := layers.NewNAP("gap.query.nap", adj, priv.Multiplier*setup.Sensitivity, src.Split("nap"))
			if err := ap.RecordQueryNAP(cost, nap, m.cfg.Hops, priv.Multiplier, setup.Sensitivity); err != nil {
				return nil, err
			}
			encEval, clsEval, err := ap.QueryEvaluators(enc, cls, h.N)
			if err != nil {
				return nil, err
			}
			return func(x *graphs.Features) ([]float64, error) {
				x0, width := x, x.F
				if encEval != nil {
					outs, err := encEval.Outputs(x)
					if err != nil {
						return nil, err
					}
					x0, width = layers.DenseFeatures(outs[0], h.N, m.cfg.Hidden), m.cfg.Hidden
				}
				hops, err := m.hops(nap, h.N, x0, width)
				if err != nil {
					return nil, err
				}
				logits, err := clsEval.Logits(hops...)
				if err != nil {
					return nil, err
				}
				return run.Softmax(logits, h.N, h.NumClasses), nil
			}, nil
		})
		return &run.Inference{Query: q, Cost: cost}, nil
	}
}

// encode trains the encoder (when EncoderLayers > 0) and returns X0, its
// width and the encoder (nil without one, or cross-fitted): GAP's
// row-normalised encoder embedding for all nodes or, with EncoderFolds ≥ 2,
// cross-fitted class probabilities (encodeCrossFit).
func (m *GAP) encode(ctx *methods.Context, setup *ap.APSetup, priv *run.Calibrated, norm layers.NormKind, src *dp.Source) (*graphs.Features, int, *run.Module, error) {
	g := ctx.Graph
	if m.cfg.EncoderLayers == 0 {
		return g.X, g.X.F, nil, nil
	}
	if m.cfg.EncoderFolds >= 2 {
		x0, width, err := m.encodeCrossFit(ctx, setup, norm, src)
		return x0, width, nil, err
	}
	mod, err := m.cfg.TrainEncoder(ctx, m.cfg.Training(ctx, priv.Plan, setup.Rate, priv.Multiplier, m.cfg.EncoderEpochs, ap.LedgerEncoder), m.cfg.EncoderLayers, norm, src, ctx.Seed, "gap")
	if err != nil {
		return nil, 0, nil, err
	}
	x0 := append([]float64(nil), nn.Values(mod.Outputs[0])...)
	return layers.DenseFeatures(x0, g.N, m.cfg.Hidden), m.cfg.Hidden, mod, nil
}

// encodeCrossFit is the cross-fitted encoder (--encoder-folds k, edge level
// and non-private only): the training nodes are cut into k folds, encoder f
// is trained on all folds but f, and X0 holds class probabilities — for a
// training node those of the encoder that never saw it, for every other
// node the mean over the k encoders. Plain GAP trains the encoder and the
// classifier on the same nodes, so the classifier sees training-node
// encodings far cleaner than anyone else's and over-trusts hop 0; out-of-fold
// encodings are as noisy on training nodes as elsewhere. Probabilities,
// unlike hidden embeddings, share one coordinate system across the k
// encoders. No edge is read.
func (m *GAP) encodeCrossFit(ctx *methods.Context, setup *ap.APSetup, norm layers.NormKind, src *dp.Source) (*graphs.Features, int, error) {
	x0, err := crossFit(ctx, m.cfg.EncoderFolds, func(f int, cf *methods.Context) ([]float64, error) {
		mod, err := m.cfg.TrainEncoder(cf, m.cfg.Training(cf, nil, setup.Rate, 0, m.cfg.EncoderEpochs, ap.LedgerEncoder), m.cfg.EncoderLayers, norm, src.Split(fmt.Sprintf("fold%d", f)), ctx.Seed+uint64(f)*7919, "gap")
		if err != nil {
			return nil, err
		}
		return nn.Values(mod.Logits), nil
	})
	if err != nil {
		return nil, 0, err
	}
	return x0, x0.F, nil
}

// crossFit cuts the training nodes into k folds and calls fit(f, ctx_f)
// with a context whose training nodes are all folds but f; fit returns
// logits (N×C). Row v of the result is softmax of the logits of the model
// that did not train on v for a training node, and the mean of the k
// softmaxes for any other node.
func crossFit(ctx *methods.Context, k int, fit func(f int, cf *methods.Context) ([]float64, error)) (*graphs.Features, error) {
	g := ctx.Graph
	c := g.NumClasses
	folds := graphs.Folds(g.Split.Train, k, ctx.Seed)
	x0 := make([]float64, g.N*c)
	inFold := make([]int, g.N) // fold+1 of a training node, 0 otherwise
	for f, fold := range folds {
		for _, v := range fold {
			inFold[v] = f + 1
		}
	}
	for f := range folds {
		var rest []int
		for h, fold := range folds {
			if h != f {
				rest = append(rest, fold...)
			}
		}
		gf := *g
		gf.Split.Train = rest
		cf := *ctx
		cf.Graph = &gf
		logits, err := fit(f, &cf)
		if err != nil {
			return nil, fmt.Errorf("encoder fold %d: %w", f, err)
		}
		if len(logits) != g.N*c {
			return nil, fmt.Errorf("encoder fold %d: %d logits, want %d×%d", f, len(logits), g.N, c)
		}
		for v := 0; v < g.N; v++ {
			switch inFold[v] {
			case 0:
				addSoftmax(x0[v*c:(v+1)*c], logits[v*c:(v+1)*c], 1/float64(k))
			case f + 1:
				addSoftmax(x0[v*c:(v+1)*c], logits[v*c:(v+1)*c], 1)
			}
		}
	}
	return layers.DenseFeatures(x0, g.N, c), nil
}

// addSoftmax adds w·softmax(z) to dst.
func addSoftmax(dst, z []float64, w float64) {
	mx := z[0]
	for _, v := range z {
		mx = math.Max(mx, v)
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(v - mx)
	}
	for i, v := range z {
		dst[i] += w * math.Exp(v-mx) / s
	}
}

// aggregate computes the K cached hops [X0, X1, …, XK] with
// X_k = rownorm(NAP(X_{k−1})): exactly K NAP calls.
func (m *GAP) aggregate(ctx *methods.Context, setup *ap.APSetup, plan *dp.Plan, z float64, x0 *graphs.Features, width int, src *dp.Source) ([]*graphs.Features, error) {
	nap := layers.NewNAP("gap.nap", setup.Adj, z*setup.Sensitivity, src)
	if err := ap.RecordPlannedNAP(ctx, plan, nap, ledgerNAP, m.cfg.Hops, z, setup.Sensitivity); err != nil {
		return nil, err
	}
	hops, err := m.hops(nap, ctx.Graph.N, x0, width)
	if err != nil {
		return nil, err
	}
	if nap.Adj.Calls != m.cfg.Hops {
		return nil, fmt.Errorf("gap: %d adjacency products for %d hops (accounting would be wrong)", nap.Adj.Calls, m.cfg.Hops)
	}
	return hops, nil
}

// hops runs the K NAP calls of nap over x0 (n×width) and returns
// [rownorm(X0), X1, …, XK].
func (m *GAP) hops(nap *layers.NAP, n int, x0 *graphs.Features, width int) ([]*graphs.Features, error) {
	if x0.Sparse != nil {
		x0 = layers.DenseFeatures(x0.ToDense(), x0.N, x0.F)
	}
	mm := nn.NewModel(0)
	var outs []*G.Node
	err := nn.Build(func() error {
		x := G.Must(nn.RowNormalize(mm.Input("X0", x0.Dense, n, width)))
		outs = append(outs, x)
		for k := 0; k < m.cfg.Hops; k++ {
			x = G.Must(nn.RowNormalize(nap.Forward(x)))
			outs = append(outs, x)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r, err := mm.NewRunner(outs...)
	if err != nil {
		return nil, err
	}
	if err := r.Run(); err != nil {
		return nil, err
	}
	hops := make([]*graphs.Features, len(outs))
	for i, o := range outs {
		hops[i] = layers.DenseFeatures(append([]float64(nil), nn.Values(o)...), n, width)
	}
	return hops, nil
}

// BuildModel builds GAP's classifier graph for inspection over K+1 hop
// inputs (random placeholders here), with its loss — and the DP-SGD nodes at
// node level — plus the K NAP hops over the encoder output, where edges
// enter.
func (m *GAP) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	m = m.at(ctx.Private())
	g := ctx.Graph
	setup, priv, norm, err := m.prepare(ctx)
	if err != nil {
		return nil, err
	}
	var hops []*graphs.Features
	var names []string
	width := m.cfg.Hidden
	if m.cfg.EncoderFolds >= 2 {
		width = g.NumClasses
	}
	for k := 0; k <= m.cfg.Hops; k++ {
		hops = append(hops, run.Placeholder(g.N, width, ctx.Seed+uint64(k)))
		names = append(names, fmt.Sprintf("X%d", k))
	}
	tr := m.cfg.Training(ctx, priv.Plan, setup.Rate, priv.Multiplier, m.cfg.TrainEpochs, ap.LedgerClassifier)
	mod, err := run.BuildModule(ctx.Seed, hops, names, tr, len(g.Split.Train), m.cfg.Classifier(ctx.Level, "gap", g.NumClasses, norm, m.cfg.EncoderLayers == 0))
	if err != nil {
		return nil, err
	}
	src, err := ctx.NoiseSource("gap")
	if err != nil {
		return nil, err
	}
	nap := layers.NewNAP("gap.nap", setup.Adj, priv.Multiplier*setup.Sensitivity, src.Split("gap.nap"))
	if err := nn.Build(func() error {
		x := mod.Inputs[0].All.Dense
		for k := 0; k < m.cfg.Hops; k++ {
			x = G.Must(nn.RowNormalize(nap.Forward(x)))
		}
		mod.Outputs = append(mod.Outputs, x)
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := mod.Prepare(ctx, tr, src.Split("gap.classifier")); err != nil {
		return nil, err
	}
	return mod.Model, nil
}

var (
	_ run.Builder     = (*GAP)(nil)
	_ run.Auditor     = (*GAP)(nil)
	_ run.Accountable = (*GAP)(nil)
)
