package dp

import (
	"fmt"
	"math"
	"slices"
)

// PlanCurve returns the RDP curve α ↦ ε(α) of one run of the plan: its
// releases composed at each order (the same terms the RDP accountant adds
// up). A plan that subsamples its units (SubsampleRate) gets the curve of
// its releases without amplification, which bounds the subsampled run too.
// A plan with a release outside the accountant has no RDP curve (an error);
// a plan without releases has the zero curve, or +Inf everywhere when it
// claims no privacy (Epsilon = +Inf).
func PlanCurve(p *Plan) (func(alpha float64) float64, error) {
	if p == nil {
		return nil, fmt.Errorf("dp: nil plan")
	}
	if len(p.Releases) == 0 {
		if math.IsInf(p.Epsilon, 1) {
			return func(float64) float64 { return math.Inf(1) }, nil
		}
		return func(float64) float64 { return 0 }, nil
	}
	var t rdpTerms
	for _, r := range p.Releases {
		if r.Event == nil {
			return nil, fmt.Errorf("dp: release %q is outside the accountant and has no RDP curve", r.Name)
		}
		if err := r.Event.Validate(); err != nil {
			return nil, err
		}
		if err := t.add(r.Event, 1, "rdp"); err != nil {
			return nil, fmt.Errorf("dp: release %q: %w", r.Name, err)
		}
	}
	return t.at, nil
}

// Candidates is the distribution of the number K of candidates in private
// hyperparameter tuning (Papernot & Steinke, "Hyperparameter Tuning with
// Renyi Differential Privacy", ICLR 2022): Poisson(Mu) when Kind is
// "poisson"; the truncated negative binomial (Eta, Gamma) of their
// Definition 1 when Kind is "negbin" (Eta = 0 is the logarithmic
// distribution, Eta = 1 the geometric).
type Candidates struct {
	Kind  string
	Mu    float64 // Poisson mean, > 0
	Eta   float64 // shape η > −1
	Gamma float64 // γ ∈ (0, 1)
}

// Validate checks the parameters.
func (c Candidates) Validate() error {
	switch c.Kind {
	case "poisson":
		if !(c.Mu > 0) || math.IsInf(c.Mu, 1) {
			return fmt.Errorf("dp: Poisson mean must be positive and finite, got %g", c.Mu)
		}
	case "negbin":
		if !(c.Eta > -1) || math.IsInf(c.Eta, 1) {
			return fmt.Errorf("dp: truncated negative binomial η must be finite and > −1, got %g", c.Eta)
		}
		if !(c.Gamma > 0 && c.Gamma < 1) {
			return fmt.Errorf("dp: truncated negative binomial γ must be in (0, 1), got %g", c.Gamma)
		}
	default:
		return fmt.Errorf("dp: unknown candidate distribution %q (want poisson or negbin)", c.Kind)
	}
	return nil
}

func (c Candidates) String() string {
	if c.Kind == "poisson" {
		return fmt.Sprintf("poisson:%g", c.Mu)
	}
	return fmt.Sprintf("negbin:%g,%g", c.Eta, c.Gamma)
}

// Mean returns E[K]: μ for Poisson; for the truncated negative binomial
// η(1−γ)/(γ(1−γ^η)), and (1−γ)/(γ ln(1/γ)) at η = 0.
func (c Candidates) Mean() float64 {
	if c.Kind == "poisson" {
		return c.Mu
	}
	g := c.Gamma
	if c.Eta == 0 {
		return (1 - g) / (g * math.Log(1/g))
	}
	// 1 − γ^η = −expm1(η ln γ), stable for small η.
	return c.Eta * (1 - g) / (g * -math.Expm1(c.Eta*math.Log(g)))
}

