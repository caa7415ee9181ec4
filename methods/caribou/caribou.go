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
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/ap"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds CARIBOU's hyperparameters. The module ones (widths,
// optimiser, DP-SGD at node level) are GAP's.
type Config struct {
	Hops int `flag:"hops" help:"K: number of contractive graph layers (only the K-th is released)"`
	ap.Modules
	EncoderLayers int `flag:"encoder-layers" help:"encoder MLP layers (0: no encoder, aggregate the row-normalised raw features);\n-1: automatic, 0 without privacy (--privacy none or ε = inf) and 2 in a private run (selected on validation, docs/results.md)"`
	EncoderEpochs int `flag:"encoder-epochs" help:"encoder pre-training epochs"`
	// Lipschitz is C_L, Alpha1 α₁ (α₂ = 1 − α₁), Beta β of the CGL.
	Lipschitz float64 `flag:"lipschitz" help:"C_L in [0, 1): the CGL's contraction factor (1 = no contraction: linear composition)"`
	Alpha1    float64 `flag:"alpha1" help:"α₁ in [0, 1]: weight of the normalised adjacency (α₂ = 1 − α₁ weighs the global mean)"`
	Beta      float64 `flag:"beta" help:"β ≥ 0: weight of the initial residual X⁽⁰⁾;\n-1: automatic, 0.2 without privacy (--privacy none or ε = inf) and 4 in a private run (selected on validation, docs/results.md)"`
	// MinDegree is a public degree floor D_min (0: none): the CGL normalises
	// with max(d, D_min) + 1 in place of d + 1 (layers.NewCGLFloored), so
	// the sensitivities, which fall with D_min, hold for every graph and
	// nothing is refused. Flags' MaxDegree is D_max, a public upper bound
	// on every degree (node level; an input above it is refused): CARIBOU
	// offers the public bound only (Bound).
	MinDegree int `flag:"min-degree" help:"D_min, a public degree floor: the normalisation takes every degree as at least D_min (max(d, D_min)+1 in place of d+1);\nthe sensitivities fall with it and hold for every graph, so no input is refused. Choose it without looking at the data. 0: the raw degrees"`
	degree.Flags
	// Sensitivity is "strict" (the bounds proven in layers) or "paper"
	// (Theorems 8 and 9 as printed calibrate the noise; the report states
	// the ε proven for that noise).
	Sensitivity string `flag:"sensitivity" help:"strict (bounds proven in layers/cgl_sensitivity.go, which add what Theorems 8 and 9 leave out)\nor paper (the noise is calibrated with Theorems 8 and 9 as printed; the report states the ε the strict bound proves for that noise, the paper's target in a note)"`
	// Rows is "project" (Π onto the unit ball, Alg. 1) or "normalize".
	Rows       string `flag:"rows" help:"after each noisy layer: project (rows onto the unit ball, as the analysis needs) or normalize\n(rows onto the sphere, GAP's code; not covered by the analysis, refused with privacy)"`
	Accountant string `flag:"accountant" help:"edge level: gdp (exact μ-GDP conversion, as the authors calibrated) or rdp-standard (Theorem 11's RDP route) or rdp or pld;\nnode level: pld (every release has a PLD) unless rdp, rdp-standard or pld is given"`
}

// DefaultConfig is CARIBOU's default setting: the GAP paper's modules at
// width 64 with weight decay 1e-3 and dropout by level (ap.DropoutFor:
// 0.7 between layers and 0.5 on the raw features at edge level and
// without privacy, none under DP-SGD), ten contractive hops at C_L = 0.9
// without the global mean (α₁ = 1), the strict sensitivity and projected
// rows; the encoder and the initial residual β by privacy (Auto, resolved
// by At): without privacy no encoder and β = 0.2 (the exact graph term
// carries the signal), in a private run GAP's two-layer encoder and β = 4
// (the private hop is mostly noise, the classifier leans on X⁽⁰⁾). Each
// setting was selected on validation accuracy on cora 70 / 10 / 20
// (docs/results.md, "CARIBOU, edge level"; the grids in
// docs/notebook/caribou-gap-defaults.md).
func DefaultConfig() Config {
	m := ap.DefaultModules()
	m.Hidden, m.WeightDecay, m.Dropout, m.InDropout = 64, 1e-3, ap.AutoDropout, ap.AutoDropout
	return Config{Hops: 10, Modules: m, EncoderLayers: Auto, EncoderEpochs: 100, Lipschitz: 0.9, Alpha1: 1, Beta: Auto,
		Flags: degree.DefaultFlags(100), Sensitivity: "strict", Rows: "project", Accountant: "gdp"}
}

// Auto is the value of --encoder-layers and --beta that At resolves by
// privacy level.
const Auto = -1

