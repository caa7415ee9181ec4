package dp

import (
	"errors"
	"fmt"
	"math"
)

// GDPDelta returns the exact δ(ε) of a μ-GDP mechanism (Dong, Roth & Su
// 2019, Cor. 2.13; equivalently the analytic Gaussian mechanism of Balle &
// Wang 2018 with σ = 1/μ):
//
//	δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)
//
// For small μ the two terms nearly cancel (δ is about a fraction μ/s of
// either, s = ε/μ: at μ = 1e-3 rounding left δ wrong by 2.5e-11 relative),
// so for μ ≤ 4 it is computed in a cancellation-free form (see
// logGDPDeltaSeries), accurate to a few ulps. For larger μ it is computed in
// log space (the e^ε term as ε + ln Φ(·)) with a tail-stable ln Φ, so it
// stays accurate for large ε and tiny δ; where rounding leaves the
// difference of the two terms unresolved (very large μ or ε), it returns the
// first term, an upper bound. It returns NaN for μ < 0, ε < 0 or NaN input;
// μ = 0 or ε = +Inf gives 0.
func GDPDelta(mu, epsilon float64) float64 {
	if math.IsNaN(mu) || math.IsNaN(epsilon) || mu < 0 || epsilon < 0 {
		return math.NaN()
	}
	return math.Exp(logGDPDelta(mu, epsilon))
}

// logGDPDelta returns ln δ(ε; μ) (−Inf when δ underflows or μ = 0).
func logGDPDelta(mu, eps float64) float64 {
	if mu == 0 {
		return math.Inf(-1)
	}
	if math.IsInf(mu, 1) {
		return 0
	}
	if math.IsInf(eps, 1) {
		return math.Inf(-1) // δ(∞) = 0
	}
	if mu <= gdpSeriesMu {
		return logGDPDeltaSeries(mu, eps)
	}
	a := -eps/mu + mu/2
	b := -eps/mu - mu/2
	la := logNormCDF(a)
	lnb := logNormCDF(b)
	lb := eps + lnb
	// lb is the sum of eps and ln Φ(b), which nearly cancel for large μ (or
	// large ε), so it carries an absolute rounding error of a few ulps of
	// their magnitudes. When la − lb is not clearly above that error, the
	// difference e^la − e^lb is noise (it can even round to exactly 0, i.e.
	// δ = 0): report the first term Φ(a), an upper bound on δ.
	if la-lb <= 0x1p-48*(eps+math.Abs(lnb)+math.Abs(la)) {
		return la
	}
	d, ok := logSub(la, lb)
	if !ok {
		return la // unreachable after the check above; kept conservative
	}
	return d
}

// gdpSeriesMu is the largest μ for which logGDPDelta uses the series.
const gdpSeriesMu = 4

