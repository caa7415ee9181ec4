// Package gcon is GCON (Wei et al., "GCON: Differentially Private Graph
// Convolutional Network via Objective Perturbation"): an edge-free
// MLP encoder, row normalisation, (approximate) personalised-PageRank
// propagation with the row-normalised Ã = D^{-1}(A+I), and one linear layer
// Θ ∈ R^{d×c} obtained as the exact minimiser of a strongly convex
// per-class loss perturbed by (1/n1)⟨B,Θ⟩ + (Λ'/2)‖Θ‖² (objective
// perturbation, (ε, δ)-edge DP by Theorem 1). Private inference uses only
// the querying node's own edges (Eq. 16).
package gcon

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds GCON's hyperparameters.
type Config struct {
	Alpha      float64 `flag:"alpha" help:"restart probability α ∈ (0, 1] of the propagation (grid 0.2, 0.4, 0.6, 0.8)"`
	StepsSpec  string  `flag:"steps" help:"propagation step counts m_1,…,m_s, comma-separated; \"inf\" for PPR (e.g. \"2\", \"0,2\", \"inf\")"`
	Lambda     float64 `flag:"lambda" help:"L2 coefficient Λ (grid 0.01, 0.2, 1, 2; raised by Eq. 22 when below Λ_min)"`
	LossName   string  `flag:"loss" help:"per-class loss: softmargin or pseudohuber"`
	HuberDelta float64 `flag:"huber-delta" help:"pseudo-Huber δ_l (grid 0.1, 0.2, 0.5)"`
	Omega      float64 `flag:"omega" help:"budget divider ω ∈ (0, 1)"`
	XiSpec     string  `flag:"xi" help:"ξ > 0 of Eq. 22, Λ ← max(Λ, Λ_min + ξ); auto: ξ = Λ_min (the paper leaves ξ open; a tiny ξ with Λ < Λ_min makes c_θ and the noise explode)"`
	// AlphaInference is α_I; negative means "equal to α".
	AlphaInference float64 `flag:"alpha-inference" help:"α_I of the one-hop private inference (negative: α; grid α, 0.1, 0.9; 0.1 was best on cora_ml and citeseer for every α)"`
	Inference      string  `flag:"inference" help:"private (one-hop, Eq. 16: each node's prediction uses only its own edges) or public (scenario ii, Fig. 3: the edges touching validation/test nodes form a public test graph, training uses only the remaining private edges, prediction propagates fully over the public graph)"`
	PseudoLabels   bool    `flag:"pseudo-labels" help:"train on all nodes with encoder pseudo-labels for the unlabelled ones (n1 = n); false: labelled nodes only (n1 = n0)"`
	Tol            float64 `flag:"tol" help:"Newton stopping tolerance on ‖∇f_j‖₂ (the guarantee is for the exact minimiser)"`
	// Solver is newton (exact minimiser, the default) or adam (the paper's
	// optimiser, App. Q).
	Solver          string  `flag:"solver" help:"newton (exact minimiser to --tol, which the guarantee assumes) or adam (the paper's optimiser: full-batch Adam for --adam-epochs; reports the final gradient norm)"`
	AdamLR          float64 `flag:"adam-lr" help:"adam solver: learning rate (paper grid 0.001, 0.01)"`
	AdamEpochs      int     `flag:"adam-epochs" help:"adam solver: full-batch steps (the paper does not say)"`
	AdamWeightDecay float64 `flag:"adam-weight-decay" help:"adam solver: weight decay w, which adds (w/2)‖Θ‖² (acts as a larger Λ', still private)"`

	EncoderHidden      int     `flag:"encoder-hidden" help:"encoder width d1 (grid 8, 16, 64)"`
	EncoderEpochs      int     `flag:"encoder-epochs" help:"encoder training epochs (full batch, Adam, best-validation restore)"`
	EncoderLR          float64 `flag:"encoder-lr" help:"encoder Adam learning rate"`
	EncoderWeightDecay float64 `flag:"encoder-weight-decay" help:"encoder weight decay"`
	EncoderDropout     float64 `flag:"encoder-dropout" help:"encoder dropout (input and hidden)"`
	EncoderOutput      string  `flag:"encoder-output" help:"what encodes a node: linear (X·W1+b1) or relu (ReLU(X·W1+b1), non-negative; weaker on cora_ml)"`
	Center             bool    `flag:"center" help:"centre the encodings (subtract each column's mean over all nodes) before normalising rows; without it a shared offset acts as a class-size prior and strong Λ gives every node the largest class"`
}