// Defaults of the Auto fields, selected on validation accuracy on cora
// 70 / 10 / 20 (docs/results.md): without privacy the row-normalised raw
// features and a small residual (the exact graph term is worth about 14
// points there); in a private run GAP's encoder and β = 4.
const (
	encoderLayersNone, encoderLayersPrivate = 0, 2
	betaNone, betaPrivate                   = 0.2, 4
)

// At is the configuration a run uses: c with every Auto field set to its
// default for a private run (edge or node level with a finite ε or a
// fixed multiplier: methods.Context.Private) or a non-private one
// (--privacy none, or ε = ∞ at any level, which adds no noise), the others
// as given, so an explicit flag always wins. It reads only whether the run
// is private and the flags, never the data, so the configuration — and
// with it PCMP's sensitivity, which depends on β at node level — is the
// same for every input and its neighbours: the noise calibrated for it is
// the noise the run adds. At is idempotent.
func (c Config) At(private bool) Config {
	if c.EncoderLayers == Auto {
		c.EncoderLayers = encoderLayersNone
		if private {
			c.EncoderLayers = encoderLayersPrivate
		}
	}
	if c.Beta == Auto {
		c.Beta = betaNone
		if private {
			c.Beta = betaPrivate
		}
	}
	return c
}

// resolved reports whether every Auto field has been resolved (At).
func (c *Config) resolved() bool { return c.EncoderLayers != Auto && c.Beta != Auto }

// Bound is D_max, the node-level public bound on every node's degree in
// the symmetrised graph without self-loops (what the CGL normalises).
// CARIBOU's node-level sensitivity is proven for a public bound only, so
// it offers neither sampling nor none.
func (c *Config) Bound() (degree.Bound, error) {
	return c.Flags.Bound(degree.Undirected, "every node's degree", degree.Public)
}

// Validate checks the hyperparameters (the CGL's as layers.CheckCGL does).
func (c *Config) Validate() error {
	_, modeErr := c.Flags.Mode(degree.Public)
	encoder := methods.Require(&c.EncoderLayers, c.EncoderLayers == Auto || (c.EncoderLayers >= 0 && c.EncoderLayers <= methods.MaxDepth),
		"must be in [0, %d] (or -1: automatic), got %d", methods.MaxDepth, c.EncoderLayers)
	return methods.CheckAll(c.Modules.Validate(), methods.CheckFields(c, methods.Depth(&c.Hops), encoder,
		methods.Epochs(&c.EncoderEpochs), methods.Positive(&c.MaxDegree),
		methods.Require(&c.Lipschitz, c.Lipschitz >= 0 && c.Lipschitz <= 1, "must be in [0, 1] (< 1 for a contraction), got %v", c.Lipschitz),
		methods.Require(&c.Alpha1, c.Alpha1 >= 0 && c.Alpha1 <= 1, "must be in [0, 1] (α₂ = 1 − α₁), got %v", c.Alpha1),
		methods.Require(&c.Beta, c.Beta == Auto || (c.Beta >= 0 && !math.IsInf(c.Beta, 1)), "must be non-negative and finite (or -1: automatic), got %v", c.Beta),
		methods.Require(&c.MinDegree, c.MinDegree >= 0, "must be non-negative, got %d", c.MinDegree),
		methods.Require(&c.MinDegree, c.MinDegree <= c.MaxDegree, "must be at most MaxDegree (--max-degree) %d, got %d", c.MaxDegree, c.MinDegree),
		methods.Require(&c.DegreeBound, modeErr == nil, "%v (caribou's node-level sensitivity is proven for a public bound only)", modeErr),
		methods.OneOf(&c.Sensitivity, "strict", "paper"), methods.OneOf(&c.Rows, "project", "normalize")))
}

