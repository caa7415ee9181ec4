package dp

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Event is an immutable description of what a mechanism released, for the
// accountants and the privacy ledger. Events compose as Google's
// dp_accounting composes its DpEvents: base mechanisms (GaussianEvent,
// GDPEvent, PureEvent — Laplace and the exponential/Gumbel mechanisms
// through their ε —, RDPEvent for a stated curve) and wrappers that say how
// a base mechanism was run (Poisson, SampledWithoutReplacement,
// Occurrences, Composed, and ComposedEvent for a sequence). An accountant
// computes from the structure and refuses, with an UnsupportedEventError,
// every structure it has no rule for: nothing is ever composed as zero.
//
// The interface is open: a mechanism defined outside dp is an Event when it
// has String (its ledger line, which must identify its parameters: two
// events with the same String must have the same privacy curve, since a
// ledger adds them up by it) and Validate. It is then accounted by the
// optional interfaces it implements (RDPer for the RDP accountants, GDPer
// for all of them) and refused by the others.
//
// One multiplier convention holds everywhere: a Gaussian's multiplier z is
// the noise standard deviation divided by the L2 sensitivity of the whole
// released sum under the plan's neighbouring relation (see Occurrences for
// a unit that changes several examples).
type Event interface {
	fmt.Stringer
	// Validate checks the event's own parameters (and those of the events
	// it wraps), not whether an accountant supports it.
	Validate() error
}

// GaussianEvent is Count-fold (adaptive) composition of the Gaussian
// mechanism with noise multiplier Multiplier, i.e. noise std Multiplier×Δ on
// a query of L2 sensitivity Δ (the sensitivity is normalised to 1 here).
// It is (α, α·Count/(2·Multiplier²))-RDP and (sqrt(Count)/Multiplier)-GDP.
type GaussianEvent struct {
	Multiplier float64 // z > 0
	Count      int     // ≥ 1
}

func (e GaussianEvent) Validate() error {
	if err := CheckMultiplier(e.Multiplier); err != nil {
		return fmt.Errorf("%w (in %s)", err, e)
	}
	return CheckCount("Gaussian event count", e.Count)
}

func (e GaussianEvent) String() string {
	return fmt.Sprintf("Gaussian(multiplier=%g, count=%d)", e.Multiplier, e.Count)
}

// PoissonGaussianEvent is Steps-fold composition of the Poisson-subsampled
// Gaussian mechanism (DP-SGD): each step includes every record
// independently with probability Rate, sums their (clipped, sensitivity-1)
// contributions and adds N(0, Multiplier²) noise. Neighbouring datasets
// differ by adding or removing one record. Accounted by the sampled Gaussian
// RDP of Mironov, Talwar & Zhang (2019).
//
// It is the shorthand of Composed{Steps, Poisson{Rate, GaussianEvent{
// Multiplier, 1}}} (kept because DP-SGD is the common case and the spec
// vectors state it so): every accountant gives the two the same ε, and a
// plan's ledger adds one to the other.
type PoissonGaussianEvent struct {
	Rate       float64 // sampling probability q ∈ (0, 1]
	Multiplier float64 // z > 0 (noise std / clipping norm)
	Steps      int     // ≥ 1
}

func (e PoissonGaussianEvent) Validate() error {
	if err := CheckRate(e.Rate); err != nil {
		return fmt.Errorf("%w (in %s)", err, e)
	}
	if err := CheckMultiplier(e.Multiplier); err != nil {
		return fmt.Errorf("%w (in %s)", err, e)
	}
	return CheckCount("Poisson-Gaussian steps", e.Steps)
}

func (e PoissonGaussianEvent) String() string {
	return fmt.Sprintf("PoissonGaussian(rate=%g, multiplier=%g, steps=%d)", e.Rate, e.Multiplier, e.Steps)
}

// GDPEvent is a μ-GDP release (Dong, Roth & Su 2019): the trade-off function
// is at least that of N(0,1) vs N(μ,1). It is (α, α μ²/2)-RDP for all α > 1.
type GDPEvent struct {
	Mu float64 // μ > 0
}

func (e GDPEvent) Validate() error {
	if err := CheckPositiveFinite("GDP mu", e.Mu); err != nil {
		return fmt.Errorf("%w (in %s)", err, e)
	}
	return nil
}

func (e GDPEvent) String() string { return fmt.Sprintf("GDP(mu=%g)", e.Mu) }

