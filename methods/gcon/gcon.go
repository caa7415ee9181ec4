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
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/pflag"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return &GCON{} }) }

// GCON holds the hyperparameters (defaults from the paper's grid, App. Q).
type GCON struct {
	Alpha      float64
	StepsSpec  string
	Lambda     float64
	LossName   string
	HuberDelta float64
	Omega      float64
	XiSpec     string
	// AlphaInference is α_I; negative means "equal to α".
	AlphaInference float64
	Inference      string // private | public
	PseudoLabels   bool
	Tol            float64
	// Solver is newton (exact minimiser, the default) or adam (the paper's
	// optimiser, App. Q).
	Solver          string
	AdamLR          float64
	AdamEpochs      int
	AdamWeightDecay float64

	EncoderHidden      int
	EncoderEpochs      int
	EncoderLR          float64
	EncoderWeightDecay float64
	EncoderDropout     float64
	EncoderOutput      string
	Center             bool

	steps  []int
	loss   LossKind
	xi     float64
	xiAuto bool
}

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
func (m *GCON) Epochs() int { return m.EncoderEpochs }

func (m *GCON) BindFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&m.Alpha, "alpha", 0.8, "restart probability α ∈ (0, 1] of the propagation (grid 0.2, 0.4, 0.6, 0.8)")
	fs.StringVar(&m.StepsSpec, "steps", "2", `propagation step counts m_1,…,m_s, comma-separated; "inf" for PPR (e.g. "2", "0,2", "inf")`)
	fs.Float64Var(&m.Lambda, "lambda", 0.2, "L2 coefficient Λ (grid 0.01, 0.2, 1, 2; raised by Eq. 22 when below Λ_min)")
	fs.StringVar(&m.LossName, "loss", "softmargin", "per-class loss: softmargin or pseudohuber")
	fs.Float64Var(&m.HuberDelta, "huber-delta", 0.2, "pseudo-Huber δ_l (grid 0.1, 0.2, 0.5)")
	fs.Float64Var(&m.Omega, "omega", DefaultOmega, "budget divider ω ∈ (0, 1)")
	fs.StringVar(&m.XiSpec, "xi", "auto", "ξ > 0 of Eq. 22, Λ ← max(Λ, Λ_min + ξ); auto: ξ = Λ_min (the paper leaves ξ open; a tiny ξ with Λ < Λ_min makes c_θ and the noise explode)")
	fs.Float64Var(&m.AlphaInference, "alpha-inference", 0.1, "α_I of the one-hop private inference (negative: α; grid α, 0.1, 0.9; 0.1 was best on cora_ml and citeseer for every α)")
	fs.StringVar(&m.Inference, "inference", "private", "private (one-hop, Eq. 16: each node's prediction uses only its own edges) or public (scenario ii, Fig. 3: the edges touching validation/test nodes form a public test graph, training uses only the remaining private edges, prediction propagates fully over the public graph)")
	fs.BoolVar(&m.PseudoLabels, "pseudo-labels", true, "train on all nodes with encoder pseudo-labels for the unlabelled ones (n1 = n); false: labelled nodes only (n1 = n0)")
	fs.StringVar(&m.Solver, "solver", "newton", "newton (exact minimiser to --tol, which the guarantee assumes) or adam (the paper's optimiser: full-batch Adam for --adam-epochs; reports the final gradient norm)")
	fs.Float64Var(&m.AdamLR, "adam-lr", 0.01, "adam solver: learning rate (paper grid 0.001, 0.01)")
	fs.IntVar(&m.AdamEpochs, "adam-epochs", 500, "adam solver: full-batch steps (the paper does not say)")
	fs.Float64Var(&m.AdamWeightDecay, "adam-weight-decay", 1e-5, "adam solver: weight decay w, which adds (w/2)‖Θ‖² (acts as a larger Λ', still private)")
	fs.Float64Var(&m.Tol, "tol", 1e-10, "Newton stopping tolerance on ‖∇f_j‖₂ (the guarantee is for the exact minimiser)")
	fs.IntVar(&m.EncoderHidden, "encoder-hidden", 64, "encoder width d1 (grid 8, 16, 64)")
	fs.IntVar(&m.EncoderEpochs, "encoder-epochs", 200, "encoder training epochs (full batch, Adam, best-validation restore)")
	fs.Float64Var(&m.EncoderLR, "encoder-lr", 0.01, "encoder Adam learning rate")
	fs.Float64Var(&m.EncoderWeightDecay, "encoder-weight-decay", 5e-4, "encoder weight decay")
	fs.Float64Var(&m.EncoderDropout, "encoder-dropout", 0.5, "encoder dropout (input and hidden)")
	fs.BoolVar(&m.Center, "center", true, "centre the encodings (subtract each column's mean over all nodes) before normalising rows; without it a shared offset acts as a class-size prior and strong Λ gives every node the largest class")
	fs.StringVar(&m.EncoderOutput, "encoder-output", "linear", "what encodes a node: linear (X·W1+b1) or relu (ReLU(X·W1+b1), non-negative; weaker on cora_ml)")
}

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