// DefaultConfig is the setting from the paper's grid (App. Q), with the
// exact Newton solver, ξ = Λ_min, private one-hop inference with α_I = 0.1,
// pseudo-labels and centred encodings.
func DefaultConfig() Config {
	return Config{Alpha: 0.8, StepsSpec: "2", Lambda: 0.2, LossName: "softmargin", HuberDelta: 0.2, Omega: DefaultOmega, XiSpec: "auto",
		AlphaInference: 0.1, Inference: "private", PseudoLabels: true, Tol: 1e-10, Solver: "newton", AdamLR: 0.01, AdamEpochs: 500,
		AdamWeightDecay: 1e-5, EncoderHidden: 64, EncoderEpochs: 200, EncoderLR: 0.01, EncoderWeightDecay: 5e-4, EncoderDropout: 0.5,
		EncoderOutput: "linear", Center: true}
}

// Validate checks the hyperparameters.
func (c *Config) Validate() error {
	_, stepsErr := ParseSteps(c.StepsSpec)
	_, lossErr := ParseLoss(c.LossName)
	_, _, xiErr := ParseXi(c.XiSpec)
	return methods.CheckFields(c,
		methods.Require(&c.Alpha, c.Alpha > 0 && c.Alpha <= 1, "must be in (0, 1], got %v", c.Alpha),
		methods.Require(&c.StepsSpec, stepsErr == nil, "must be non-negative integers or inf, comma-separated, got %q", c.StepsSpec),
		methods.Require(&c.LossName, lossErr == nil, "must be softmargin or pseudohuber, got %q", c.LossName),
		methods.Require(&c.AlphaInference, c.AlphaInference <= 1, "must be in [0, 1] (or negative for α), got %v", c.AlphaInference),
		methods.OneOf(&c.Inference, "private", "public"),
		methods.Require(&c.Omega, c.Omega > 0 && c.Omega < 1, "must be in (0, 1), got %v", c.Omega),
		methods.OneOf(&c.Solver, "newton", "adam"),
		methods.PositiveF(&c.AdamLR), methods.Positive(&c.AdamEpochs), methods.NonNegF(&c.AdamWeightDecay),
		methods.NonNegF(&c.Lambda), methods.PositiveF(&c.HuberDelta),
		methods.Require(&c.XiSpec, xiErr == nil, "must be a positive number or auto, got %q", c.XiSpec), methods.PositiveF(&c.Tol),
		methods.Width(&c.EncoderHidden), methods.Epochs(&c.EncoderEpochs),
		methods.PositiveF(&c.EncoderLR), methods.NonNegF(&c.EncoderWeightDecay),
		methods.Prob(&c.EncoderDropout))
}

// GCON is the method with its configuration and what Validate derives from
// it.
type GCON struct {
	cfg Config

	steps  []int
	loss   LossKind
	xi     float64
	xiAuto bool
}

// New returns GCON with the configuration cfg.
func New(cfg Config) *GCON { return &GCON{cfg: cfg} }

func (*GCON) Name() string { return "gcon" }
func (*GCON) Short() string {
	return "GCON: edge-DP GCN by objective perturbation (MLP encoder, PPR propagation, exact perturbed linear solve)"
}
func (*GCON) Levels() []methods.Level { return []methods.Level{methods.None, methods.Edge} }
func (*GCON) DefaultSplit(dataset string) string {
	if dataset == "actor" {
		return "masks" // run r on published 60/20/20 mask r (the paper: 5 random 60/20/20 splits)
	}
	return methods.DefaultSplitFor(dataset)
}
func (m *GCON) Config() any { return &m.cfg }
func (m *GCON) Epochs() int { return m.cfg.EncoderEpochs }