// ValidateLevel refuses, at a private level, a configuration whose
// contractive layers read nothing of the privacy unit: their sensitivity is
// then 0, PCMP has nothing to perturb (noise std z·0), and a run would
// release it without noise while its plan declares a Gaussian release. At
// edge level that is C_L = 0 (every layer is β·X⁽⁰⁾, projected) or α₁ = 0
// (the layers weigh the global mean and the residual, neither of which
// reads an edge); at node level C_L = β = 0 (every layer is 0). The rule
// reads only the flags (and whether the run is private, which resolves the Auto fields: At),
// so it is the same for every input.
func (m *CARIBOU) ValidateLevel(level methods.Level, private bool) error {
	c := m.cfg.At(private)
	if !private {
		return nil
	}
	switch level {
	case methods.Edge:
		if layers.EdgeSensitivity(c.Lipschitz, c.Alpha1, c.MinDegree) > 0 {
			return nil
		}
		what := fmt.Sprintf("--lipschitz %g: every contractive layer is then β·X⁽⁰⁾", c.Lipschitz)
		if c.Lipschitz > 0 {
			what = fmt.Sprintf("--alpha1 %g: the contractive layers then weigh only the global mean and the residual β·X⁽⁰⁾", c.Alpha1)
		}
		return fmt.Errorf("%s, which reads no edge, so at edge level PCMP has nothing to perturb (sensitivity 0) and no noise to calibrate: "+
			"use --lipschitz in (0, 1) and --alpha1 in (0, 1], or a method without the graph (mlp)", what)
	case methods.Node:
		if layers.NodeSensitivity(c.Lipschitz, c.Alpha1, c.Beta, c.MinDegree, c.MaxDegree) > 0 {
			return nil
		}
		return fmt.Errorf("--lipschitz %g with --beta %g: every contractive layer is then 0, so at node level PCMP has nothing to perturb (sensitivity 0) and no noise to calibrate: "+
			"use --lipschitz in (0, 1) or --beta > 0", c.Lipschitz, c.Beta)
	}
	return nil
}

// CARIBOU is the method with its configuration.
type CARIBOU struct{ cfg Config }

// New returns CARIBOU with the configuration cfg.
func New(cfg Config) *CARIBOU { return &CARIBOU{cfg: cfg} }

// at is the method with its configuration resolved for a private or a
// non-private run (Config.At): every entry point (Run, AccountPlan,
// AuditTarget, BuildModel, ValidateLevel) works on it, so the plan, the
// layers and the modules of one run read the same values.
func (m *CARIBOU) at(private bool) *CARIBOU { return &CARIBOU{cfg: m.cfg.At(private)} }

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

// Epochs counts the encoder's and the classifier's epochs (an automatic
// --encoder-layers counts the encoder: whether the run is private is not
// known here, so a non-private run, which has none, reports fewer than
// planned).
func (m *CARIBOU) Epochs() int {
	if m.cfg.EncoderLayers == 0 {
		return m.cfg.TrainEpochs
	}
	return m.cfg.EncoderEpochs + m.cfg.TrainEpochs
}

func (m *CARIBOU) Config() any     { return &m.cfg }
func (m *CARIBOU) Validate() error { return m.cfg.Validate() }

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
	layer *layers.CGL
	// sensitivity is the proven Δ of one CGL application (strict), the one
	// the accounting uses; noiseScale is the Δ the PCMP noise std is z
	// times: sensitivity itself, or Theorem 8/9's value with --sensitivity
	// paper (paperTheorem then names it).
	sensitivity, noiseScale float64
	paperTheorem            string
	units                   run.DeltaUnits
	rate                    float64
	uses                    []dp.Use
}

// accounted is the noise multiplier the accountant is told for PCMP when
// its noise std is z·noiseScale: std over the proven sensitivity. It is z
// in strict mode (the one expression both the plan and the ledger use, so
// they agree bit for bit).
func (s *setup) accounted(z float64) float64 {
	if s.noiseScale == s.sensitivity {
		return z
	}
	return z * s.noiseScale / s.sensitivity
}