func (m *GCON) Validate() error {
	var err error
	if m.steps, err = ParseSteps(m.StepsSpec); err != nil {
		return err
	}
	if m.loss, err = ParseLoss(m.LossName); err != nil {
		return err
	}
	xiErr := error(nil)
	m.xi, m.xiAuto, xiErr = ParseXi(m.XiSpec)
	alphaErr := error(nil)
	if !(m.Alpha > 0 && m.Alpha <= 1) {
		alphaErr = fmt.Errorf("--alpha must lie in (0, 1], got %v", m.Alpha)
	}
	aiErr := error(nil)
	if m.AlphaInference > 1 {
		aiErr = fmt.Errorf("--alpha-inference must lie in [0, 1] (or be negative for α), got %v", m.AlphaInference)
	}
	infErr := error(nil)
	if m.Inference != "private" && m.Inference != "public" {
		infErr = fmt.Errorf("--inference must be private or public, got %q", m.Inference)
	}
	solverErr := error(nil)
	if m.Solver != "newton" && m.Solver != "adam" {
		solverErr = fmt.Errorf("--solver must be newton or adam, got %q", m.Solver)
	}
	omErr := error(nil)
	if !(m.Omega > 0 && m.Omega < 1) {
		omErr = fmt.Errorf("--omega must lie in (0, 1), got %v", m.Omega)
	}
	return methods.CheckAll(alphaErr, aiErr, infErr, omErr, solverErr,
		methods.PositiveF("adam-lr", m.AdamLR), methods.Positive("adam-epochs", m.AdamEpochs), methods.NonNegF("adam-weight-decay", m.AdamWeightDecay),
		methods.NonNegF("lambda", m.Lambda), methods.PositiveF("huber-delta", m.HuberDelta),
		xiErr, methods.PositiveF("tol", m.Tol),
		methods.Width("encoder-hidden", m.EncoderHidden), methods.Epochs("encoder-epochs", m.EncoderEpochs),
		methods.PositiveF("encoder-lr", m.EncoderLR), methods.NonNegF("encoder-weight-decay", m.EncoderWeightDecay),
		methods.Prob("encoder-dropout", m.EncoderDropout))
}

func (m *GCON) alphaI() float64 {
	if m.AlphaInference < 0 {
		return m.Alpha
	}
	return m.AlphaInference
}

// lossFor returns the configured loss for c classes.
func (m *GCON) lossFor(c int) (Loss, error) { return NewLoss(m.loss, c, m.HuberDelta) }

// encoded is the edge-free part of a run: row-normalised encodings of all
// nodes and the encoder's predictions (pseudo-labels).
type encoded struct {
	X      []float64 // n × d1, rows of unit norm (or zero)
	Pred   []int     // encoder argmax for every node
	ValAcc float64
}