// pmf returns P[K = k] for k ≥ 0.
func (c Candidates) pmf(k int) float64 {
	if c.Kind == "poisson" {
		lg, _ := math.Lgamma(float64(k) + 1)
		return math.Exp(float64(k)*math.Log(c.Mu) - c.Mu - lg)
	}
	if k < 1 {
		return 0
	}
	g, eta, kf := c.Gamma, c.Eta, float64(k)
	if eta == 0 {
		// (1−γ)^k / (k ln(1/γ))
		return math.Exp(kf*math.Log1p(-g)) / (kf * math.Log(1/g))
	}
	// (1−γ)^k / (γ^{−η} − 1) · Π_{ℓ<k} (ℓ+η)/(ℓ+1)
	//   = (1−γ)^k / (γ^{−η} − 1) · Γ(k+η) / (Γ(η) k!)
	// computed by the product, whose sign and that of γ^{−η} − 1 agree.
	p := math.Exp(kf*math.Log1p(-g)) / math.Expm1(-eta*math.Log(g))
	for l := 0; l < k; l++ {
		p *= (float64(l) + eta) / (float64(l) + 1)
	}
	return p
}

// Draw draws K from src by inversion.
func (c Candidates) Draw(src *Source) int {
	u := src.Uniform()
	cum := 0.0
	limit := 1 << 20
	for k := 0; k < limit; k++ {
		p := c.pmf(k)
		cum += p
		if cum > u {
			return k
		}
		if p == 0 && k > 1 && float64(k) > c.Mean() {
			return k // the rest of the tail is below float64 resolution
		}
	}
	return limit
}

// TunedRDP returns the RDP, at each order in orders (each > 1), of running
// a base mechanism with RDP curve base K times, K ~ c, and releasing only
// the best run (Papernot & Steinke 2022):
//
// Truncated negative binomial (Theorem 2): for every λ > 1 and λ̂ ≥ 1,
//
//	ε'(λ) = ε(λ) + (1+η)(1 − 1/λ̂) ε(λ̂) + (1+η) ln(1/γ)/λ̂ + ln(E[K])/(λ−1),
//
// with λ̂ minimising the middle terms over orders.
//
// Poisson(μ) (Theorem 6): if the base is also (ε̂, δ̂)-DP with
// e^ε̂ ≤ 1 + 1/(λ−1), i.e. ε̂ = ln(1 + 1/(λ−1)), then
//
//	ε'(λ) = ε(λ) + μ δ̂ + ln(μ)/(λ−1),
//
// with δ̂ the smallest δ conv certifies from the base curve at ε̂ over orders.
//
// As Rényi divergence does not decrease with the order, each ε'(λ) is then
// replaced by the smallest ε'(λ') over the orders λ' ≥ λ.
func TunedRDP(base func(alpha float64) float64, c Candidates, orders []float64, conv Conversion) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !conv.valid() {
		return nil, fmt.Errorf("dp: unknown RDP conversion %d", int(conv))
	}
	curve := make([]float64, len(orders))
	for i, a := range orders {
		if !(a > 1) {
			return nil, fmt.Errorf("dp: RDP order must be > 1, got %g", a)
		}
		v := base(a)
		if math.IsNaN(v) || v < 0 {
			v = math.Inf(1)
		}
		curve[i] = v
	}
	out := make([]float64, len(orders))
	logMean := math.Log(c.Mean())
	switch c.Kind {
	case "negbin":
		best := math.Inf(1)
		for i, a := range orders {
			best = math.Min(best, (1-1/a)*curve[i]+math.Log(1/c.Gamma)/a)
		}
		for i, a := range orders {
			out[i] = curve[i] + (1+c.Eta)*best + logMean/(a-1)
		}
	case "poisson":
		for i, a := range orders {
			epsHat := math.Log1p(1 / (a - 1))
			ld := 0.0
			for j, b := range orders {
				ld = math.Min(ld, conv.logDelta(curve[j], b, epsHat))
			}
			out[i] = curve[i] + c.Mu*math.Exp(ld) + logMean/(a-1)
		}
	}
	for i := range out {
		for j := range out {
			if orders[j] >= orders[i] && out[j] < out[i] {
				out[i] = out[j]
			}
		}
	}
	return out, nil
}