// setupCounts is what needs no graph: the sensitivity from the public
// degree bounds and the DP-SGD rate.
func (m *CARIBOU) setupCounts(level methods.Level, c run.Counts) (*setup, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if !m.cfg.resolved() {
		// Δ_n reads β: an unresolved β (−1) would give a sensitivity for a
		// layer no run builds. Every entry point resolves first (at).
		return nil, fmt.Errorf("caribou: configuration not resolved for the run (--beta or --encoder-layers still automatic) at the %s level", level)
	}
	s := &setup{units: run.DeltaUnits{Unit: "undirected edge"}}
	floor := "the CGL normalises with the raw degrees, d + 1 (--min-degree 0: no floor); no input is refused for a low degree"
	if m.cfg.MinDegree > 0 {
		floor = fmt.Sprintf("the CGL normalises with every degree floored at the public D_min=%d, max(d, D_min) + 1 (layers.NewCGLFloored); no input is refused for a low degree", m.cfg.MinDegree)
	}
	switch level {
	case methods.Node:
		if err := run.CheckCounts(c, []string{run.CountTrainNodes}); err != nil {
			return nil, err
		}
		bound, err := m.cfg.Bound()
		if err != nil {
			return nil, err
		}
		s.units.Unit = "node"
		s.rate = run.NodeRate(m.cfg.BatchSize, c.TrainNodes)
		s.sensitivity = layers.NodeSensitivity(m.cfg.Lipschitz, m.cfg.Alpha1, m.cfg.Beta, m.cfg.MinDegree, m.cfg.MaxDegree)
		s.noiseScale = s.sensitivity
		if m.cfg.Sensitivity == "paper" {
			// Theorem 9's mean term 2n/(n+1) < 2: its n → ∞ value needs no count.
			s.noiseScale, s.paperTheorem = layers.NodeSensitivityPaper(m.cfg.Lipschitz, m.cfg.Alpha1, m.cfg.MinDegree, m.cfg.MaxDegree, math.MaxInt32), "9"
		}
		s.uses = append(s.uses,
			dp.Use{Kind: "degree-bound", What: floor + fmt.Sprintf("; Δ_n=%.6g is proven for every graph whose degrees are ≤ D_max and that graph minus any one node with its edges, features and label "+
				"(its id kept, isolated; PCMP's input row of a node whose feature row is all zero is 0), every row compared, the removed node's included", s.sensitivity),
				Covered: "accounted"},
			bound.Use(),
			dp.Use{Kind: "dp-sgd", What: "the encoder's and the classifier's DP-SGD rate q = B/N_train and their step counts read the split's training-node count (a split without training nodes is refused)",
				Covered: "treated as public (the DP-SGD convention)"},
			dp.Use{Kind: "population", What: "the node ids: X^(K) has one row per node id of the input (G − v keeps v's id as an isolated node without features; Δ_n covers every row, v's own included)",
				Covered: "treated as public (the universe of node identities)"})
	default:
		s.sensitivity = layers.EdgeSensitivity(m.cfg.Lipschitz, m.cfg.Alpha1, m.cfg.MinDegree)
		s.noiseScale = s.sensitivity
		if m.cfg.Sensitivity == "paper" {
			s.noiseScale, s.paperTheorem = layers.EdgeSensitivityPaper(m.cfg.Lipschitz, m.cfg.Alpha1, m.cfg.MinDegree), "8"
		}
		s.uses = append(s.uses, dp.Use{Kind: "degree-bound",
			What:    floor + fmt.Sprintf("; Δ_e=%.6g is proven for every graph and that graph minus any one undirected edge, whatever their degrees", s.sensitivity),
			Covered: "accounted"})
	}
	return s, nil
}

// setupGraph builds the run's layer (degrees floored at D_min; at node
// level an input above D_max refused) and returns its set-up.
func (m *CARIBOU) setupGraph(ctx *methods.Context) (*setup, error) {
	g := ctx.Graph
	if ctx.Level == methods.Node && len(g.Split.Train) == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	s, err := m.setupCounts(ctx.Level, run.Counts{TrainNodes: len(g.Split.Train)})
	if err != nil {
		return nil, err
	}
	if s.layer, err = m.layerOver(ctx.Level, g.Adj, ctx.Dataset); err != nil {
		return nil, err
	}
	if ctx.Level == methods.Node {
		s.units.Paper = run.PaperDigits(len(g.Split.Train), "training nodes")
		return s, nil
	}
	s.units = run.EdgeUnits(g.N, true, run.PaperDigits(g.Adj.NNZ(), "directed edges"))
	return s, nil
}

