package dp

import (
	"errors"
	"fmt"
	"math"
)

// Poisson is Event run on a Poisson subsample: every record (example) is
// included independently with probability Rate, the draw from the mechanism
// source, and Event is released on the sample. Neighbours differ by adding
// or removing one record (wrap it in Occurrences when one unit changes
// several). The accountants have rules for
//
//	Poisson{q, GaussianEvent{z, 1}}   the sampled Gaussian (rdp, pld; the same
//	                                  as PoissonGaussianEvent{q, z, 1})
//	Poisson{q, PureEvent{ε, c}}       the cε-DP run amplified to
//	                                  ln(1 + q(e^{cε} − 1)) (rdp, pld)
//
// and refuse any other inner event.
type Poisson struct {
	Rate  float64 // q ∈ (0, 1]
	Event Event   // what is released on the sample
}

// Validate checks the rate and the inner event.
func (p Poisson) Validate() error {
	if err := CheckRate(p.Rate); err != nil {
		return fmt.Errorf("%w (in %s)", err, p)
	}
	return validateInner(p.Event, p)
}

func (p Poisson) String() string {
	return fmt.Sprintf("Poisson(rate=%g, %s)", p.Rate, innerString(p.Event))
}

// SampledWithoutReplacement is Event run on a batch of exactly Batch
// records drawn uniformly without replacement from a Population that is the
// same on both neighbours (FixedSample): a record indexed by a public id
// (dpgnn's node ids, see Relation) whose unit is removed keeps its index
// and contributes nothing. The accountants have a rule for it only inside
// Occurrences (ASGL's discriminator steps, see Occurrences).
type SampledWithoutReplacement struct {
	Population int   // N ≥ 1 records the batch is drawn from
	Batch      int   // B, 1 … N
	Event      Event // what is released on the batch
}

// Validate checks the sizes and the inner event.
func (s SampledWithoutReplacement) Validate() error {
	if s.Population < 1 {
		return fmt.Errorf("dp: sampling without replacement: population %d, want ≥ 1", s.Population)
	}
	if s.Batch < 1 || s.Batch > s.Population {
		return fmt.Errorf("dp: sampling without replacement: batch %d, want 1 … %d (the population)", s.Batch, s.Population)
	}
	return validateInner(s.Event, s)
}

func (s SampledWithoutReplacement) String() string {
	return fmt.Sprintf("SampledWithoutReplacement(population=%d, batch=%d, %s)", s.Population, s.Batch, innerString(s.Event))
}

