package dp

import (
	"fmt"
	"math"
)

// PoissonGroupGaussian is DP-SGD where one privacy unit can change several
// training examples: each step includes every example independently with
// probability Rate (Poisson sampling), sums their gradients clipped to
// norm C, and adds Gaussian noise of standard deviation
// Multiplier·Occurrences·C to every coordinate. Neighbouring inputs differ
// in at most Occurrences examples (the unit's own, added or removed, and
// the others it enters), and each differing example moves the clipped sum
// by at most Change·C (2 when an example is modified: its clipped gradient
// can turn around; 1 when it is only added or removed).
//
// Proof of the per-step bound. Couple the two inputs' batches on the
// sampling decisions: the examples that do not differ are sampled alike and
// contribute the same vectors, and a removed example is sampled with
// probability Rate on one side and contributes nothing on the other, as if
// present with a zero gradient (Poisson sampling treats every example
// independently, so the coupling holds without a common population). Given
// that i differing examples are in the batch, the two outputs are Gaussians
// of the same covariance whose means differ by at most Change·i·C, so their
// Rényi divergence of order α is at most α·Change²·i²/(2σ²R²) (σ =
// Multiplier, R = Occurrences). i is Binomial(R, Rate) on both sides, and
// exp((α−1)·D_α) is jointly convex (Feldman, Mironov, Talwar & Thakurta
// 2018, Lemma 25), so
//
//	γ(α) = 1/(α−1) · ln Σ_i Binom(R, q)(i) · exp(α(α−1)·Change²·i²/(2σ²R²)).
//
// This is ASGL's hypergeometric bound (HypergeomGaussian) with binomial
// weights; with R = 1 and Change = 1 it is the joint-convexity bound of the
// Poisson-subsampled Gaussian, which is valid but looser than the sampled
// Gaussian RDP of Mironov, Talwar & Zhang (PoissonGaussianEvent), because
// that tighter analysis assumes a single added or removed example.
// DPAR's DP-SGD stage uses it: one node enters its own example and the
// examples of the rows of Π that reference it.
type PoissonGroupGaussian struct {
	Rate        float64 // q ∈ (0, 1]: per-example Poisson sampling probability
	Occurrences int     // R ≥ 1: most examples that differ between neighbours
	Multiplier  float64 // σ > 0: noise std over R·C
	Change      float64 // > 0: most one differing example moves the clipped sum, in units of C
	Steps       int     // ≥ 1: composed steps
}

// Validate checks the parameters.
func (p PoissonGroupGaussian) Validate() error {
	if err := CheckRate(p.Rate); err != nil {
		return fmt.Errorf("%w (Poisson group Gaussian)", err)
	}
	if p.Occurrences < 1 || p.Occurrences+1 > MaxHypergeomTerms {
		return fmt.Errorf("dp: Poisson group Gaussian: occurrence bound R = %d, want 1 … %d", p.Occurrences, MaxHypergeomTerms-1)
	}
	if err := CheckMultiplier(p.Multiplier); err != nil {
		return fmt.Errorf("%w (Poisson group Gaussian σ)", err)
	}
	if err := CheckPositiveFinite("Poisson group Gaussian change per example", p.Change); err != nil {
		return err
	}
	return CheckCount("Poisson group Gaussian steps", p.Steps)
}

// NoiseStd returns the standard deviation of the noise on each coordinate of
// the clipped gradient sum: Multiplier·Occurrences·clip.
func (p PoissonGroupGaussian) NoiseStd(clip float64) float64 {
	return p.Multiplier * float64(p.Occurrences) * clip
}

// String names the mechanism per step (the ledger key: Steps is the
// event's count, so one-step records add up to the plan's event).
func (p PoissonGroupGaussian) String() string {
	return fmt.Sprintf("PoissonGroupGaussian(rate=%g, R=%d, multiplier=%g, change=%g)", p.Rate, p.Occurrences, p.Multiplier, p.Change)
}

func (p PoissonGroupGaussian) curve() (*hgCurve, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := float64(p.Occurrences)
	return &hgCurve{lb: binomialLogPMF(p.Occurrences, p.Rate), lo: 0,
		scale: p.Change * p.Change / (2 * p.Multiplier * p.Multiplier * r * r)}, nil
}

// binomialLogPMF returns ln Binom(n, q)(i), i = 0 … n (−Inf where q = 1 and
// i < n).
func binomialLogPMF(n int, q float64) []float64 {
	out := make([]float64, n+1)
	lq, lp := math.Log(q), math.Log1p(-q)
	for i := range out {
		a, b := float64(i)*lq, float64(n-i)*lp
		if i == 0 {
			a = 0
		}
		if i == n {
			b = 0
		}
		out[i] = logBinom(n, i) + a + b
	}
	return out
}

// StepRDP returns γ(α) of one step for alpha > 1 (+Inf where it overflows).
func (p PoissonGroupGaussian) StepRDP(alpha float64) (float64, error) {
	if math.IsNaN(alpha) || alpha <= 1 {
		return 0, fmt.Errorf("dp: RDP order must be > 1, got %g", alpha)
	}
	c, err := p.curve()
	if err != nil {
		return 0, err
	}
	return c.gamma(alpha), nil
}

// Event returns the Steps steps as one RDPEvent (per-step curve γ, Count
// Steps); Step is the one-step event a mechanism records per noisy step.
func (p PoissonGroupGaussian) Event() (RDPEvent, error) {
	c, err := p.curve()
	if err != nil {
		return RDPEvent{}, err
	}
	return RDPEvent{Name: p.String(), Count: p.Steps, Curve: func(alpha float64) float64 {
		g := c.gamma(alpha)
		if math.IsNaN(g) {
			return math.Inf(1)
		}
		return g
	}}, nil
}

// Step returns the event of one step (Event with Count 1).
func (p PoissonGroupGaussian) Step() (RDPEvent, error) {
	e, err := p.Event()
	e.Count = 1
	return e, err
}