// ParseSteps reads "2", "0,2", "inf" (also "∞").
func ParseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "inf" || f == "∞" {
			out = append(out, Inf)
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("--steps: %q is not a non-negative integer or inf", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// Validate checks the configuration and derives the propagation steps,
// the loss and ξ from it.
func (m *GCON) Validate() error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	m.steps, _ = ParseSteps(m.cfg.StepsSpec)
	m.loss, _ = ParseLoss(m.cfg.LossName)
	m.xi, m.xiAuto, _ = ParseXi(m.cfg.XiSpec)
	return nil
}

func (m *GCON) alphaI() float64 {
	if m.cfg.AlphaInference < 0 {
		return m.cfg.Alpha
	}
	return m.cfg.AlphaInference
}

// lossFor returns the configured loss for c classes.
func (m *GCON) lossFor(c int) (Loss, error) { return NewLoss(m.loss, c, m.cfg.HuberDelta) }

// encoded is the edge-free part of a run: row-normalised encodings of all
// nodes and the encoder's predictions (pseudo-labels).
type encoded struct {
	X      []float64 // n × d1, rows of unit norm (or zero)
	Pred   []int     // encoder argmax for every node
	ValAcc float64
	// Mod is the trained encoder (its Outputs[0] is the encoding before
	// centring and normalisation).
	Mod *run.Module
}

// encode trains the 2-layer MLP encoder on the labelled training nodes
// only (features and labels, no edges) and encodes every node with
// X W1 + b1 (or its ReLU with --encoder-output relu), then normalises the
// rows (Alg. 1 steps 1–2).
func (m *GCON) encode(ctx *methods.Context) (*encoded, error) {
	g := ctx.Graph
	var l1, l2 *layers.Linear
	tr := run.ModuleTraining{Epochs: m.cfg.EncoderEpochs, LR: m.cfg.EncoderLR, WeightDecay: m.cfg.EncoderWeightDecay}
	mod, err := run.BuildModule(ctx.Seed, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train),
		func(mm *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error) {
			if l1 == nil {
				l1 = layers.NewLinear(mm, "gcon.encoder.0", g.X.F, m.cfg.EncoderHidden, true, layers.InitPyG)
				l2 = layers.NewLinear(mm, "gcon.encoder.1", m.cfg.EncoderHidden, g.NumClasses, true, layers.InitPyG)
			}
			p := 0.0
			if train {
				p = m.cfg.EncoderDropout
			}
			pre := in[0].Linear(mm, l1, p)
			h := nn.ReLU(pre)
			logits := l2.Forward(mm.Dropout(h, p))
			if m.cfg.EncoderOutput == "relu" {
				return logits, []*G.Node{h}, nil
			}
			return logits, []*G.Node{pre}, nil
		})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	res, err := mod.Train(ctx, tr, nil)
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	run, err := mod.Model.NewRunner(mod.Outputs[0])
	if err != nil {
		return nil, err
	}
	if err := run.Run(); err != nil {
		return nil, err
	}
	x := append([]float64(nil), nn.Values(mod.Outputs[0])...)
	if len(x) != g.N*m.cfg.EncoderHidden {
		return nil, fmt.Errorf("encoder: %d encoded values, want %d×%d", len(x), g.N, m.cfg.EncoderHidden)
	}
	m.finishEncoding(x, g.N)
	return &encoded{X: x, Pred: res.Pred, ValAcc: res.ValAcc, Mod: mod}, nil
}

// finishEncoding centres (with --center) and row-normalises n encodings in
// place (Alg. 1 step 2).
func (m *GCON) finishEncoding(x []float64, n int) {
	if m.cfg.Center {
		CenterColumns(x, n, m.cfg.EncoderHidden)
	}
	NormalizeRows(x, n, m.cfg.EncoderHidden)
}

// trainingRows returns the loss rows and their one-hot targets: the
// labelled training nodes with their labels, plus (with pseudo-labels)
// every other node with the encoder's prediction. Validation and test
// labels are never read.
func (m *GCON) trainingRows(g *graphs.Graph, pred []int) ([]int, []int) {
	rows := append([]int(nil), g.Split.Train...)
	labels := make([]int, len(rows))
	for k, i := range rows {
		labels[k] = g.Labels[i]
	}
	if m.cfg.PseudoLabels {
		isTrain := make([]bool, g.N)
		for _, i := range rows {
			isTrain[i] = true
		}
		for i := 0; i < g.N; i++ {
			if !isTrain[i] {
				rows = append(rows, i)
				labels = append(labels, pred[i])
			}
		}
	}
	return rows, labels
}

// Delta resolves δ and says where it came from: --delta when given; auto
// (the default) from the public node count, for the undirected edge that is
// GCON's unit; --delta paper is the paper's 1/|E| with |E| the number of
// directed adjacency entries of the simple symmetric graph (GCON §VI-A),
// which reads the private edge count.
func Delta(ctx *methods.Context) (float64, string, error) {
	return run.ResolveDelta(ctx, run.EdgeUnits(ctx.Graph.N, true, func() (float64, string, error) {
		e := Hygiene(ctx.Graph.Adj).NNZ()
		if e < 2 {
			return 0, "", fmt.Errorf("gcon: δ = 1/|E| needs edges; pass --delta")
		}
		return 1 / float64(e), fmt.Sprintf("paper convention: 1/|E| with |E| = %d directed entries (a private count, treated as public)", e), nil
	}))
}

