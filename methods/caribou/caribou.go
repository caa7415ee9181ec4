// Package caribou is CARIBOU (Zheng, Li, Li & Wang 2025, "Convergent Privacy
// Framework with Contractive GNN Layers for Multi-hop Aggregations"): GAP's
// encoder, then perturbed contractive message passing (PCMP: K contractive
// graph layers with noise and a projection onto the unit ball at each, only
// the last hop released), then GAP's classifier over [X⁽⁰⁾, X⁽ᴷ⁾]. Because
// each layer is a C_L-contraction, the privacy cost of K hops converges to
// that of (1 + C_L)/(1 − C_L) Gaussian releases instead of growing with K
// (dp.CNIFactor). Edge level (the unit is an undirected edge) and node
// level (a node with all its edges; encoder and classifier then train with
// DP-SGD under the same multiplier).
package caribou

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/ap"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/spf13/pflag"
)

func init() { methods.Register(func() methods.Method { return &CARIBOU{} }) }

// CARIBOU holds the hyperparameters. The module ones (widths, optimiser,
// DP-SGD at node level) are GAP's.
type CARIBOU struct {
	ap.AggregationPerturbation
	EncoderLayers int
	EncoderEpochs int
	// Lipschitz is C_L, Alpha1 α₁ (α₂ = 1 − α₁), Beta β of the CGL.
	Lipschitz, Alpha1, Beta float64
	// MinDegree is a public lower bound on the degrees (0: none).
	MinDegree int
	// Sensitivity is "strict" (the bounds proven in layers) or "paper"
	// (Theorems 8 and 9 as printed).
	Sensitivity string
	// Rows is "project" (Π onto the unit ball, Alg. 1) or "normalize".
	Rows string
}

// pcmpEvent is PCMP at multiplier z with effective release count g
// (dp.CNIEvent with g computed once): μ-GDP with μ = √g/z.
func pcmpEvent(z, g float64) dp.GaussianEvent {
	return dp.GaussianEvent{Multiplier: z / math.Sqrt(g), Count: 1}
}

// ledgerPCMP is the ledger name of CARIBOU's PCMP release.
const ledgerPCMP = "pcmp"

func (*CARIBOU) Name() string { return "caribou" }
func (*CARIBOU) Short() string {
	return "CARIBOU: encoder, K contractive noisy hops with convergent privacy (only the last released), classifier on [X0, XK] (edge or node DP)"
}

// Epochs counts the encoder's and the classifier's epochs.
func (m *CARIBOU) Epochs() int {
	if m.EncoderLayers == 0 {
		return m.TrainEpochs
	}
	return m.EncoderEpochs + m.TrainEpochs
}

func (m *CARIBOU) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&m.Hops, "hops", 10, "K: number of contractive graph layers (only the K-th is released)")
	m.BindModuleFlags(fs, 100, 0.01)
	fs.IntVar(&m.EncoderLayers, "encoder-layers", 2, "encoder MLP layers (0: no encoder, aggregate the row-normalised raw features)")
	fs.IntVar(&m.EncoderEpochs, "encoder-epochs", 100, "encoder pre-training epochs")
	fs.Float64Var(&m.Lipschitz, "lipschitz", 0.9, "C_L in [0, 1): the CGL's contraction factor (1 = no contraction: linear composition)")
	fs.Float64Var(&m.Alpha1, "alpha1", 1, "α₁ in [0, 1]: weight of the normalised adjacency (α₂ = 1 − α₁ weighs the global mean)")
	fs.Float64Var(&m.Beta, "beta", 1, "β ≥ 0: weight of the initial residual X⁽⁰⁾")
	fs.IntVar(&m.MinDegree, "min-degree", 0, "D_min, a public lower bound on every node's degree (the sensitivities fall with it); an input below it is refused,\nand the guarantee covers neighbouring graphs whose smaller graph is within it. 0: no assumption")
	fs.IntVar(&m.MaxDegree, "max-degree", 100, "node level: D_max, a public bound on every node's degree; an input above it is refused")
	fs.StringVar(&m.Sensitivity, "sensitivity", "strict", "strict (bounds proven in layers/cgl_sensitivity.go, which add what Theorems 8 and 9 leave out)\nor paper (Theorems 8 and 9 as printed; the report then says the bound is not proven)")
	fs.StringVar(&m.Rows, "rows", "project", "after each noisy layer: project (rows onto the unit ball, as the analysis needs) or normalize\n(rows onto the sphere, GAP's code; not covered by the analysis, refused with privacy)")
	fs.StringVar(&m.Accountant, "accountant", "gdp", "edge level: gdp (exact μ-GDP conversion, as the authors calibrated) or rdp-standard (Theorem 11's RDP route) or rdp;\nnode level always composes in RDP")
}