// logGDPDeltaSeries returns ln δ(ε; μ) for 0 < μ ≤ gdpSeriesMu without the
// cancellation of Φ(−s + h) − e^ε Φ(−s − h), s = ε/μ, h = μ/2. With the
// Mills ratio M(x) = Φ(−x)/φ(x) and φ(s−h) = e^ε φ(s+h),
//
//	δ = φ(s−h)·(M(s−h) − M(s+h)) = Φ(−s)·e^{sh − h²/2}·Σ_{k odd} (2h^k/k!)·J_k(s)/J_0(s)
//
// by Taylor's theorem (M is entire and M^{(k)} = (−1)^k J_k), where
// J_k(s) = ∫_0^∞ t^k e^{−st − t²/2} dt > 0 and J_0 = M. Every term is
// positive, so nothing cancels. The ratios r_k = J_k/J_{k−1} follow from
// J_{k+1} = k·J_{k−1} − s·J_k: for s ≥ 1 by the (stable) backward form
// r_k = k/(s + r_{k+1}), a continued fraction started deep enough to have
// converged to rounding; for s < 1 by the forward recurrence from J_0 = M(s)
// and J_1 = 1 − s·M(s), which loses about a factor e^{2s√k + s²/2} on
// the k-th ratio — harmless, as that term's weight h^k/k! is then tiny.
func logGDPDeltaSeries(mu, eps float64) float64 {
	const kMax = 81 // h ≤ 2: the terms are below 1e-17 of the sum by then
	s, h := eps/mu, mu/2
	var rho [kMax + 1]float64 // rho[k] = J_k/J_0
	rho[0] = 1
	var m float64 // M(s), for s < 1
	if s < 1 {
		m = 0.5 * math.Erfc(s/math.Sqrt2) * math.Sqrt(2*math.Pi) * math.Exp(s*s/2)
	}
	// Sum with K ratios; if the last term is not negligible, double K.
	for k := 7; ; k = min(2*k+1, kMax) {
		if s >= 1 {
			// Tail of the continued fraction: its error contracts by about
			// (1 − s/√i) per level i, so (√k + 20/s)² levels reach rounding.
			n := int(math.Ceil(math.Pow(math.Sqrt(float64(k))+20/s, 2)))
			r := 0.0
			for i := n; i > k; i-- {
				r = float64(i) / (s + r)
			}
			var ratio [kMax + 1]float64
			for i := k; i >= 1; i-- {
				r = float64(i) / (s + r)
				ratio[i] = r
			}
			for i := 1; i <= k; i++ {
				rho[i] = rho[i-1] * ratio[i]
			}
		} else {
			jPrev, j := m, 1-s*m // J_0, J_1
			rho[1] = j / m
			for i := 1; i < k; i++ {
				jPrev, j = j, float64(i)*jPrev-s*j
				rho[i+1] = j / m
			}
		}
		var sum, last float64
		coef := 2 * h // 2h^i/i!
		for i := 1; i <= k; i += 2 {
			last = coef * rho[i]
			sum += last
			coef *= h * h / float64((i+1)*(i+2))
		}
		if last <= 1e-17*sum || k == kMax {
			return logNormCDF(-s) + eps/2 - h*h/2 + math.Log(sum)
		}
	}
}

// GDPEpsilon returns the smallest ε ≥ 0 with δ(ε; μ) ≤ delta for a μ-GDP
// mechanism, by bisection on the decreasing function δ(·; μ) to a relative
// tolerance of 1e-14. It returns the upper end of the final bracket, so the
// result is never below the true root beyond the accuracy of δ (a few ulps:
// the true δ at the returned ε exceeds delta by less than 1e-13 relative
// for μ ∈ [1e-4, 1e2], δ ∈ [1e-12, 1e-2]; the cancellation-free form for
// μ ≤ 4 is what makes this hold for small μ). μ = 0 gives 0.
func GDPEpsilon(mu, delta float64) (float64, error) {
	if math.IsNaN(mu) || mu < 0 {
		return 0, fmt.Errorf("dp: GDP mu must be non-negative, got %g", mu)
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if math.IsInf(mu, 1) {
		return math.Inf(1), nil
	}
	logDelta := math.Log(delta)
	if mu == 0 || logGDPDelta(mu, 0) <= logDelta {
		return 0, nil
	}
	// The RDP route μ²/2 + μ·sqrt(2 ln(1/δ)) is a valid ε, so it brackets
	// the root from above; double it if rounding says otherwise.
	hi := mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta))
	hi = min(max(hi, math.SmallestNonzeroFloat64), math.MaxFloat64)
	eps, err := bisect(func(eps float64) (bool, error) { return logGDPDelta(mu, eps) <= logDelta, nil },
		0, hi, safeAbove, bisectOpts{relTol: 1e-14, maxHi: math.MaxFloat64})
	if errors.Is(err, errNoSafeValue) {
		return math.Inf(1), nil
	}
	return eps, err
}