// calibrate finds the noise multiplier z: at edge level for PCMP alone
// (μ = √g/z, g = min{K, g(C_L, K)}); at node level one z shared by the
// encoder's DP-SGD, PCMP (noise std z·Δ_n) and the classifier's DP-SGD,
// composed in RDP (CARIBOU Thm 11).
func (m *CARIBOU) calibrate(ctx *methods.Context, s *setup) (*run.Calibrated, error) {
	// The refusal a run makes before its data is loaded
	// (run.LevelValidator), for `account caribou` too.
	if err := m.ValidateLevel(ctx.Level, ctx.Private()); err != nil {
		return nil, err
	}
	g, err := dp.CNIFactor(m.cfg.Lipschitz, m.cfg.Hops)
	if err != nil {
		return nil, err
	}
	modules := 1
	if m.cfg.EncoderLayers > 0 {
		modules++
	}
	tEnc, tCls := m.cfg.ModuleSteps(ctx, s.rate, m.cfg.EncoderLayers > 0, m.cfg.EncoderEpochs)
	acct := ap.NodeAccountant(m.cfg.Accountant)
	if ctx.Level != methods.Node {
		if acct, err = ap.EdgeAccountant(m.cfg.Accountant); err != nil {
			return nil, err
		}
	}
	if ctx.Private() && m.cfg.Rows == "normalize" {
		return nil, fmt.Errorf("--rows normalize is not covered by the convergent analysis (it is neither convex nor 1-Lipschitz); use it only with --privacy none")
	}
	// releases at multiplier z, PCMP's event at account(z): the proven
	// multiplier s.accounted, or z itself for the paper's calibration.
	releases := func(account func(float64) float64) func(z float64) []dp.Planned {
		return func(z float64) []dp.Planned {
			rel := []dp.Planned{{Name: ledgerPCMP, What: fmt.Sprintf("PCMP, %d contractive hops (C_L=%g, effective releases g=%.4g), only hop K released: "+
				"Gaussian noise std %.4g per layer (sensitivity %.4g)", m.cfg.Hops, m.cfg.Lipschitz, g, z*s.noiseScale, s.sensitivity), Event: pcmpEvent(account(z), g)}}
			rel = append(rel, m.cfg.ModuleReleases(ctx, s.rate, z, tEnc, tCls)...)
			return append(rel, run.SelectionReleases(ctx, modules)...)
		}
	}
	noise := func(z float64) map[string]float64 {
		rec := map[string]float64{"pcmp_std": z * s.noiseScale, "sensitivity": s.sensitivity, "pcmp_multiplier": s.accounted(z), "hops": float64(m.cfg.Hops), "cni_factor": g}
		if s.paperTheorem != "" {
			rec["paper_sensitivity"] = s.noiseScale
		}
		if ctx.Level == methods.Node {
			m.cfg.ModuleNoise(rec, s.rate, z, tEnc, tCls)
		}
		return rec
	}
	cctx, paperTarget := ctx, 0.0
	if s.paperTheorem != "" && ctx.Private() && !(ctx.Multiplier > 0) {
		// The paper's calibration: z for the target ε with Theorem 8/9's
		// value taken as PCMP's sensitivity. The plan then holds the noise
		// fixed at that z and states the ε the proven Δ gives for it.
		pc, err := run.Calibrate(ctx, s.units, acct, releases(func(z float64) float64 { return z }), noise)
		if err != nil {
			return nil, fmt.Errorf("--sensitivity paper: %w", err)
		}
		fixed := *ctx
		fixed.Multiplier, paperTarget = pc.Multiplier, ctx.Epsilon
		cctx = &fixed
	}
	c, err := run.Calibrate(cctx, s.units, acct, releases(s.accounted), noise)
	if err != nil {
		return nil, err
	}
	if s.paperTheorem != "" && ctx.Private() {
		if c.Plan.Epsilon, err = c.Plan.Proven(); err != nil {
			return nil, err
		}
		note := fmt.Sprintf("--sensitivity paper: the PCMP noise std is z·%.6g, CARIBOU's Theorem %s as printed, which is below the proven sensitivity %.6g (its proof leaves out changes the strict bound covers); "+
			"the ε above is the one proven for that noise (PCMP multiplier %.6g)", s.noiseScale, s.paperTheorem, s.sensitivity, s.accounted(c.Multiplier))
		if s.noiseScale >= s.sensitivity {
			note = fmt.Sprintf("--sensitivity paper: the PCMP noise std is z·%.6g, CARIBOU's Theorem %s as printed, which is at least the proven sensitivity %.6g here, so the paper's accounting is proven for this setting",
				s.noiseScale, s.paperTheorem, s.sensitivity)
		}
		if paperTarget > 0 {
			note += fmt.Sprintf("; the paper's accounting claims ε = %g", paperTarget)
		}
		c.Plan.Notes = append(c.Plan.Notes, note)
	}
	run.NoteSelection(ctx, c.Plan, modules)
	if ctx.Private() {
		c.Plan.Uses = append(c.Plan.Uses, s.uses...)
	}
	return c, nil
}

// prepare sets up, calibrates and picks the norm layer (BatchNorm at edge
// level and without privacy, none at node level, unless --norm says).
func (m *CARIBOU) prepare(ctx *methods.Context) (*setup, *run.Calibrated, layers.NormKind, error) {
	return ap.Prepare(ctx, &m.cfg.Modules, m.setupGraph, m.calibrate)
}

// Run trains CARIBOU once, with its configuration resolved for the run
// (Config.At).
func (m *CARIBOU) Run(ctx *methods.Context) (*methods.Outcome, error) {
	return m.at(ctx.Private()).run(ctx)
}