func (m *CARIBOU) Validate() error {
	m.EdgeUnit, m.DegreeBound = methods.EdgeUndirected, ap.DegreePublic
	return methods.CheckAll(m.ValidateModules(), methods.Depth("hops", m.Hops), m.validateEncoderLayers(),
		methods.Epochs("encoder-epochs", m.EncoderEpochs), methods.Positive("max-degree", m.MaxDegree), m.validate())
}

func (m *CARIBOU) validateEncoderLayers() error {
	if m.EncoderLayers < 0 || m.EncoderLayers > methods.MaxDepth {
		return fmt.Errorf("--encoder-layers must be in [0, %d], got %d", methods.MaxDepth, m.EncoderLayers)
	}
	return nil
}

func (m *CARIBOU) validate() error {
	if err := layers.CheckCGL(m.Lipschitz, m.Alpha1, m.Beta); err != nil {
		return fmt.Errorf("--lipschitz/--alpha1/--beta: %v", err)
	}
	switch {
	case m.MinDegree < 0:
		return fmt.Errorf("--min-degree %d: want ≥ 0", m.MinDegree)
	case m.MinDegree > m.MaxDegree:
		return fmt.Errorf("--min-degree %d above --max-degree %d", m.MinDegree, m.MaxDegree)
	case m.Sensitivity != "strict" && m.Sensitivity != "paper":
		return fmt.Errorf("--sensitivity %q: want strict or paper", m.Sensitivity)
	case m.Rows != "project" && m.Rows != "normalize":
		return fmt.Errorf("--rows %q: want project or normalize", m.Rows)
	}
	return nil
}

// Levels: CARIBOU runs without privacy, at edge and at node level.
func (*CARIBOU) Levels() []methods.Level {
	return []methods.Level{methods.None, methods.Edge, methods.Node}
}

// DefaultSplit is the default protocol for a dataset.
func (*CARIBOU) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }

// setup is the privacy set-up of one run: the layer PCMP applies (over
// the run's graph), the sensitivity of one CGL application, δ's units and
// the DP-SGD rate.
type setup struct {
	layer       *layers.CGL
	sensitivity float64
	units       methods.DeltaUnits
	rate        float64
	uses        []dp.Use
	notes       []string
}

// setupCounts is what needs no graph: the sensitivity from the public
// degree bounds and the DP-SGD rate.
func (m *CARIBOU) setupCounts(level methods.Level, c methods.Counts) (*setup, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	s := &setup{units: methods.DeltaUnits{Unit: "undirected edge"}}
	strict := m.Sensitivity == "strict"
	switch level {
	case methods.Node:
		if err := methods.CheckCounts(c, []string{methods.CountTrainNodes}); err != nil {
			return nil, err
		}
		s.units.Unit = "node"
		s.rate = methods.NodeRate(m.BatchSize, c.TrainNodes)
		if strict {
			s.sensitivity = layers.NodeSensitivity(m.Lipschitz, m.Alpha1, m.Beta, m.MinDegree, m.MaxDegree)
		} else {
			// Theorem 9's mean term 2n/(n+1) < 2: its n → ∞ value needs no count.
			s.sensitivity = layers.NodeSensitivityPaper(m.Lipschitz, m.Alpha1, m.MinDegree, m.MaxDegree, math.MaxInt32)
		}
	default:
		if strict {
			s.sensitivity = layers.EdgeSensitivity(m.Lipschitz, m.Alpha1, m.MinDegree)
		} else {
			s.sensitivity = layers.EdgeSensitivityPaper(m.Lipschitz, m.Alpha1, m.MinDegree)
		}
	}
	if !strict {
		s.notes = append(s.notes, fmt.Sprintf("--sensitivity paper: the CGL sensitivity %.6g is CARIBOU's Theorem %s as printed, "+
			"which leaves out changes the strict bound covers: the ε above is the paper's accounting, not a proven guarantee", s.sensitivity,
			map[bool]string{true: "9", false: "8"}[level == methods.Node]))
	}
	return s, nil
}