// encode trains the 2-layer MLP encoder on the labelled training nodes
// only (features and labels, no edges) and encodes every node with
// X W1 + b1 (or its ReLU with --encoder-output relu), then normalises the
// rows (Alg. 1 steps 1–2).
func (m *GCON) encode(ctx *methods.Context) (*encoded, error) {
	g := ctx.Graph
	var l1, l2 *layers.Linear
	tr := methods.ModuleTraining{Epochs: m.EncoderEpochs, LR: m.EncoderLR, WeightDecay: m.EncoderWeightDecay}
	mod, err := methods.BuildModule(ctx.Seed, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train),
		func(mm *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error) {
			if l1 == nil {
				l1 = layers.NewLinear(mm, "gcon.encoder.0", g.X.F, m.EncoderHidden, true, layers.InitPyG)
				l2 = layers.NewLinear(mm, "gcon.encoder.1", m.EncoderHidden, g.NumClasses, true, layers.InitPyG)
			}
			p := 0.0
			if train {
				p = m.EncoderDropout
			}
			pre := in[0].Linear(mm, l1, p)
			h := nn.ReLU(pre)
			logits := l2.Forward(mm.Dropout(h, p))
			if m.EncoderOutput == "relu" {
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
	if len(x) != g.N*m.EncoderHidden {
		return nil, fmt.Errorf("encoder: %d encoded values, want %d×%d", len(x), g.N, m.EncoderHidden)
	}
	if m.Center {
		CenterColumns(x, g.N, m.EncoderHidden)
	}
	NormalizeRows(x, g.N, m.EncoderHidden)
	return &encoded{X: x, Pred: res.Pred, ValAcc: res.ValAcc}, nil
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
	if m.PseudoLabels {
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
	return ctx.ResolveDelta(methods.EdgeUnits(ctx.Graph.N, true, func() (float64, string, error) {
		e := Hygiene(ctx.Graph.Adj).NNZ()
		if e < 2 {
			return 0, "", fmt.Errorf("gcon: δ = 1/|E| needs edges; pass --delta")
		}
		return 1 / float64(e), fmt.Sprintf("paper convention: 1/|E| with |E| = %d directed entries (a private count, not covered)", e), nil
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
	cal, err := Calibrate(CalibrationInput{Epsilon: eps, Delta: delta, Omega: m.Omega, Xi: m.xi, XiAuto: m.xiAuto, Lambda: m.Lambda,
		C1: c1, C2: c2, C3: c3, N1: n1, Classes: c, Dim: d, Alpha: m.Alpha, Steps: m.steps})
	return cal, delta, source, err
}

// ledgerObjective names GCON's one release in the privacy ledger.
const ledgerObjective = "objective"

// Plan is the privacy plan of a calibration: one release, the perturbed
// minimiser, accounted by GCON's theorem (not by a composition accountant),
// or none when the run is not private or never reads an edge (Ψ = 0).
func Plan(ctx *methods.Context, cal Calibration, delta float64, deltaSource string, n1, d int) *dp.Plan {
	noise := map[string]float64{
		"lambda": cal.Lambda, "lambda_requested": cal.LambdaIn, "lambda_prime": cal.LambdaPrime,
		"psi": cal.Psi, "n1": float64(n1), "d": float64(d), "expected_noise_norm": cal.ExpectedNoiseNorm(d),
	}
	p := &dp.Plan{Level: string(ctx.Level), Unit: "undirected edge", Epsilon: ctx.Epsilon, Delta: delta, DeltaSource: deltaSource,
		Accountant: "none", Noise: noise}
	if !releases(ctx, cal) {
		p.Notes = []string{"ε = ∞: the same pipeline with B = 0 and Λ' = 0"}
		if ctx.Private() {
			p.Notes = []string{"Ψ = 0 (all steps 0 or α = 1): the model never reads edges, B = 0"}
		} else {
			p.Epsilon = math.Inf(1)
		}
		return p
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
	if pp.b, err = dp.SampleObjectiveNoise(pp.d, ctx.Graph.NumClasses, pp.cal.Beta, src); err != nil {
		return nil, err
	}
	if releases(ctx, pp.cal) {
		ctx.Ledger().Record(ledgerObjective, nil)
	}
	return pp, nil
}

// problem is perturbedProblem without the noise B.
func (m *GCON) problem(ctx *methods.Context, x []float64, d1 int, rows, labels []int) (*perturbed, error) {
	g := ctx.Graph
	c := g.NumClasses
	at := Transition(g.Adj)
	z, err := Concat(at, x, d1, m.Alpha, m.steps)
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
	if m.Solver == "adam" {
		if res, err = m.solveAdam(ctx.Seed, p, z, g.N, cal); err != nil {
			return nil, err
		}
	} else {
		if res, err = p.Solve(m.Tol); err != nil {
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
	opt := nn.NewAdam(m.AdamLR, m.AdamWeightDecay)
	for e := 0; e < m.AdamEpochs; e++ {
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
	pw.Mu += m.AdamWeightDecay
	col := make([]float64, p.D)
	for j := 0; j < p.Classes; j++ {
		for r := range col {
			col[r] = res.Theta[r*p.Classes+j]
		}
		res.GradNorm[j] = norm(pw.Gradient(j, col))
		res.Iters[j] = m.AdamEpochs
	}
	return res, nil
}

// Predict returns argmax_j (Z_inf Θ)_vj for every node v: with private
// inference Z_inf is the one-hop OneHop features (node v's prediction
// reads only its own edges), otherwise the full propagation.
func (m *GCON) Predict(fit *Fit, at *graphs.CSR, x []float64, d1, c int) ([]int, error) {
	var z []float64
	var err error
	if m.Inference == "public" {
		z, err = Concat(at, x, d1, m.Alpha, m.steps)
	} else {
		z, err = OneHop(at, x, d1, m.alphaI(), m.steps)
	}
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
	if m.Inference != "public" {
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
	if err := methods.CheckModelMemory(ctx, "gcon", m.EncoderHidden, 2+2*len(m.StepsSpec)); err != nil {
		return nil, err
	}
	ctx.Ledger() // shared with the training context below
	g := ctx.Graph
	enc, rows, labels, err := m.encodeRows(ctx)
	if err != nil {
		return nil, err
	}
	trainCtx, inferAt, err := m.graphsFor(ctx)
	if err != nil {
		return nil, err
	}
	fit, err := m.FitEncoded(trainCtx, enc.X, m.EncoderHidden, rows, labels)
	if err != nil {
		return nil, err
	}
	if inferAt == nil {
		inferAt = fit.At
	}
	pred, err := m.Predict(fit, inferAt, enc.X, m.EncoderHidden, g.NumClasses)
	if err != nil {
		return nil, err
	}
	rep, err := ctx.Report(Plan(ctx, fit.Cal, fit.Delta, fit.DeltaSource, fit.N1, fit.D))
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: pred, ValAcc: trainers.Accuracy(pred, g.Labels, g.Split.Val),
		Privacy: rep,
		Extra: map[string]float64{"encoder_test_acc": trainers.Accuracy(enc.Pred, g.Labels, g.Split.Test),
			"lambda_used": fit.Cal.Lambda, "solver_grad_norm": fit.Solve.MaxGradNorm()}}
	if m.Solver == "adam" {
		note := fmt.Sprintf("solver adam (%d steps, lr %g, weight decay %g): the guarantee is for the exact minimiser; Adam stopped at ‖∇‖ = %.3g", m.AdamEpochs, m.AdamLR, m.AdamWeightDecay, fit.Solve.MaxGradNorm())
		if out.Privacy.Notes != "" {
			note = out.Privacy.Notes + "; " + note
		}
		out.Privacy.Notes = note
	}
	return out, nil
}

// AuditTarget is GCON's one release, the perturbed minimiser Θ, for `dpgnn
// audit` (edge level, exact solver). The encoder reads no edge and is
// trained once; on each graph the propagation over its edges and the
// calibration are redone, and every release draws a fresh B and solves.
func (m *GCON) AuditTarget(ctx *methods.Context, opts methods.AuditOptions) (*methods.AuditTarget, error) {
	if opts.Multiplier > 0 {
		return nil, fmt.Errorf("--multiplier is for aggregation releases (gap, progap): GCON's noise follows from its calibration")
	}
	if ctx.Level != methods.Edge || !ctx.Private() {
		return nil, fmt.Errorf("gcon is audited at edge level with a finite --epsilon")
	}
	if m.Solver == "adam" || m.Inference == "public" {
		return nil, fmt.Errorf("the audit replays GCON's exact solve with private inference (no --solver adam, no --inference public)")
	}
	g := ctx.Graph
	enc, rows, labels, err := m.encodeRows(ctx)
	if err != nil {
		return nil, err
	}
	pp, err := m.problem(ctx, enc.X, m.EncoderHidden, rows, labels)
	if err != nil {
		return nil, err
	}
	l, err := m.lossFor(g.NumClasses)
	if err != nil {
		return nil, err
	}
	t := &methods.AuditTarget{Claimed: pp.cal.Epsilon, Delta: pp.delta, EdgeUnit: methods.EdgeUndirected,
		What: fmt.Sprintf("the perturbed minimiser Θ (%d×%d), β=%.4g, Λ=%.4g (one release: GCON's whole ε)", pp.d, g.NumClasses, pp.cal.Beta, pp.cal.Lambda)}
	t.Prepare = func(gr *graphs.Graph) (methods.Release1, error) {
		gc := *ctx
		gc.Graph = gr
		q, err := m.problem(&gc, enc.X, m.EncoderHidden, rows, labels)
		if err != nil {
			return nil, err
		}
		return func(src *dp.Source) ([]float64, error) {
			b, err := dp.SampleObjectiveNoise(q.d, gr.NumClasses, q.cal.Beta, src)
			if err != nil {
				return nil, err
			}
			p := &Problem{Z: q.zt, Y: q.y, B: b, N1: q.n1, D: q.d, Classes: gr.NumClasses, Loss: l, Mu: q.cal.Lambda + q.cal.LambdaPrime}
			res, err := p.Solve(m.Tol)
			if err != nil {
				return nil, err
			}
			return res.Theta, nil
		}, nil
	}
	return t, nil
}

var _ methods.Auditor = (*GCON)(nil)

// AccountCounts: GCON's calibration needs the classes, the training rows n1
// and the encoding dimension d.
func (m *GCON) AccountCounts(methods.Level) []string {
	return []string{methods.CountClasses, methods.CountN1, methods.CountDim}
}

// AccountPlan is GCON's privacy plan for these counts (`dpgnn account
// gcon`): the calibration of its objective perturbation (Alg. 1's
// CALIBRATE) for the method's α, steps, Λ and loss.
func (m *GCON) AccountPlan(ctx *methods.Context, c methods.Counts) (*methods.Calibrated, error) {
	if ctx.Level != methods.Edge {
		return nil, fmt.Errorf("gcon protects edges only (--level edge)")
	}
	if ctx.Multiplier > 0 {
		return nil, fmt.Errorf("gcon's noise follows from its calibration: give --epsilon, not --noise")
	}
	if err := methods.CheckAll(m.Validate(), methods.CheckCounts(c, m.AccountCounts(ctx.Level))); err != nil {
		return nil, err
	}
	l, err := m.lossFor(c.Classes)
	if err != nil {
		return nil, err
	}
	c1, c2, c3 := l.Constants()
	delta, source, err := ctx.ResolveDelta(methods.DeltaUnits{Unit: "undirected edge"}) // no graph: δ must be given
	if err != nil {
		return nil, err
	}
	cal, err := Calibrate(CalibrationInput{Epsilon: ctx.Epsilon, Delta: delta, Omega: m.Omega, Xi: m.xi, XiAuto: m.xiAuto, Lambda: m.Lambda,
		C1: c1, C2: c2, C3: c3, N1: c.N1, Classes: c.Classes, Dim: c.Dim, Alpha: m.Alpha, Steps: m.steps})
	if err != nil {
		return nil, err
	}
	p := Plan(ctx, cal, delta, source, c.N1, c.Dim)
	p.Noise["lambda_min"], p.Noise["xi"] = cal.LambdaMin, cal.Xi
	return &methods.Calibrated{Plan: p}, nil
}

var _ methods.Accountable = (*GCON)(nil)