// TunedEpsilon returns the ε at delta of the tuning TunedRDP describes, on
// the accountant's default orders, converted with conv, and the order that
// attains it.
func TunedEpsilon(base func(alpha float64) float64, c Candidates, delta float64, conv Conversion) (eps, order float64, err error) {
	if err := CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	orders := DefaultOrders()
	rdp, err := TunedRDP(base, c, orders, conv)
	if err != nil {
		return 0, 0, err
	}
	eps = math.Inf(1)
	for i, a := range orders {
		if e := conv.Epsilon(rdp[i], a, delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}

// CurveEpsilon returns the ε at delta of the RDP curve base on the
// accountant's default orders, converted with conv.
func CurveEpsilon(base func(alpha float64) float64, delta float64, conv Conversion) (float64, error) {
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	eps := math.Inf(1)
	for _, a := range DefaultOrders() {
		if e := conv.Epsilon(base(a), a, delta); e < eps {
			eps = e
		}
	}
	return eps, nil
}

// TuningScore is the score of one candidate in private hyperparameter
// tuning, released as part of that candidate's private output, as
// Papernot & Steinke's bound requires (their base algorithm outputs its
// result and its score; the tuner keeps the best by score, so a score that
// read private data outside the base algorithm's accounting is not covered
// by TunedRDP at all).
//
// A candidate is Runs runs; run r yields a count c_r (e.g. of correct
// validation predictions) of which the caller proves: given everything the
// run released, c_r changes by at most Sensitivity between neighbouring raw
// inputs. Each c_r is released as c_r + N(0, (Multiplier·Sensitivity)²)
// from the mechanism source, and the score is the sum of the Runs noisy
// counts (post-processing).
//
// Privacy: for every fixed release of the runs, each noisy count is a
// Gaussian mechanism of sensitivity Sensitivity and noise std
// Multiplier·Sensitivity, i.e. (α, α/(2·Multiplier²))-RDP for every α > 1
// (D_α(N(a, σ²) ‖ N(b, σ²)) = α(a−b)²/(2σ²) with |a−b| ≤ Sensitivity), in
// both directions of the neighbouring relation; the Runs counts compose
// adaptively to Runs·α/(2·Multiplier²) (RDP), which adds to the RDP curve of
// the runs (adaptive composition: the bound holds for every value of what
// the runs released). The candidate's curve is therefore
// run(α) + RDP(α), and that sum is the base curve TunedRDP needs.
//
// Sensitivity 0 means the caller proves the count is a function of the
// runs' releases and public data only (post-processing): it is released
// exactly and costs nothing (RDP 0); Multiplier is then ignored.
type TuningScore struct {
	// Sensitivity Δ ≥ 0 is the largest change of one run's count between
	// neighbouring raw inputs given the run's releases, in count units.
	Sensitivity float64
	// Multiplier z > 0 (when Sensitivity > 0) is the noise std of each
	// run's count over Sensitivity (dimensionless).
	Multiplier float64
	// Runs ≥ 1 is the number of runs, i.e. of noisy counts summed.
	Runs int
}

// Validate checks the parameters.
func (s TuningScore) Validate() error {
	if err := CheckNonNegativeFinite("tuning score sensitivity", s.Sensitivity); err != nil {
		return err
	}
	if err := CheckCount("tuning score runs", s.Runs); err != nil {
		return err
	}
	if s.Sensitivity > 0 {
		return CheckMultiplier(s.Multiplier)
	}
	return nil
}

// Exact reports whether the score is released without noise
// (Sensitivity 0: post-processing of the runs' releases).
func (s TuningScore) Exact() bool { return s.Sensitivity == 0 }

// Std is the noise std added to each run's count, in count units:
// Multiplier·Sensitivity (0 when Exact).
func (s TuningScore) Std() float64 {
	if s.Exact() {
		return 0
	}
	return s.Multiplier * s.Sensitivity
}

// Event is the accounting event of one candidate's score: Runs Gaussian
// releases at Multiplier. ok is false when the score is Exact (no release
// beyond the runs').
func (s TuningScore) Event() (e GaussianEvent, ok bool) {
	if s.Exact() {
		return GaussianEvent{}, false
	}
	return GaussianEvent{Multiplier: s.Multiplier, Count: s.Runs}, true
}

// RDP is the score's RDP at order alpha > 1: Runs·α/(2·Multiplier²), 0
// when Exact.
func (s TuningScore) RDP(alpha float64) float64 {
	if s.Exact() {
		return 0
	}
	return float64(s.Runs) * GaussianRDP(alpha, s.Multiplier)
}

// Epsilon is the ε at delta of the score alone (Runs Gaussian releases,
// converted from RDP with conv on the accountant's default orders); 0 when
// Exact.
func (s TuningScore) Epsilon(delta float64, conv Conversion) (float64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if s.Exact() {
		return 0, CheckDelta(delta)
	}
	return CurveEpsilon(s.RDP, delta, conv)
}

// Release returns the score of one candidate from its runs' counts (one
// per run, len(counts) == Runs): Σ_r (c_r + Std()·N(0, 1)), the noise drawn
// from src (the mechanism source); the exact sum when Exact.
func (s TuningScore) Release(counts []float64, src *Source) (float64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if len(counts) != s.Runs {
		return 0, fmt.Errorf("dp: tuning score of %d runs given %d counts", s.Runs, len(counts))
	}
	if !s.Exact() && src == nil {
		return 0, errNilSource
	}
	total, std := 0.0, s.Std()
	for _, c := range counts {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return 0, fmt.Errorf("dp: tuning score count %g is not finite", c)
		}
		total += c
		if std > 0 {
			total += std * src.Normal()
		}
	}
	return total, nil
}

// pgfDeriv returns G'(x) = E[K x^{K−1}], the derivative of the probability
// generating function of K, for x ∈ [0, 1]: μ·e^{−μ(1−x)} for Poisson; for
// the truncated negative binomial, whose pgf is
// ((1−(1−γ)x)^{−η} − 1)/(γ^{−η} − 1), η(1−γ)(1−(1−γ)x)^{−η−1}/(γ^{−η} − 1)
// (η ≠ 0), and (1−γ)/((1−(1−γ)x)·ln(1/γ)) at η = 0. G'(1) = E[K].
func (c Candidates) pgfDeriv(x float64) float64 {
	if c.Kind == "poisson" {
		return c.Mu * math.Exp(-c.Mu*(1-x))
	}
	g, eta := c.Gamma, c.Eta
	y := 1 - (1-g)*x // in [γ, 1]
	if eta == 0 {
		return (1 - g) / (y * math.Log(1/g))
	}
	// γ^{−η} − 1 = expm1(−η ln γ): same sign as η, so the ratio is positive.
	return eta * (1 - g) * math.Exp((-eta-1)*math.Log(y)) / math.Expm1(-eta*math.Log(g))
}

// SelectionLowerBound returns a lower bound on the ε at delta of private
// tuning with K ~ c candidates drawn uniformly from a grid of gridSize
// points and a score s, whatever the runs release: the exact ε of the
// tuner's output (the selected grid point and its score, or nothing when
// K = 0) on the worst of a few instances in which the runs release the
// same thing on both neighbours and the score alone differs. In instance
// j, the j grid points of one set are right on the removed unit and the
// others wrong on it and tied elsewhere: each of their runs' counts is
// higher by Sensitivity on one side (the total by Runs·Sensitivity, with
// noise std √Runs·Std()), for j in {1, ⌈gridSize/2⌉, gridSize}. j = 1 with
// an exact score is the audit's counterexample: with K ~ Poisson(μ) the
// selected point alone leaks ln((1 − e^{−μ/m})·m/(1 − e^{−μ})), about
// ln(0.632·m) at μ = m, however small each candidate's own ε.
//
// Any mechanism whose candidates satisfy the base curve TunedRDP is given
// (the runs' curve plus s.RDP) includes these instances, so its tuned ε
// can never be below this bound; `dpgnn tune` checks that it is not. The
// output densities are, with F the CDF of one candidate's score and G' the
// derivative of K's probability generating function, (1/m)·φ_i(x)·G'(F(x))
// for grid point i and score x; they are integrated on a grid of spacing
// σ/64 over ±12σ around each mean (trapezoid rule), and ε is found by
// bisection on the hockey-stick divergence in both directions (the lower
// end of the final bracket). An Exact score (Sensitivity 0) does not
// differ between neighbours given the runs' releases: the bound is 0.
func SelectionLowerBound(c Candidates, gridSize int, s TuningScore, delta float64) (float64, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if gridSize < 1 {
		return 0, fmt.Errorf("dp: grid size must be at least 1, got %d", gridSize)
	}
	if s.Exact() {
		return 0, nil
	}
	shift := float64(s.Runs) * s.Sensitivity
	sigma := math.Sqrt(float64(s.Runs)) * s.Std()
	best := 0.0
	for _, j := range distinctInts(1, (gridSize+1)/2, gridSize) {
		e := selectionInstanceEpsilon(c, gridSize, j, shift, sigma, delta)
		best = math.Max(best, e)
	}
	return best, nil
}

// distinctInts returns xs without repeats, in order.
func distinctInts(xs ...int) []int {
	var out []int
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// selectionInstanceEpsilon is the exact ε at delta (up to quadrature) of
// the instance of SelectionLowerBound with j of m grid points shifted by
// shift, score noise std sigma.
func selectionInstanceEpsilon(c Candidates, m, j int, shift, sigma, delta float64) float64 {
	// Quadrature points: ±12σ around 0 and around shift, merged when they
	// overlap; between them both densities are below e^{−72}.
	type window struct{ lo, hi float64 }
	ws := []window{{-12 * sigma, 12 * sigma}, {shift - 12*sigma, shift + 12*sigma}}
	if ws[1].lo <= ws[0].hi {
		ws = []window{{ws[0].lo, ws[1].hi}}
	}
	type point struct{ w, a1, a0, b float64 } // weight; integrands' pieces
	var pts []point
	fm, fj := float64(m), float64(j)
	for _, w := range ws {
		n := int(math.Ceil((w.hi - w.lo) / (sigma / 64)))
		h := (w.hi - w.lo) / float64(n)
		for k := 0; k <= n; k++ {
			x := w.lo + float64(k)*h
			wt := h
			if k == 0 || k == n {
				wt = h / 2
			}
			z0, z1 := x/sigma, (x-shift)/sigma
			phi0 := math.Exp(-z0*z0/2) / (sigma * math.Sqrt(2*math.Pi))
			phi1 := math.Exp(-z1*z1/2) / (sigma * math.Sqrt(2*math.Pi))
			cdf0, cdf1 := 0.5*math.Erfc(-z0/math.Sqrt2), 0.5*math.Erfc(-z1/math.Sqrt2)
			aG := c.pgfDeriv(fj/fm*cdf1 + (fm-fj)/fm*cdf0) // side with the shift
			aP := c.pgfDeriv(cdf0)                         // side without
			// (shifted point on G, on G'), (other point on G, on G')
			pts = append(pts, point{wt, phi1 * aG, phi0 * aP, phi0 * aG})
		}
	}
	div := func(eps float64) float64 {
		e := math.Exp(eps)
		var fwd, bwd float64
		for _, p := range pts {
			fwd += p.w * (fj*math.Max(0, p.a1-e*p.a0) + (fm-fj)*math.Max(0, p.b-e*p.a0))
			bwd += p.w * (fj*math.Max(0, p.a0-e*p.a1) + (fm-fj)*math.Max(0, p.a0-e*p.b))
		}
		return math.Max(fwd, bwd) / fm
	}
	if div(0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for div(hi) > delta {
		lo, hi = hi, 2*hi
		if hi > 512 {
			return lo
		}
	}
	for range 60 {
		mid := (lo + hi) / 2
		if div(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