// setupGraph checks the public degree bounds on the run's graph and
// returns its set-up.
func (m *CARIBOU) setupGraph(ctx *methods.Context) (*setup, error) {
	g := ctx.Graph
	if ctx.Level == methods.Node && len(g.Split.Train) == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	s, err := m.setupCounts(ctx.Level, methods.Counts{TrainNodes: len(g.Split.Train)})
	if err != nil {
		return nil, err
	}
	if s.layer, err = layers.NewCGL(g.Adj, m.Lipschitz, m.Alpha1, m.Beta); err != nil {
		return nil, err
	}
	lo, hi := math.MaxInt, 0
	for _, d := range s.layer.Adj.Degrees() {
		lo, hi = min(lo, d-1), max(hi, d-1) // Â has one self-loop per node
	}
	if lo < m.MinDegree {
		return nil, fmt.Errorf("--min-degree %d: %s has a node of degree %d. --min-degree is a public lower bound and the guarantee covers graphs within it: "+
			"lower it (0 assumes nothing)", m.MinDegree, ctx.Dataset, lo)
	}
	if m.MinDegree > 0 && ctx.Private() {
		s.uses = append(s.uses, dp.Use{Kind: "degree-bound", What: fmt.Sprintf("public minimum degree D_min=%d: the raw graph was checked to be within it", m.MinDegree),
			Covered: "public bound: the guarantee covers neighbouring graphs whose smaller graph has every degree ≥ D_min"})
	}
	if ctx.Level == methods.Node {
		if hi > m.MaxDegree {
			return nil, fmt.Errorf("node level, --max-degree %d: %s has a node of degree %d. --max-degree is a public bound on every node's degree "+
				"and the guarantee covers graphs within it: raise it to a bound you can state without looking at the data", m.MaxDegree, ctx.Dataset, hi)
		}
		s.units.Paper = methods.PaperDigits(len(g.Split.Train), "training nodes")
		s.uses = append(s.uses, dp.Use{Kind: "degree-bound", What: fmt.Sprintf("public degree bound D_max=%d: the raw graph was checked to be within it; no edge is dropped", m.MaxDegree),
			Covered: "public bound: the guarantee covers every graph whose degrees are ≤ D_max"})
		return s, nil
	}
	s.units = methods.EdgeUnits(g.N, true, methods.PaperDigits(g.Adj.NNZ(), "directed edges"))
	return s, nil
}

// calibrate finds the noise multiplier z: at edge level for PCMP alone
// (μ = √g/z, g = min{K, g(C_L, K)}); at node level one z shared by the
// encoder's DP-SGD, PCMP (noise std z·Δ_n) and the classifier's DP-SGD,
// composed in RDP (CARIBOU Thm 11).
func (m *CARIBOU) calibrate(ctx *methods.Context, s *setup) (*methods.Calibrated, error) {
	g, err := dp.CNIFactor(m.Lipschitz, m.Hops)
	if err != nil {
		return nil, err
	}
	modules := 1
	if m.EncoderLayers > 0 {
		modules++
	}
	tEnc, tCls := m.ModuleSteps(ctx, s.rate, m.EncoderLayers > 0, m.EncoderEpochs)
	acct := m.NodeAccountant()
	if ctx.Level != methods.Node {
		if acct, err = m.EdgeAccountant(); err != nil {
			return nil, err
		}
	}
	if ctx.Private() && m.Rows == "normalize" {
		return nil, fmt.Errorf("--rows normalize is not covered by the convergent analysis (it is neither convex nor 1-Lipschitz); use it only with --privacy none")
	}
	c, err := methods.Calibrate(ctx, s.units, acct, func(z float64) []dp.Planned {
		rel := []dp.Planned{{Name: ledgerPCMP, What: fmt.Sprintf("PCMP, %d contractive hops (C_L=%g, effective releases g=%.4g), only hop K released: "+
			"Gaussian noise std %.4g per layer (sensitivity %.4g)", m.Hops, m.Lipschitz, g, z*s.sensitivity, s.sensitivity), Event: pcmpEvent(z, g)}}
		rel = append(rel, m.ModuleReleases(ctx, s.rate, z, tEnc, tCls)...)
		return append(rel, ctx.SelectionReleases(modules)...)
	}, func(z float64) map[string]float64 {
		rec := map[string]float64{"pcmp_std": z * s.sensitivity, "sensitivity": s.sensitivity, "hops": float64(m.Hops), "cni_factor": g}
		if ctx.Level == methods.Node {
			m.ModuleNoise(rec, s.rate, z, tEnc, tCls)
		}
		return rec
	})
	if err != nil {
		return nil, err
	}
	ctx.NoteSelection(c.Plan, modules)
	if ctx.Private() {
		c.Plan.Uses = append(c.Plan.Uses, s.uses...)
		c.Plan.Notes = append(c.Plan.Notes, s.notes...)
	}
	return c, nil
}