// GDP is the exact Gaussian accountant: it composes Gaussian mechanisms and
// μ-GDP releases exactly in the Gaussian-DP framework (Dong, Roth & Su 2019):
// μ_total = sqrt(Σ μ_i²), with μ = sqrt(Count)/Multiplier for a
// GaussianEvent, and converts with the exact δ(ε; μ) (GDPDelta). This is
// autodp's ExactGaussianMechanism + ComposeGaussian, the accountant behind
// GAP's, ProGAP's and CARIBOU's reported numbers, and it is tighter than any
// RDP conversion.
//
// It supports GaussianEvent, GDPEvent and ComposedEvents of those only: a
// subsampled Gaussian is not exactly GDP (the central-limit approximation is
// not an upper bound), and pure ε-DP is not μ-GDP for any finite μ. Not safe
// for concurrent use.
type GDP struct {
	muSq   float64
	ledger []Event
}

// NewGDP returns an empty exact Gaussian accountant.
func NewGDP() *GDP { return &GDP{} }

// Name returns "gdp".
func (a *GDP) Name() string { return "gdp" }

// Supports reports whether Compose can account for e: Gaussian and GDP
// events, Composed and ComposedEvent of them; nothing else.
func (a *GDP) Supports(e Event) bool {
	if e == nil {
		return false
	}
	_, err := gdpMuSq(e, 1, a.Name())
	return err == nil
}

// Compose adds e to the ledger. A rejected event (invalid or unsupported)
// leaves the accountant unchanged.
func (a *GDP) Compose(e Event) error {
	if e == nil {
		return fmt.Errorf("dp: nil event")
	}
	if err := e.Validate(); err != nil {
		return err
	}
	m, err := gdpMuSq(e, 1, a.Name())
	if err != nil {
		return err
	}
	a.muSq += m
	a.ledger = append(a.ledger, e)
	return nil
}

// Mu returns the μ of everything composed so far.
func (a *GDP) Mu() float64 { return math.Sqrt(a.muSq) }

// Epsilon returns the exact ε for delta (0 when nothing was composed).
func (a *GDP) Epsilon(delta float64) (float64, error) {
	return GDPEpsilon(a.Mu(), delta)
}

// Delta returns the exact δ for epsilon ≥ 0.
func (a *GDP) Delta(epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, fmt.Errorf("dp: epsilon must be non-negative, got %g", epsilon)
	}
	return GDPDelta(a.Mu(), epsilon), nil
}

// Ledger returns a copy of the composed events, in order.
func (a *GDP) Ledger() []Event { return append([]Event(nil), a.ledger...) }

// gdpMuSq returns the μ² of a (validated) event composed n times. At n = 1
// each rule's arithmetic is that of the event alone.
func gdpMuSq(e Event, n int, name string) (float64, error) {
	switch e := e.(type) {
	case GaussianEvent:
		m, err := mulCount(n, e.Count)
		if err != nil {
			return 0, err
		}
		return float64(m) / (e.Multiplier * e.Multiplier), nil
	case GDPEvent:
		return float64(n) * (e.Mu * e.Mu), nil
	case Composed:
		if e.Event == nil {
			return 0, errNilEvent
		}
		m, err := mulCount(n, e.Count)
		if err != nil {
			return 0, err
		}
		return gdpMuSq(e.Event, m, name)
	case ComposedEvent:
		var s float64
		for _, c := range e.Events {
			if c == nil {
				return 0, fmt.Errorf("dp: nil event in %s", e)
			}
			m, err := gdpMuSq(c, n, name)
			if err != nil {
				return 0, err
			}
			s += m
		}
		return s, nil
	case PoissonGaussianEvent, Poisson, SampledWithoutReplacement, Occurrences:
		return 0, &UnsupportedEventError{Accountant: name, Event: e,
			Hint: "a subsampled Gaussian is not exactly GDP; use the RDP accountant"}
	case nil:
		return 0, errNilEvent
	case GDPer:
		mu, err := gdperMu(e)
		if err != nil {
			return 0, err
		}
		return float64(n) * (mu * mu), nil
	default:
		return 0, &UnsupportedEventError{Accountant: name, Event: e,
			Hint: "only Gaussian, GDP, events that implement dp.GDPer and compositions of them are exact in GDP; use the RDP accountant"}
	}
}