// run trains the resolved method once.
func (m *CARIBOU) run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := run.Begin(ctx, "caribou", m.cfg.Hidden, 2*max(1, m.cfg.BaseLayers)+m.cfg.EncoderLayers+2); err != nil {
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
	x0, width, enc, err := m.encode(ctx, s, cal, norm, src.Split("caribou.encoder"))
	if err != nil {
		return nil, err
	}
	// 2. PCMP, run once: the only adjacency access; only X⁽ᴷ⁾ leaves it.
	// Its input is X⁽⁰⁾ with the rows of featureless nodes set to 0
	// (pcmpInput: what the node-level proof needs of a removed node).
	xk, err := m.pcmp(ctx, s, cal.Plan, z, pcmpInput(x0, width, g.X), width, src.Split("caribou.pcmp"))
	if err != nil {
		return nil, err
	}
	// 3. Classifier on [X⁽⁰⁾, X⁽ᴷ⁾] (post-processing at edge level).
	tr := m.cfg.Training(ctx, cal.Plan, s.rate, z, m.cfg.TrainEpochs, ap.LedgerClassifier)
	in := []*graphs.Features{layers.DenseFeatures(x0, g.N, width), layers.DenseFeatures(xk, g.N, width)}
	mod, err := run.BuildModule(ctx.Seed+1, in, []string{"X0", "XK"}, tr, len(g.Split.Train), m.cfg.Classifier(ctx.Level, "caribou", g.NumClasses, norm, m.cfg.EncoderLayers == 0))
	if err != nil {
		return nil, err
	}
	res, err := mod.Train(ctx, tr, src.Split("caribou.classifier"))
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	return out, run.FinishModel(ctx, out, "caribou", cal.Plan, mod.Logits, func(qsrc *dp.Source) func(*graphs.Graph) (*run.Inference, error) {
		return m.inference(ctx, s, cal, enc, mod, qsrc)
	})
}

// inference is the trained CARIBOU's query over a graph h: the encoder over
// the query features, PCMP over h with fresh noise from the mechanism
// source (each query one new PCMP release, recorded under
// methods.LedgerQueries; degrees floored at D_min, and at node level h
// must be within D_max), the classifier over [X⁽⁰⁾, X⁽ᴷ⁾].
func (m *CARIBOU) inference(ctx *methods.Context, s *setup, cal *run.Calibrated, enc, cls *run.Module, qsrc *dp.Source) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		gf, err := dp.CNIFactor(m.cfg.Lipschitz, m.cfg.Hops)
		if err != nil {
			return nil, err
		}
		z := cal.Multiplier
		var cost *methods.QueryCost
		if ctx.Private() {
			cost = methods.NewQueryCost(ctx, cal.Plan, fmt.Sprintf("one PCMP release over the query graph with fresh noise (%d hops, std %.4g per layer, sensitivity %.4g)",
				m.cfg.Hops, z*s.noiseScale, s.sensitivity), pcmpEvent(s.accounted(z), gf))
		}
		src := qsrc.Split("graph")
		q := run.NewQuery(h.N, ctx.Graph.X.F, cost, func() (methods.QueryFunc, error) {
			layer, err := m.layerOver(ctx.Level, h.Adj, "the query graph")
			if err != nil {
				return nil, fmt.Errorf("query graph: %w", err)
			}
			p := m.newPCMP(&setup{layer: layer}, z*s.noiseScale, src.Split("pcmp"))
			if cost != nil && p.Std > 0 {
				rec, err := cost.Recorder(pcmpEvent(s.accounted(z), gf))
				if err != nil {
					return nil, err
				}
				if rec.Planned() != 1 { // a query releases X⁽ᴷ⁾ once
					return nil, fmt.Errorf("caribou: a query's cost declares %v PCMP releases, a query makes 1", rec.Planned())
				}
				p.Rec = rec
			}
			encEval, clsEval, err := ap.QueryEvaluators(enc, cls, h.N)
			if err != nil {
				return nil, err
			}
			return func(x *graphs.Features) ([]float64, error) {
				var x0 []float64
				width := m.cfg.Hidden
				if encEval != nil {
					outs, err := encEval.Outputs(x)
					if err != nil {
						return nil, err
					}
					x0 = outs[0]
				} else {
					x0, width = x.ToDense(), x.F
					layers.NormalizeRows(x0, width)
				}
				xk, err := p.Release(pcmpInput(x0, width, x), width)
				if err != nil {
					return nil, err
				}
				logits, err := clsEval.Logits(layers.DenseFeatures(x0, h.N, width), layers.DenseFeatures(xk, h.N, width))
				if err != nil {
					return nil, err
				}
				return run.Softmax(logits, h.N, h.NumClasses), nil
			}, nil
		})
		return &run.Inference{Query: q, Cost: cost}, nil
	}
}

// layerOver is the CGL over the raw adjacency a with its degrees floored at
// the public D_min (nothing is refused for a low degree: the sensitivities
// hold for every graph). At node level a graph with a node above the
// public D_max is refused; the message says only that the bound was
// exceeded (no degree of the input is printed, and the bound is not to be
// chosen from the data).
func (m *CARIBOU) layerOver(level methods.Level, a *graphs.CSR, dataset string) (*layers.CGL, error) {
	layer, err := layers.NewCGLFloored(a, m.cfg.MinDegree, m.cfg.Lipschitz, m.cfg.Alpha1, m.cfg.Beta)
	if err != nil {
		return nil, err
	}
	if level == methods.Node {
		// Â has exactly one self-loop per node: without them its rows are
		// the degrees of the symmetrised graph.
		b, err := m.cfg.Bound()
		if err != nil {
			return nil, err
		}
		if _, err := b.Apply(graphs.RemoveSelfLoops(layer.Adj), degree.Key{}); err != nil {
			return nil, b.Refusal(dataset, err)
		}
	}
	return layer, nil
}