// Occurrences is Event run over examples where one privacy unit changes up
// to R examples (its own and the others it enters), each of which moves the
// clipped sum by at most Change·C (Change 1: an example only added or
// removed; 2: an example modified, its clipped gradient can turn round).
//
// Multiplier convention. The Gaussian inside states z = noise std / (R ·
// Change · C): the L2 sensitivity of the whole released sum under one
// unit's change when all R of its examples are in the batch. So the noise
// std actually added is z·R·Change·C (OccurrencesNoiseStd), and the
// unsampled Occurrences{R, Change, GaussianEvent{z, 1}} would be exactly
// the Gaussian of multiplier z. (PoissonGroupGaussian, which this replaces,
// stated σ = std/(R·C) = z·Change.)
//
// Rules (gdp refuses, its exact rules assume one record; pld has only the
// first, through the exact group pair below):
//
//	Occurrences{R, Change, Poisson{q, GaussianEvent{z, 1}}}            rdp, pld
//	Occurrences{R, Change, SampledWithoutReplacement{N, B, GaussianEvent{z, 1}}}  rdp
//
// with the per-step curve
//
//	γ(α) = 1/(α−1) · ln Σ_i w_i · exp(α(α−1)·i²/(2z²R²)),
//
// w_i the probability that i of the R changed examples are in the batch:
// Binomial(R, q) under Poisson sampling, hypergeometric (R marked of N, B
// draws; min(R, N) marked when R > N) without replacement. Proof: couple
// the two inputs' batches on the sampling decisions of the examples that do
// not differ (a removed example is sampled with its probability on one side
// and contributes a zero gradient on the other, so the coupling needs no
// common population under Poisson sampling, and the common index set of
// SampledWithoutReplacement without replacement). Given that i changed
// examples are in the batch, the two outputs are Gaussians of the same
// covariance (std z·R·Change·C) whose means differ by at most i·Change·C,
// so D_α ≤ α·i²/(2z²R²); i has the same law on both sides, and exp((α−1)
// D_α) is jointly convex (Feldman, Mironov, Talwar & Thakurta 2018, Lemma
// 25), which gives γ. With R = 1 and Poisson sampling it is the
// joint-convexity bound of the sampled Gaussian, valid but looser than
// PoissonGaussianEvent's analysis (which assumes one record); at q = 1 it is
// the Gaussian of multiplier z. The hypergeometric case is ASGL's Theorem 2
// (Ke et al., appendix) with the factor 1/(α−1) the appendix drops.
//
// The exact group pair (Poisson sampling only). Under Poisson sampling the
// accountants also use the exact group-subsampled Gaussian of the unit's
// examples (GroupPair, Schuchardt et al. 2024; its doc states the theorem
// and its conditions): rdp takes, at every order, the smaller of γ above
// and the pair's certified RDP (both valid, so the minimum is); pld
// composes the pair's privacy loss distribution. The pair needs to know
// how many of the R examples are deletions (a clipped vector of norm ≤ C
// present only on the input that holds the unit) and how many insertions
// (present only on the other); a modified example is one of each (its old
// and its new version: under Poisson sampling each input's output depends
// only on its own examples, so the inclusion draws of the two versions may
// be shared or not without changing either side's law). Deleted and
// Inserted state that split; when both are 0 it is derived conservatively:
//
//	Change ≤ 2   Deleted = Inserted = R   (every changed example is at worst
//	                                       modified: one deletion and one
//	                                       insertion of clipped vectors)
//	Change > 2   no pair (no clipped example moves the sum by more than 2C;
//	             such an event is accounted by γ alone)
//
// The derived split needs what Change's unit C means here: every example's
// contribution is clipped to norm C (DP-SGD's per-example clipping). A
// larger split is always safe: the pair with one more deletion dominates
// the pair without it (the theorem covers every gradient of norm ≤ C, the
// zero vector included, and a zero-gradient deletion leaves the output
// unchanged), so overstating either count only loosens the bound. Stating
// a smaller split than the truth under-reports ε: a method that sets them
// must prove them for every raw neighbour, as it proves R (DPAR: its own
// example is deleted under node removal, its R−1 other examples modified,
// so Deleted = R, Inserted = R − 1).
type Occurrences struct {
	R      int     // ≥ 1: most examples one unit changes
	Change float64 // > 0: most one changed example moves the clipped sum, in units of C
	Event  Event   // the per-example mechanism (a sampler over a Gaussian)
	// Deleted and Inserted (each 0 … R, both 0: derived as above) are the
	// most examples present only with the unit and only without it.
	Deleted, Inserted int
}

// Validate checks R, Change, the deletion/insertion split and the inner
// event.
func (o Occurrences) Validate() error {
	if o.R < 1 {
		return fmt.Errorf("dp: occurrences: R = %d examples per unit, want ≥ 1", o.R)
	}
	if err := CheckPositiveFinite("occurrences: change per example", o.Change); err != nil {
		return err
	}
	if o.Deleted < 0 || o.Inserted < 0 || o.Deleted > o.R || o.Inserted > o.R {
		return fmt.Errorf("dp: occurrences: %d deleted and %d inserted examples, want 0 … R = %d each", o.Deleted, o.Inserted, o.R)
	}
	if (o.Deleted > 0 || o.Inserted > 0) && o.Change > 2 {
		return fmt.Errorf("dp: occurrences: a deletion/insertion split needs change ≤ 2 (clipped examples), got %g", o.Change)
	}
	return validateInner(o.Event, o)
}

func (o Occurrences) String() string {
	if o.Deleted > 0 || o.Inserted > 0 {
		return fmt.Sprintf("Occurrences(R=%d, change=%g, deleted=%d, inserted=%d, %s)", o.R, o.Change, o.Deleted, o.Inserted, innerString(o.Event))
	}
	return fmt.Sprintf("Occurrences(R=%d, change=%g, %s)", o.R, o.Change, innerString(o.Event))
}

// maxPairExamples bounds Deleted + Inserted of the pair an accountant
// builds (the mixtures have that many components plus two); larger groups
// are accounted by the occurrence curve γ alone (rdp) or refused (pld, so
// dp.Auto picks rdp). A pair at a noise far too small for its group has
// no finite privacy loss: its whole PLD sits at +∞, which the composition
// takes exactly and the queries never read as small
// (TestPairPLDLargeGroupTinyNoise; TestPairPLDComposedAboveMonteCarlo
// checks the composed PLD at R = 60 and 169).
const maxPairExamples = 1000