// calibrate runs CALIBRATE for the context.
func (m *GCON) calibrate(ctx *methods.Context, n1, c, d int) (Calibration, float64, string, error) {
	delta, source, err := Delta(ctx)
	if err != nil {
		return Calibration{}, 0, "", err
	}
	l, err := m.lossFor(c)
	if err != nil {
		return Calibration{}, 0, "", err
	}
	c1, c2, c3 := l.Constants()
	eps := math.Inf(1)
	if ctx.Private() {
		eps = ctx.Epsilon
	}
	cal, err := Calibrate(CalibrationInput{Epsilon: eps, Delta: delta, Omega: m.cfg.Omega, Xi: m.xi, XiAuto: m.xiAuto, Lambda: m.cfg.Lambda,
		C1: c1, C2: c2, C3: c3, N1: n1, Classes: c, Dim: d, Alpha: m.cfg.Alpha, Steps: m.steps})
	return cal, delta, source, err
}

// ledgerObjective names GCON's one release in the privacy ledger.
const ledgerObjective = "objective"

// Plan is the privacy plan of a calibration: one release, the perturbed
// minimiser, accounted by GCON's theorem (not by a composition accountant),
// or none when the run is not private or never reads an edge (Ψ = 0). A
// release lists δ's rule when it reads a count (run.DeltaUse: auto
// reads the public node count, paper the private |E|). The training rows
// n1, the classes and d are public at edge level (labels and features
// are).
func Plan(ctx *methods.Context, cal Calibration, delta float64, deltaSource string, n1, d int) *dp.Plan {
	noise := map[string]float64{
		"lambda": cal.Lambda, "lambda_requested": cal.LambdaIn, "lambda_prime": cal.LambdaPrime,
		"psi": cal.Psi, "n1": float64(n1), "d": float64(d), "expected_noise_norm": cal.ExpectedNoiseNorm(d),
	}
	p := &dp.Plan{Level: string(ctx.Level), Unit: "undirected edge", Epsilon: ctx.Epsilon, Delta: delta, DeltaSource: deltaSource,
		Accountant: "none", Noise: noise}
	if ctx.Level == methods.Edge {
		p.Relation = dp.Relation{Unit: dp.UnitEdge, Change: dp.ChangeAddRemove}
	}
	if !releases(ctx, cal) {
		p.Notes = []string{"ε = ∞: the same pipeline with B = 0 and Λ' = 0"}
		if ctx.Private() {
			p.Notes = []string{"Ψ = 0 (all steps 0 or α = 1): the model never reads edges, B = 0"}
		} else {
			p.Epsilon = math.Inf(1)
		}
		return p
	}
	if u := run.DeltaUse(ctx, run.DeltaUnits{Unit: "undirected edge"}, delta, deltaSource); u != nil {
		p.Uses = append(p.Uses, *u)
	}
	noise["beta"] = cal.Beta
	noise["c_theta"] = cal.CTheta
	noise["eps_lambda"] = cal.EpsLambda
	noise["c_sf"] = cal.Csf
	p.Accountant = "objective-perturbation"
	p.Releases = []dp.Planned{{Name: ledgerObjective, Epsilon: cal.Epsilon,
		What: fmt.Sprintf("the perturbed minimiser Θ (one release; inference reuses Θ): objective perturbation (GCON Thm 1), Ψ=%.6g, c_sf=%.6g, Λ=%.6g, Λ'=%.6g, c_θ=%.6g, ε_Λ=%.6g, β=%.6g → ε=%.6g, δ=%.3g",
			cal.Psi, cal.Csf, cal.Lambda, cal.LambdaPrime, cal.CTheta, cal.EpsLambda, cal.Beta, cal.Epsilon, delta)}}
	return p
}

// releases reports whether a calibrated run releases its minimiser
// privately (it draws B).
func releases(ctx *methods.Context, cal Calibration) bool {
	return ctx.Private() && !math.IsInf(cal.Beta, 1)
}

// Fit is the private part of a run on given encodings: propagation,
// calibration, noise, exact solve. It returns Θ_priv (d×c row-major).
type Fit struct {
	Theta []float64
	D     int
	Cal   Calibration
	Delta float64
	// DeltaSource says where δ came from.
	DeltaSource string
	N1          int
	Solve       SolveResult
	B           []float64
	// At is Ã of the training graph.
	At *graphs.CSR
}

// perturbed is Alg. 1 steps 4–9 on given encodings: the propagated
// features z (n×d), their training rows zt (n1×d) with one-hot targets y
// (n1×c), the calibration and the objective noise B (d×c).
type perturbed struct {
	z, zt, y, b []float64
	d, n1       int
	cal         Calibration
	delta       float64
	deltaSource string
	at          *graphs.CSR
}