// prepare sets up, calibrates and picks the norm layer (BatchNorm at edge
// level and without privacy, none at node level, unless --norm says).
func (m *CARIBOU) prepare(ctx *methods.Context) (*setup, *methods.Calibrated, layers.NormKind, error) {
	s, err := m.setupGraph(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	c, err := m.calibrate(ctx, s)
	if err != nil {
		return nil, nil, 0, err
	}
	auto := layers.NormBatch
	if ctx.Level == methods.Node {
		auto = layers.NormNone
	}
	norm, err := m.NormFor(ctx.Level, auto)
	return s, c, norm, err
}

// Run trains CARIBOU once.
func (m *CARIBOU) Run(ctx *methods.Context) (*methods.Outcome, error) {
	ctx.Ledger()
	g := ctx.Graph
	if err := methods.CheckModelMemory(ctx, "caribou", m.Hidden, 2*max(1, m.BaseLayers)+m.EncoderLayers+2); err != nil {
		return nil, err
	}
	s, cal, norm, err := m.prepare(ctx)
	if err != nil {
		return nil, err
	}
	z := cal.Multiplier
	src, err := ctx.NoiseSource("caribou")
	if err != nil {
		return nil, err
	}
	// 1. Encoder, trained on features and labels only; rows of X⁽⁰⁾ have norm 1.
	x0, width, err := m.encode(ctx, s, z, norm, src.Split("caribou.encoder"))
	if err != nil {
		return nil, err
	}
	// 2. PCMP, run once: the only adjacency access; only X⁽ᴷ⁾ leaves it.
	xk, err := m.pcmp(ctx, s, z, x0, width, src.Split("caribou.pcmp"))
	if err != nil {
		return nil, err
	}
	// 3. Classifier on [X⁽⁰⁾, X⁽ᴷ⁾] (post-processing at edge level).
	tr := m.Training(ctx, s.rate, z, m.TrainEpochs, ap.LedgerClassifier)
	in := []*graphs.Features{layers.DenseFeatures(x0, g.N, width), layers.DenseFeatures(xk, g.N, width)}
	mod, err := methods.BuildModule(ctx.Seed+1, in, []string{"X0", "XK"}, tr, len(g.Split.Train), m.Classifier("caribou", g.NumClasses, norm, m.EncoderLayers == 0))
	if err != nil {
		return nil, err
	}
	res, err := mod.Train(ctx, tr, src.Split("caribou.classifier"))
	if err != nil {
		return nil, err
	}
	rep, err := ctx.Report(cal.Plan)
	if err != nil {
		return nil, err
	}
	return &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc, Privacy: rep}, nil
}

// encode returns X⁽⁰⁾ (N×width, rows of norm 1): the encoder's row-normalised
// embedding, or without encoder the row-normalised raw features.
func (m *CARIBOU) encode(ctx *methods.Context, s *setup, z float64, norm layers.NormKind, src *dp.Source) ([]float64, int, error) {
	g := ctx.Graph
	if m.EncoderLayers == 0 {
		x := g.X.ToDense()
		layers.NormalizeRows(x, g.X.F)
		return x, g.X.F, nil
	}
	mod, err := m.TrainEncoder(ctx, m.Training(ctx, s.rate, z, m.EncoderEpochs, ap.LedgerEncoder), m.EncoderLayers, norm, src, ctx.Seed, "caribou")
	if err != nil {
		return nil, 0, err
	}
	return append([]float64(nil), nn.Values(mod.Outputs[0])...), m.Hidden, nil
}