// GroupPair returns the exact group pair of one step of o (Steps 1), and
// false when o has none: o is not over Poisson{q, GaussianEvent{z, 1}},
// Change > 2 with no split stated, or the group exceeds maxPairExamples. The
// pair's noise is the std o states in units of C: z·R·Change.
func (o Occurrences) GroupPair() (GroupPair, bool) {
	p, ok := o.Event.(Poisson)
	if !ok {
		return GroupPair{}, false
	}
	z, ok := unitGaussian(p.Event)
	if !ok {
		return GroupPair{}, false
	}
	del, ins := o.Deleted, o.Inserted
	if del == 0 && ins == 0 {
		if !(o.Change <= 2) {
			return GroupPair{}, false
		}
		del, ins = o.R, o.R
	}
	if del+ins > maxPairExamples {
		return GroupPair{}, false
	}
	g := GroupPair{Rate: p.Rate, Deleted: del, Inserted: ins, Noise: z * float64(o.R) * o.Change, Steps: 1}
	if g.Validate() != nil {
		return GroupPair{}, false
	}
	return g, true
}

// OccurrencesNoiseStd returns the noise std on each coordinate of the
// clipped sum that Occurrences{r, change, sampler over GaussianEvent{z}}
// states: z·r·change·clip.
func OccurrencesNoiseStd(z float64, r int, change, clip float64) float64 {
	return z * float64(r) * change * clip
}

// Composed is the Count-fold adaptive composition of Event (T DP-SGD steps:
// Composed{T, Poisson{q, GaussianEvent{z, 1}}}). Every accountant that has
// a rule for Event has one for Composed.
type Composed struct {
	Count int // ≥ 1
	Event Event
}

// Validate checks the count and the inner event.
func (c Composed) Validate() error {
	if err := CheckCount("composed event count", c.Count); err != nil {
		return fmt.Errorf("%w (in %s)", err, c)
	}
	return validateInner(c.Event, c)
}

func (c Composed) String() string {
	return fmt.Sprintf("Composed(count=%d, %s)", c.Count, innerString(c.Event))
}

// RDPer is the optional interface of an event that states its own Rényi-DP
// curve: RDP(α) is an upper bound on the Rényi divergence of order α > 1
// (nats) between the outputs on any two neighbouring inputs, +Inf where it
// has none, an error where it cannot say. The RDP accountants compose an
// RDPer they have no structural rule for by this curve (under Composed:
// Count times it); the others refuse it. RDP must be a pure function, valid
// at every order the accountant asks about (not only integers), and events
// with the same String must have the same curve.
type RDPer interface {
	Event
	RDP(alpha float64) (float64, error)
}

// GDPer is the optional interface of an event that is μ-GDP (Dong, Roth &
// Su 2019): its trade-off function is at least that of N(0, 1) vs N(μ, 1)
// for every pair of neighbouring inputs. The gdp and pld accountants
// compose a GDPer they have no structural rule for as GDPEvent{GDPMu()}
// (exactly: μ-GDP composes as sqrt(Σ μ²)); the RDP accountants use its
// RDPer curve if it has one, else α·μ²/2 (μ-GDP implies (α, αμ²/2)-RDP).
type GDPer interface {
	Event
	GDPMu() (float64, error)
}

// gdperMu returns the μ of a GDPer, checked.
func gdperMu(g GDPer) (float64, error) {
	mu, err := g.GDPMu()
	if err != nil {
		return 0, fmt.Errorf("dp: %s: %w", g, err)
	}
	if err := CheckPositiveFinite("GDP mu", mu); err != nil {
		return 0, fmt.Errorf("%w (in %s)", err, g)
	}
	return mu, nil
}

func validateInner(e Event, outer fmt.Stringer) error {
	if e == nil {
		return fmt.Errorf("dp: %s wraps no event", outer)
	}
	return e.Validate()
}

func innerString(e Event) string {
	if e == nil {
		return "<nil>"
	}
	return e.String()
}

// unitGaussian returns z when e is a single Gaussian release.
func unitGaussian(e Event) (float64, bool) {
	g, ok := e.(GaussianEvent)
	return g.Multiplier, ok && g.Count == 1
}