// encode returns X⁽⁰⁾ (N×width, rows of norm 1) and the encoder (nil
// without one): the encoder's row-normalised embedding, or without encoder
// the row-normalised raw features.
func (m *CARIBOU) encode(ctx *methods.Context, s *setup, cal *run.Calibrated, norm layers.NormKind, src *dp.Source) ([]float64, int, *run.Module, error) {
	g := ctx.Graph
	if m.cfg.EncoderLayers == 0 {
		x := g.X.ToDense()
		layers.NormalizeRows(x, g.X.F)
		return x, g.X.F, nil, nil
	}
	mod, err := m.cfg.TrainEncoder(ctx, m.cfg.Training(ctx, cal.Plan, s.rate, cal.Multiplier, m.cfg.EncoderEpochs, ap.LedgerEncoder), m.cfg.EncoderLayers, norm, src, ctx.Seed, "caribou")
	if err != nil {
		return nil, 0, nil, err
	}
	return append([]float64(nil), nn.Values(mod.Outputs[0])...), m.cfg.Hidden, mod, nil
}

// pcmp runs PCMP once over x0 with noise std z·noiseScale and records the
// release at the proven multiplier (std over the strict Δ).
func (m *CARIBOU) pcmp(ctx *methods.Context, s *setup, plan *dp.Plan, z float64, x0 []float64, width int, src *dp.Source) ([]float64, error) {
	p := m.newPCMP(s, z*s.noiseScale, src)
	g, err := dp.CNIFactor(m.cfg.Lipschitz, m.cfg.Hops)
	if err != nil {
		return nil, err
	}
	if p.Std > 0 {
		// p's std is set here and released at once, so the planned
		// event is the one drawn.
		rec, err := ctx.Mechanism(plan, ledgerPCMP, pcmpEvent(s.accounted(z), g))
		if err != nil {
			return nil, err
		}
		if rec.Planned() != 1 { // a run releases X⁽ᴷ⁾ once
			return nil, fmt.Errorf("caribou: the plan declares %v PCMP releases, a run makes 1", rec.Planned())
		}
		p.Rec = rec
	}
	return p.Release(x0, width)
}

// pcmpInput is PCMP's input X⁽⁰⁾ (initial iterate and residual) built from
// the embedding x0 (N×width, rows in the unit ball): x0 with the row of
// every node whose raw feature row in feats is all zero set to 0 (x0
// itself when there is none; nil feats: x0). Each row is then a function
// of the node's own features (and the released encoder) that maps a zero
// feature row to 0 — the row the node-level proof gives a removed node,
// which keeps its id with its features zeroed (layers.NodeSensitivity).
// Without it, the encoder's row for a zero feature row (its biases,
// normalised: a unit vector) could point opposite to v's row on G, the
// residual β·X⁽⁰⁾_v would change by 2β, and the charged Δ_n would not
// cover the pair. It reads no membership: a present node whose feature
// row is zero gets 0 on G and G′ alike. The row-normalised raw features
// (no encoder) already have 0 there.
func pcmpInput(x0 []float64, width int, feats *graphs.Features) []float64 {
	out, copied := x0, false
	for i, z := range zeroFeatureRows(feats) {
		if !z || (i+1)*width > len(x0) {
			continue
		}
		if !copied {
			out, copied = append([]float64(nil), x0...), true
		}
		clear(out[i*width : (i+1)*width])
	}
	return out
}

// zeroFeatureRows reports for every row of f whether all its values are
// zero (a sparse row with no stored entry, or only stored zeros); nil for
// nil f.
func zeroFeatureRows(f *graphs.Features) []bool {
	if f == nil {
		return nil
	}
	zero := make([]bool, f.N)
	for i := range zero {
		zero[i] = true
		if f.Sparse == nil {
			for _, v := range f.Dense[i*f.F : (i+1)*f.F] {
				if v != 0 {
					zero[i] = false
					break
				}
			}
			continue
		}
		for k := f.Sparse.Indptr[i]; k < f.Sparse.Indptr[i+1]; k++ {
			if f.Sparse.Value(k) != 0 {
				zero[i] = false
				break
			}
		}
	}
	return zero
}

// newPCMP is the PCMP release over s's layer with the given noise std.
func (m *CARIBOU) newPCMP(s *setup, std float64, src *dp.Source) *layers.PCMP {
	return &layers.PCMP{Layer: s.layer, Hops: m.cfg.Hops, Std: std, Src: src, Normalize: m.cfg.Rows == "normalize"}
}