// perturbedProblem propagates row-normalised encodings x (n×d1) over Ã —
// the only place a run reads the training graph's edges — calibrates for
// n1 = len(rows) and draws B. labels[k] is the class of rows[k].
func (m *GCON) perturbedProblem(ctx *methods.Context, x []float64, d1 int, rows, labels []int) (*perturbed, error) {
	pp, err := m.problem(ctx, x, d1, rows, labels)
	if err != nil {
		return nil, err
	}
	src, err := ctx.NoiseSource("gcon.objective-noise")
	if err != nil {
		return nil, err
	}
	// The recorder of the plan's one objective (Plan, the function the
	// run's report is built from), before B is drawn.
	var rec *dp.Recorder
	if releases(ctx, pp.cal) {
		if rec, err = ctx.Mechanism(Plan(ctx, pp.cal, pp.delta, pp.deltaSource, pp.n1, pp.d), ledgerObjective, nil); err != nil {
			return nil, err
		}
	}
	if pp.b, err = SampleObjectiveNoise(pp.d, ctx.Graph.NumClasses, pp.cal.Beta, src); err != nil {
		return nil, err
	}
	rec.Record()
	return pp, nil
}

// problem is perturbedProblem without the noise B.
func (m *GCON) problem(ctx *methods.Context, x []float64, d1 int, rows, labels []int) (*perturbed, error) {
	g := ctx.Graph
	c := g.NumClasses
	at := Transition(g.Adj)
	z, err := Concat(at, x, d1, m.cfg.Alpha, m.steps)
	if err != nil {
		return nil, err
	}
	d := d1 * len(m.steps)
	n1 := len(rows)
	if n1 == 0 {
		return nil, fmt.Errorf("gcon: no training rows")
	}
	cal, delta, source, err := m.calibrate(ctx, n1, c, d)
	if err != nil {
		return nil, err
	}
	zt := make([]float64, n1*d)
	y := make([]float64, n1*c)
	for k, i := range rows {
		copy(zt[k*d:(k+1)*d], z[i*d:(i+1)*d])
		y[k*c+labels[k]] = 1
	}
	return &perturbed{z: z, zt: zt, y: y, d: d, n1: n1, cal: cal, delta: delta, deltaSource: source, at: at}, nil
}

// FitEncoded runs Alg. 1 steps 4–11 on row-normalised encodings x (n×d1).
func (m *GCON) FitEncoded(ctx *methods.Context, x []float64, d1 int, rows, labels []int) (*Fit, error) {
	g := ctx.Graph
	c := g.NumClasses
	pp, err := m.perturbedProblem(ctx, x, d1, rows, labels)
	if err != nil {
		return nil, err
	}
	l, err := m.lossFor(c)
	if err != nil {
		return nil, err
	}
	z, b, d, n1, cal := pp.z, pp.b, pp.d, pp.n1, pp.cal
	p := &Problem{Z: pp.zt, Y: pp.y, B: b, N1: n1, D: d, Classes: c, Loss: l, Mu: cal.Lambda + cal.LambdaPrime}
	var res SolveResult
	if m.cfg.Solver == "adam" {
		if res, err = m.solveAdam(ctx.Seed, p, z, g.N, cal); err != nil {
			return nil, err
		}
	} else {
		if res, err = p.Solve(m.cfg.Tol); err != nil {
			return nil, err
		}
		// Round-off floor: the gradient holds terms of size ‖b‖/n1.
		var bmax float64
		for _, v := range b {
			bmax = math.Max(bmax, math.Abs(v))
		}
		if g := res.MaxGradNorm(); g > 1e-6*math.Max(1, bmax/float64(n1)) {
			return nil, fmt.Errorf("gcon: solver stopped at ‖∇‖ = %g (not the exact minimiser the guarantee needs)", g)
		}
	}
	return &Fit{Theta: res.Theta, D: d, Cal: cal, Delta: pp.delta, DeltaSource: pp.deltaSource, N1: n1, Solve: res, B: b, At: pp.at}, nil
}

// solveAdam is the paper's optimiser (App. Q): full-batch Adam over the
// gorgonia objective of Eq. 13 for --adam-epochs steps, with weight decay
// w, which adds (w/2)‖Θ‖² and so acts as a larger Λ' (still private,
// GCON App. Q). The returned gradient norms are those of that objective
// (μ = Λ+Λ'+w) at the final Θ: the guarantee is for its exact minimiser,
// which Adam only approaches (pitfall P1).
func (m *GCON) solveAdam(seed uint64, p *Problem, z []float64, n int, cal Calibration) (SolveResult, error) {
	model, theta, err := m.objectiveModel(seed, p.Z, p.Y, z, n, p.N1, p.D, p.Classes, cal, p.B)
	if err != nil {
		return SolveResult{}, err
	}
	opt := nn.NewAdam(m.cfg.AdamLR, m.cfg.AdamWeightDecay)
	for e := 0; e < m.cfg.AdamEpochs; e++ {
		if _, err := model.Step(); err != nil {
			return SolveResult{}, err
		}
		grads, err := model.Grads()
		if err != nil {
			return SolveResult{}, err
		}
		opt.Step(model.ParamValues(), grads)
	}
	res := SolveResult{Theta: append([]float64(nil), theta.Value()...), GradNorm: make([]float64, p.Classes), Iters: make([]int, p.Classes)}
	pw := *p
	pw.Mu += m.cfg.AdamWeightDecay
	col := make([]float64, p.D)
	for j := 0; j < p.Classes; j++ {
		for r := range col {
			col[r] = res.Theta[r*p.Classes+j]
		}
		res.GradNorm[j] = norm(pw.Gradient(j, col))
		res.Iters[j] = m.cfg.AdamEpochs
	}
	return res, nil
}