// groupCurve returns the per-step curve of an Occurrences over a sampled
// Gaussian (see Occurrences), or an UnsupportedEventError naming acct.
func groupCurve(o Occurrences, acct string) (*hgCurve, error) {
	unsupported := &UnsupportedEventError{Accountant: acct, Event: o,
		Hint: "occurrences are accounted over Poisson{q, GaussianEvent{z, 1}} or SampledWithoutReplacement{N, B, GaussianEvent{z, 1}} only"}
	var (
		inner Event
		lb    []float64
		lo    int
	)
	switch s := o.Event.(type) {
	case Poisson:
		if o.R+1 > MaxHypergeomTerms {
			return nil, fmt.Errorf("dp: %s: %d mixture terms exceed %d", o, o.R+1, MaxHypergeomTerms)
		}
		inner, lb = s.Event, binomialLogPMF(o.R, s.Rate)
	case SampledWithoutReplacement:
		if k := min(o.R, s.Batch) + 1; k > MaxHypergeomTerms {
			return nil, fmt.Errorf("dp: %s: %d mixture terms exceed %d", o, k, MaxHypergeomTerms)
		}
		var err error
		if lb, lo, err = hypergeomLogPMF(s.Population, min(o.R, s.Population), s.Batch); err != nil {
			return nil, err
		}
		inner = s.Event
	default:
		return nil, unsupported
	}
	z, ok := unitGaussian(inner)
	if !ok {
		return nil, unsupported
	}
	// σ = z·Change is the noise std over R·C; the curve's scale
	// Change²/(2σ²R²) = 1/(2z²R²) is computed in this form so that a σ
	// that is z·2^k reproduces the earlier PoissonGroupGaussian and
	// HypergeomGaussian curves bit for bit.
	sigma, r := z*o.Change, float64(o.R)
	return &hgCurve{lb: lb, lo: lo, scale: o.Change * o.Change / (2 * sigma * sigma * r * r)}, nil
}

// curveEvent wraps a curve as the RDPEvent the RDP accountant merges by
// name (NaN, where the curve is undefined, becomes +Inf).
func curveEvent(name string, count int, c *hgCurve) RDPEvent {
	return RDPEvent{Name: name, Count: count, Curve: func(alpha float64) float64 {
		g := c.gamma(alpha)
		if math.IsNaN(g) {
			return math.Inf(1)
		}
		return g
	}}
}

// rdperEvent wraps an outside RDPer's curve (an error becomes NaN, which
// Compose rejects at the grid orders and refinement treats as +Inf).
func rdperEvent(r RDPer, count int) RDPEvent {
	return RDPEvent{Name: fmt.Sprintf("%T:%s", r, r), Count: count, Curve: func(alpha float64) float64 {
		v, err := r.RDP(alpha)
		if err != nil {
			return math.NaN()
		}
		return v
	}}
}

// GroupStepRDP returns γ(α), the RDP of order alpha > 1 of one step of an
// Occurrences event (Occurrences{R, Change, sampler over GaussianEvent{z,
// 1}}): a calculator for tests and tools; accountants compose the event.
func GroupStepRDP(o Occurrences, alpha float64) (float64, error) {
	if math.IsNaN(alpha) || alpha <= 1 {
		return 0, fmt.Errorf("dp: RDP order must be > 1, got %g", alpha)
	}
	if err := o.Validate(); err != nil {
		return 0, err
	}
	c, err := groupCurve(o, "rdp")
	if err != nil {
		return 0, err
	}
	return c.gamma(alpha), nil
}

var errNilEvent = errors.New("dp: nil event")

// MaxComposedCount bounds the total multiplicity of any part of an event
// (the product of the counts of the Composed and count fields around it),
// so that no count overflows into a negative or small number, which would
// under-state the loss.
const MaxComposedCount = 1 << 40

// mulCount returns n·c for counts n, c ≥ 0, failing above MaxComposedCount.
func mulCount(n, c int) (int, error) {
	if n < 0 || c < 0 {
		return 0, fmt.Errorf("dp: negative count (%d × %d)", n, c)
	}
	if c != 0 && n > MaxComposedCount/c {
		return 0, fmt.Errorf("dp: composed count %d × %d exceeds %d", n, c, MaxComposedCount)
	}
	return n * c, nil
}