// AuditTarget is one PCMP release, for `dpgnn audit`: K noisy contractive
// layers over an embedding, with the noise std the run's calibration gives
// for the graph; the output is X⁽ᴷ⁾. The embedding goes through pcmpInput
// as a run's X⁽⁰⁾ does (on the audit's G′ the removed node's features are
// zero, so its input row is 0). Every row is compared, the removed node's
// included (OwnRow empty): the strict node-level Δ_n bounds that row's
// change too, on the isolated id G′ keeps (term A of
// layers.NodeSensitivity).
func (m *CARIBOU) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	if !ctx.Private() {
		return nil, fmt.Errorf("audit needs a private level (--privacy edge or node) and a finite --epsilon")
	}
	m = m.at(ctx.Private())
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
	ev, err := dp.CNIEvent(s.accounted(cal.Multiplier), m.cfg.Lipschitz, m.cfg.Hops)
	if err != nil {
		return nil, err
	}
	claimed, err := run.ClaimedEpsilon(ev, cal.Plan.Delta)
	if err != nil {
		return nil, err
	}
	width := opts.Width
	if width <= 0 {
		width = m.cfg.Hidden
	}
	if opts.Embedding == "features" {
		width = ctx.Graph.X.F
	}
	t := &run.AuditTarget{Claimed: claimed, Delta: cal.Plan.Delta, Width: width, EdgeUnit: run.EdgeUndirected, Gaussian: true,
		What: fmt.Sprintf("one PCMP release (%s level, %s embedding of width %d, K=%d, C_L=%g): noise std %.4g per layer, sensitivity %.4g; released: X^(K)",
			ctx.Level, opts.Embedding, width, m.cfg.Hops, m.cfg.Lipschitz, cal.Multiplier*s.noiseScale, s.sensitivity)}
	t.Prepare = func(g *graphs.Graph) (run.Release1, error) {
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
		x = pcmpInput(x, width, g.X)   // as a run's: a featureless node's row is 0
		std := c.Multiplier * sg.noiseScale
		return func(src *dp.Source) ([]float64, error) {
			return m.newPCMP(sg, std, src).Release(x, width)
		}, nil
	}
	return t, nil
}

var _ run.Auditor = (*CARIBOU)(nil)

// AccountCounts: CARIBOU needs the training-node count at node level (the
// DP-SGD rate), nothing at edge level.
func (m *CARIBOU) AccountCounts(level methods.Level) []string {
	if level == methods.Node {
		return []string{run.CountTrainNodes}
	}
	return nil
}

// AccountPlan is the privacy plan of a CARIBOU run with these counts
// (`dpgnn account caribou`).
func (m *CARIBOU) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	m = m.at(ctx.Private())
	s, err := m.setupCounts(ctx.Level, c)
	if err != nil {
		return nil, err
	}
	return m.calibrate(ctx, s)
}

var (
	_ run.Accountable    = (*CARIBOU)(nil)
	_ run.LevelValidator = (*CARIBOU)(nil)
)

// BuildModel builds the classifier a run trains, for `dpgnn inspect`: the
// module on [X⁽⁰⁾, X⁽ᴷ⁾] with DP-SGD's nodes at node level. X⁽⁰⁾ and X⁽ᴷ⁾
// are seeded placeholders: PCMP is a release computed outside the
// expression graph (layers.PCMP), and the encoder is a module of its own.
func (m *CARIBOU) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	m = m.at(ctx.Private())
	g := ctx.Graph
	s, cal, norm, err := m.prepare(ctx)
	if err != nil {
		return nil, err
	}
	width := m.cfg.Hidden
	if m.cfg.EncoderLayers == 0 {
		width = g.X.F
	}
	in := []*graphs.Features{run.Placeholder(g.N, width, ctx.Seed), run.Placeholder(g.N, width, ctx.Seed+1)}
	tr := m.cfg.Training(ctx, cal.Plan, s.rate, cal.Multiplier, m.cfg.TrainEpochs, ap.LedgerClassifier)
	mod, err := run.BuildModule(ctx.Seed+1, in, []string{"X0", "XK"}, tr, len(g.Split.Train), m.cfg.Classifier(ctx.Level, "caribou", g.NumClasses, norm, m.cfg.EncoderLayers == 0))
	if err != nil {
		return nil, err
	}
	src, err := ctx.NoiseSource("caribou")
	if err != nil {
		return nil, err
	}
	if _, err := mod.Prepare(ctx, tr, src.Split("caribou.classifier")); err != nil {
		return nil, err
	}
	return mod.Model, nil
}

var _ run.Builder = (*CARIBOU)(nil)