// inferenceFeatures is Z_inf over the transition matrix at: with private
// inference the one-hop OneHop features (node v's row reads only its own
// edges), otherwise the full propagation.
func (m *GCON) inferenceFeatures(at *graphs.CSR, x []float64, d1 int) ([]float64, error) {
	if m.cfg.Inference == "public" {
		return Concat(at, x, d1, m.cfg.Alpha, m.steps)
	}
	return OneHop(at, x, d1, m.alphaI(), m.steps)
}

// Scores returns the posteriors softmax_j (Z_inf Θ)_vj of every node v
// (n×c, row-major).
func (m *GCON) Scores(fit *Fit, at *graphs.CSR, x []float64, d1, c int) ([]float64, error) {
	z, err := m.inferenceFeatures(at, x, d1)
	if err != nil {
		return nil, err
	}
	n, d := at.Rows, fit.D
	s := make([]float64, n*c)
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			var v float64
			for k := 0; k < d; k++ {
				v += z[i*d+k] * fit.Theta[k*c+j]
			}
			s[i*c+j] = v
		}
	}
	return run.Softmax(s, n, c), nil
}

// Predict returns argmax_j (Z_inf Θ)_vj for every node v: with private
// inference Z_inf is the one-hop OneHop features (node v's prediction
// reads only its own edges), otherwise the full propagation.
func (m *GCON) Predict(fit *Fit, at *graphs.CSR, x []float64, d1, c int) ([]int, error) {
	z, err := m.inferenceFeatures(at, x, d1)
	if err != nil {
		return nil, err
	}
	n, d := at.Rows, fit.D
	pred := make([]int, n)
	for i := 0; i < n; i++ {
		best, bi := math.Inf(-1), 0
		for j := 0; j < c; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += z[i*d+k] * fit.Theta[k*c+j]
			}
			if s > best {
				best, bi = s, j
			}
		}
		pred[i] = bi
	}
	return pred, nil
}

// graphsFor returns the context training runs on and the transition
// matrix inference uses (nil: the training one, with the one-hop private
// rule). With --inference public (scenario ii, Fig. 3) the edges touching
// validation and test nodes form a public test graph: training sees only
// the other (private) edges, and prediction propagates fully over the
// public graph, which holds no private training edge. δ stays 1/|E| of the
// whole graph (smaller, so conservative).
func (m *GCON) graphsFor(ctx *methods.Context) (*methods.Context, *graphs.CSR, error) {
	if m.cfg.Inference != "public" {
		return ctx, nil, nil
	}
	g := ctx.Graph
	eval := append(append([]int(nil), g.Split.Val...), g.Split.Test...)
	public, private := graphs.SplitEdgesAt(g.Adj, eval)
	tc := *ctx
	tc.Graph = g.WithAdj(private)
	if ctx.Private() {
		d, _, err := Delta(ctx) // the whole graph's δ
		if err != nil {
			return nil, nil, err
		}
		tc.Delta, tc.DeltaRule = d, methods.DeltaGiven
	}
	return &tc, Transition(public), nil
}

