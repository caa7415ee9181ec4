package dp

import (
	"fmt"
	"math"
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
		if err := r.Event.validate(); err != nil {
			return nil, err
		}
		t.add(r.Event)
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