// pcmp runs PCMP once over x0 with noise std z·Δ and records the release.
func (m *CARIBOU) pcmp(ctx *methods.Context, s *setup, z float64, x0 []float64, width int, src *dp.Source) ([]float64, error) {
	p := m.newPCMP(s, z*s.sensitivity, src)
	g, err := dp.CNIFactor(m.Lipschitz, m.Hops)
	if err != nil {
		return nil, err
	}
	l := ctx.Ledger()
	std := p.Std
	p.OnRelease = func() {
		z := z
		if p.Std != std {
			z = p.Std / s.sensitivity // a changed std shows up when the ledger is checked
		}
		l.Record(ledgerPCMP, pcmpEvent(z, g))
	}
	return p.Release(x0, width)
}

// newPCMP is the PCMP release over s's layer with the given noise std.
func (m *CARIBOU) newPCMP(s *setup, std float64, src *dp.Source) *layers.PCMP {
	return &layers.PCMP{Layer: s.layer, Hops: m.Hops, Std: std, Src: src, Normalize: m.Rows == "normalize"}
}

// AuditTarget is one PCMP release, for `dpgnn audit`: K noisy contractive
// layers over an embedding, with the noise std the run's calibration gives
// for the graph; the output is X⁽ᴷ⁾.
func (m *CARIBOU) AuditTarget(ctx *methods.Context, opts methods.AuditOptions) (*methods.AuditTarget, error) {
	if !ctx.Private() {
		return nil, fmt.Errorf("audit needs a private level (--privacy edge or node) and a finite --epsilon")
	}
	if opts.Multiplier > 0 {
		c := *ctx
		c.Multiplier = opts.Multiplier
		ctx = &c
	}
	s, err := m.setupGraph(ctx)
	if err != nil {
		return nil, err
	}
	cal, err := m.calibrate(ctx, s)
	if err != nil {
		return nil, err
	}
	ev, err := dp.CNIEvent(cal.Multiplier, m.Lipschitz, m.Hops)
	if err != nil {
		return nil, err
	}
	claimed, err := methods.ClaimedEpsilon(ev, cal.Plan.Delta)
	if err != nil {
		return nil, err
	}
	width := opts.Width
	if width <= 0 {
		width = m.Hidden
	}
	if opts.Embedding == "features" {
		width = ctx.Graph.X.F
	}
	t := &methods.AuditTarget{Claimed: claimed, Delta: cal.Plan.Delta, Width: width, EdgeUnit: methods.EdgeUndirected, Gaussian: true,
		What: fmt.Sprintf("one PCMP release (%s level, %s embedding of width %d, K=%d, C_L=%g): noise std %.4g per layer, sensitivity %.4g; released: X^(K)",
			ctx.Level, opts.Embedding, width, m.Hops, m.Lipschitz, cal.Multiplier*s.sensitivity, s.sensitivity)}
	t.Prepare = func(g *graphs.Graph) (methods.Release1, error) {
		gc := *ctx
		gc.Graph = g
		sg, err := m.setupGraph(&gc)
		if err != nil {
			return nil, err
		}
		c, err := m.calibrate(&gc, sg)
		if err != nil {
			return nil, err
		}
		x, err := ap.AuditEmbedding(g, opts.Embedding, width)
		if err != nil {
			return nil, err
		}
		layers.NormalizeRows(x, width) // PCMP's input lies in the unit ball
		std := c.Multiplier * sg.sensitivity
		return func(src *dp.Source) ([]float64, error) {
			return m.newPCMP(sg, std, src).Release(x, width)
		}, nil
	}
	return t, nil
}

var _ methods.Auditor = (*CARIBOU)(nil)

// AccountCounts: CARIBOU needs the training-node count at node level (the
// DP-SGD rate), nothing at edge level.
func (m *CARIBOU) AccountCounts(level methods.Level) []string {
	if level == methods.Node {
		return []string{methods.CountTrainNodes}
	}
	return nil
}

// AccountPlan is the privacy plan of a CARIBOU run with these counts
// (`dpgnn account caribou`).
func (m *CARIBOU) AccountPlan(ctx *methods.Context, c methods.Counts) (*methods.Calibrated, error) {
	s, err := m.setupCounts(ctx.Level, c)
	if err != nil {
		return nil, err
	}
	return m.calibrate(ctx, s)
}

var _ methods.Accountable = (*CARIBOU)(nil)