// encodeRows trains the encoder (it reads no edge) and returns its
// encodings with the training rows and their (pseudo-)labels.
func (m *GCON) encodeRows(ctx *methods.Context) (*encoded, []int, []int, error) {
	if m.steps == nil {
		if err := m.Validate(); err != nil {
			return nil, nil, nil, err
		}
	}
	enc, err := m.encode(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	rows, labels := m.trainingRows(ctx.Graph, enc.Pred)
	return enc, rows, labels, nil
}

// Run trains GCON once and predicts every node.
func (m *GCON) Run(ctx *methods.Context) (*methods.Outcome, error) {
	if ctx.Level == methods.Node {
		return nil, fmt.Errorf("gcon protects edges only (--privacy edge or none)")
	}
	// The ledger is shared with the training context below.
	if err := run.Begin(ctx, "gcon", m.cfg.EncoderHidden, 2+2*len(m.cfg.StepsSpec)); err != nil {
		return nil, err
	}
	g := ctx.Graph
	enc, rows, labels, err := m.encodeRows(ctx)
	if err != nil {
		return nil, err
	}
	trainCtx, inferAt, err := m.graphsFor(ctx)
	if err != nil {
		return nil, err
	}
	fit, err := m.FitEncoded(trainCtx, enc.X, m.cfg.EncoderHidden, rows, labels)
	if err != nil {
		return nil, err
	}
	if inferAt == nil {
		inferAt = fit.At
	}
	pred, err := m.Predict(fit, inferAt, enc.X, m.cfg.EncoderHidden, g.NumClasses)
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: pred, ValAcc: trainers.Accuracy(pred, g.Labels, g.Split.Val),
		Extra: map[string]float64{"encoder_test_acc": trainers.Accuracy(enc.Pred, g.Labels, g.Split.Test),
			"lambda_used": fit.Cal.Lambda, "solver_grad_norm": fit.Solve.MaxGradNorm()}}
	if out.Scores, err = m.Scores(fit, inferAt, enc.X, m.cfg.EncoderHidden, g.NumClasses); err != nil {
		return nil, err
	}
	plan := m.plan(ctx, fit)
	if err := run.Finish(ctx, out, plan, m.inference(ctx, plan, fit, enc.Mod, inferAt)); err != nil {
		return nil, err
	}
	if m.cfg.Solver == "adam" {
		note := fmt.Sprintf("solver adam (%d steps, lr %g, weight decay %g): the guarantee is for the exact minimiser; Adam stopped at ‖∇‖ = %.3g", m.cfg.AdamEpochs, m.cfg.AdamLR, m.cfg.AdamWeightDecay, fit.Solve.MaxGradNorm())
		if out.Privacy.Notes != "" {
			note = out.Privacy.Notes + "; " + note
		}
		out.Privacy.Notes = note
	}
	return out, nil
}

// plan is a run's privacy plan (Plan) with the uses that depend on the
// configuration: with --inference public, the public test graph.
func (m *GCON) plan(ctx *methods.Context, fit *Fit) *dp.Plan {
	p := Plan(ctx, fit.Cal, fit.Delta, fit.DeltaSource, fit.N1, fit.D)
	if len(p.Releases) > 0 && m.cfg.Inference == "public" {
		p.Uses = append(p.Uses, dp.Use{Kind: "inference",
			What: "--inference public: the edges touching validation and test nodes form a public test graph; training reads only the other edges, " +
				"prediction propagates over the public graph without noise",
			Covered: dp.TreatedAsPublic("GCON's scenario ii: the guarantee covers only the edges outside the public test graph; which edges those are " +
				"follows from the split, and δ is the whole graph's")})
	}
	return p
}

// inference is the trained GCON's query over a graph h: the encoder over
// the query features (centred and normalised over h's nodes), then Θ on
// the inference features over h — the run's inference graph when h is the
// run's graph. It draws no noise. With private (one-hop) inference every
// node's posterior reads its own edges without noise: GCON's argument
// covers a node receiving its own prediction, not a querier who sees every
// node's, so no ε covers the queries. With public inference the run's
// graph is queried over its public test graph only, at no cost; another
// graph is propagated over in full, which nothing covers.
func (m *GCON) inference(ctx *methods.Context, plan *dp.Plan, fit *Fit, enc *run.Module, runAt *graphs.CSR) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		at := runAt
		if h != ctx.Graph {
			at = Transition(h.Adj)
		}
		var cost *methods.QueryCost
		if ctx.Private() {
			what := "the encoder and Θ over the query graph, no noise"
			switch {
			case m.cfg.Inference != "public":
				cost = methods.UncoveredQueries(ctx, plan, what, "one-hop private inference reads every node's own edges without noise and shows the posteriors to the querier; "+
					"GCON's argument covers a node that receives only its own prediction")
			case h != ctx.Graph:
				cost = methods.UncoveredQueries(ctx, plan, what, "--inference public propagates over all of the query graph's edges without noise; only the run's public test graph is public")
			default:
				cost = methods.NewQueryCost(ctx, plan, what+" (the run's public test graph)", nil)
			}
		}
		q := run.NewQuery(h.N, ctx.Graph.X.F, cost, func() (methods.QueryFunc, error) {
			ev, err := enc.NewEvaluator(h.N)
			if err != nil {
				return nil, err
			}
			return func(x *graphs.Features) ([]float64, error) {
				outs, err := ev.Outputs(x)
				if err != nil {
					return nil, err
				}
				e := outs[0]
				m.finishEncoding(e, h.N)
				return m.Scores(fit, at, e, m.cfg.EncoderHidden, h.NumClasses)
			}, nil
		})
		return &run.Inference{Query: q, Cost: cost}, nil
	}
}