// RDPEvent is a release with a general Rényi-DP curve: it is
// (α, Curve(α))-RDP for every order α > 1, in nats. Use it for bounds the
// other events do not cover (CARIBOU's convergent bound, ASGL's
// hypergeometric subsampling bound).
//
// Curve must be valid (an upper bound on the Rényi divergence of order α,
// for every pair of neighbouring inputs) for every order α > 1 it is asked
// about, not only integers, and must return +Inf where it has no bound. A
// NaN or negative value is rejected at Compose; later, during order
// refinement, such values are treated as +Inf. Curve must be a pure
// function: the accountant may call it again at any time.
//
// Count > 1 is the Count-fold composition of the curve (Count·Curve(α));
// 0 means 1. Name identifies the curve: events with the same Name must
// have the same Curve (the accountant merges them, and a plan's ledger
// adds their counts), so a mechanism can record one step at a time.
type RDPEvent struct {
	Name  string                      // ledger label, non-empty
	Curve func(alpha float64) float64 // ε_RDP(α) ≥ 0, or +Inf
	Count int                         // ≥ 0: composed Count times (0 means once)
}

func (e RDPEvent) count() int { return max(1, e.Count) }

func (e RDPEvent) Validate() error {
	if e.Name == "" {
		return errors.New("dp: RDP event needs a name for the ledger")
	}
	if e.Curve == nil {
		return fmt.Errorf("dp: RDP event %q has no curve", e.Name)
	}
	if e.Count < 0 {
		return fmt.Errorf("dp: RDP event %q has count %d, want ≥ 0", e.Name, e.Count)
	}
	return nil
}

func (e RDPEvent) String() string {
	if e.Count > 1 {
		return fmt.Sprintf("RDP(%s, count=%d)", e.Name, e.Count)
	}
	return fmt.Sprintf("RDP(%s)", e.Name)
}

// PureEvent is Count-fold composition of an ε-DP mechanism (Laplace,
// exponential mechanism, Gumbel top-K, ...). Run on a Poisson subsample it
// is Poisson{q, PureEvent{ε, 1}} (amplified to ln(1 + q(e^ε − 1)), add/remove
// neighbours), Count of those Composed{Count, Poisson{q, PureEvent{ε, 1}}}.
type PureEvent struct {
	Epsilon float64 // ε > 0 of one run
	Count   int     // ≥ 1
}

func (e PureEvent) Validate() error {
	if err := CheckPositiveFinite("pure-DP epsilon", e.Epsilon); err != nil {
		return fmt.Errorf("%w (in %s)", err, e)
	}
	return CheckCount("pure-DP event count", e.Count)
}

func (e PureEvent) String() string {
	return fmt.Sprintf("Pure(epsilon=%g, count=%d)", e.Epsilon, e.Count)
}

// ComposedEvent is the adaptive composition of its events, in order.
type ComposedEvent struct {
	Events []Event
}

func (e ComposedEvent) Validate() error {
	if len(e.Events) == 0 {
		return errors.New("dp: composed event is empty")
	}
	for i, c := range e.Events {
		if c == nil {
			return fmt.Errorf("dp: composed event: event %d is nil", i)
		}
		if err := c.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (e ComposedEvent) String() string {
	parts := make([]string, len(e.Events))
	for i, c := range e.Events {
		if c == nil {
			parts[i] = "<nil>"
			continue
		}
		parts[i] = c.String()
	}
	return "Composed[" + strings.Join(parts, ", ") + "]"
}

// AmplifiedEpsilon returns the ε of an ε-DP mechanism run on a Poisson
// subsample with rate q (add/remove neighbours): ln(1 + q·(e^ε − 1)), the
// standard amplification-by-subsampling bound (Balle, Barthe & Gaboardi 2018).
// It is ≥ q·ε (so the linear q'·ε of DPAR's Theorem 2 understates the loss).
func AmplifiedEpsilon(eps, q float64) (float64, error) {
	if err := CheckPositiveFinite("epsilon", eps); err != nil {
		return 0, err
	}
	if err := CheckRate(q); err != nil {
		return 0, err
	}
	return amplify(eps, q), nil
}

// amplify computes ln(1−q + q·e^ε) stably (no overflow for large ε).
func amplify(eps, q float64) float64 {
	if q == 1 {
		return eps
	}
	if eps < 1 {
		return math.Log1p(q * math.Expm1(eps))
	}
	return logAdd(math.Log1p(-q), math.Log(q)+eps)
}

// InnerEpsilon inverts AmplifiedEpsilon: the largest per-run ε whose
// amplification with rate q is at most amplified: ln(1 + (e^amplified − 1)/q).
func InnerEpsilon(amplified, q float64) (float64, error) {
	if err := CheckPositiveFinite("amplified epsilon", amplified); err != nil {
		return 0, err
	}
	if err := CheckRate(q); err != nil {
		return 0, err
	}
	if amplified < 1 {
		return math.Log1p(math.Expm1(amplified) / q), nil
	}
	// ln(1 + (e^a − 1)/q) = a − ln q + ln(1 − (1−q)e^{−a}).
	return amplified - math.Log(q) + math.Log1p(-(1-q)*math.Exp(-amplified)), nil
}