// AuditTarget is GCON's one release, the perturbed minimiser Θ, for `dpgnn
// audit` (edge level, exact solver). The encoder reads no edge and is
// trained once; on each graph the propagation over its edges and the
// calibration are redone, and every release draws a fresh B and solves.
func (m *GCON) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	if opts.Multiplier > 0 {
		return nil, fmt.Errorf("--multiplier is for aggregation releases (gap, progap): GCON's noise follows from its calibration")
	}
	if ctx.Level != methods.Edge || !ctx.Private() {
		return nil, fmt.Errorf("gcon is audited at edge level with a finite --epsilon")
	}
	if m.cfg.Solver == "adam" || m.cfg.Inference == "public" {
		return nil, fmt.Errorf("the audit replays GCON's exact solve with private inference (no --solver adam, no --inference public)")
	}
	g := ctx.Graph
	enc, rows, labels, err := m.encodeRows(ctx)
	if err != nil {
		return nil, err
	}
	pp, err := m.problem(ctx, enc.X, m.cfg.EncoderHidden, rows, labels)
	if err != nil {
		return nil, err
	}
	l, err := m.lossFor(g.NumClasses)
	if err != nil {
		return nil, err
	}
	t := &run.AuditTarget{Claimed: pp.cal.Epsilon, Delta: pp.delta, EdgeUnit: run.EdgeUndirected,
		What: fmt.Sprintf("the perturbed minimiser Θ (%d×%d), β=%.4g, Λ=%.4g (one release: GCON's whole ε)", pp.d, g.NumClasses, pp.cal.Beta, pp.cal.Lambda)}
	t.Prepare = func(gr *graphs.Graph) (run.Release1, error) {
		gc := *ctx
		gc.Graph = gr
		q, err := m.problem(&gc, enc.X, m.cfg.EncoderHidden, rows, labels)
		if err != nil {
			return nil, err
		}
		return func(src *dp.Source) ([]float64, error) {
			b, err := SampleObjectiveNoise(q.d, gr.NumClasses, q.cal.Beta, src)
			if err != nil {
				return nil, err
			}
			p := &Problem{Z: q.zt, Y: q.y, B: b, N1: q.n1, D: q.d, Classes: gr.NumClasses, Loss: l, Mu: q.cal.Lambda + q.cal.LambdaPrime}
			res, err := p.Solve(m.cfg.Tol)
			if err != nil {
				return nil, err
			}
			return res.Theta, nil
		}, nil
	}
	return t, nil
}

var _ run.Auditor = (*GCON)(nil)

// AccountCounts: GCON's calibration needs the classes, the training rows n1
// and the encoding dimension d.
func (m *GCON) AccountCounts(methods.Level) []string {
	return []string{run.CountClasses, run.CountN1, run.CountDim}
}

// AccountPlan is GCON's privacy plan for these counts (`dpgnn account
// gcon`): the calibration of its objective perturbation (Alg. 1's
// CALIBRATE) for the method's α, steps, Λ and loss.
func (m *GCON) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	if ctx.Level != methods.Edge {
		return nil, fmt.Errorf("gcon protects edges only (--level edge)")
	}
	if ctx.Multiplier > 0 {
		return nil, fmt.Errorf("gcon's noise follows from its calibration: give --epsilon, not --noise")
	}
	if err := methods.CheckAll(m.Validate(), run.CheckCounts(c, m.AccountCounts(ctx.Level))); err != nil {
		return nil, err
	}
	l, err := m.lossFor(c.Classes)
	if err != nil {
		return nil, err
	}
	c1, c2, c3 := l.Constants()
	delta, source, err := run.ResolveDelta(ctx, run.DeltaUnits{Unit: "undirected edge"}) // no graph: δ must be given
	if err != nil {
		return nil, err
	}
	cal, err := Calibrate(CalibrationInput{Epsilon: ctx.Epsilon, Delta: delta, Omega: m.cfg.Omega, Xi: m.xi, XiAuto: m.xiAuto, Lambda: m.cfg.Lambda,
		C1: c1, C2: c2, C3: c3, N1: c.N1, Classes: c.Classes, Dim: c.Dim, Alpha: m.cfg.Alpha, Steps: m.steps})
	if err != nil {
		return nil, err
	}
	p := Plan(ctx, cal, delta, source, c.N1, c.Dim)
	p.Noise["lambda_min"], p.Noise["xi"] = cal.LambdaMin, cal.Xi
	return &run.Calibrated{Plan: p}, nil
}

var _ run.Accountable = (*GCON)(nil)
