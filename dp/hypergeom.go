package dp

import (
	"fmt"
	"math"
	"slices"
)

// MaxHypergeomTerms bounds the number of terms min(R, B_d) + 1 of the
// hypergeometric mixture (one float64 each, evaluated at every order the
// accountant asks about).
const MaxHypergeomTerms = 1 << 20

// HypergeomPMF returns the hypergeometric probabilities β_i, i = 0 …
// min(marked, draws): the chance that a uniformly random subset of draws
// items out of population contains exactly i of the marked items,
// C(marked, i)·C(population − marked, draws − i)/C(population, draws)
// (ASGL appendix, eq. 10, with |S_tr| = N_tr = population, |B_t| = B_d =
// draws and R_{N,L} = marked). Entries below max(0, draws − (population −
// marked)) are 0. It fails unless 1 ≤ draws ≤ population and
// 0 ≤ marked ≤ population, and when there would be more than
// MaxHypergeomTerms entries.
func HypergeomPMF(population, marked, draws int) ([]float64, error) {
	lb, lo, err := hypergeomLogPMF(population, marked, draws)
	if err != nil {
		return nil, err
	}
	out := make([]float64, lo+len(lb))
	for k, v := range lb {
		out[lo+k] = math.Exp(v)
	}
	return out, nil
}

// hypergeomLogPMF returns ln β_i for i = lo … min(marked, draws) (the
// support).
func hypergeomLogPMF(population, marked, draws int) (lb []float64, lo int, err error) {
	if population < 1 {
		return nil, 0, fmt.Errorf("dp: hypergeometric: population %d, want ≥ 1", population)
	}
	if draws < 1 || draws > population {
		return nil, 0, fmt.Errorf("dp: hypergeometric: %d draws from a population of %d, want 1 … %d", draws, population, population)
	}
	if marked < 0 || marked > population {
		return nil, 0, fmt.Errorf("dp: hypergeometric: %d marked items in a population of %d, want 0 … %d", marked, population, population)
	}
	hi := min(marked, draws)
	if hi+1 > MaxHypergeomTerms {
		return nil, 0, fmt.Errorf("dp: hypergeometric: %d terms (min(marked %d, draws %d) + 1) exceed %d", hi+1, marked, draws, MaxHypergeomTerms)
	}
	lo = max(0, draws-(population-marked))
	total := logBinom(population, draws)
	lb = make([]float64, hi-lo+1)
	for i := lo; i <= hi; i++ {
		lb[i-lo] = logBinom(marked, i) + logBinom(population-marked, draws-i) - total
	}
	return lb, lo, nil
}

// HypergeomGaussian gathers the parameters of the discriminator update of
// ASGL (Ke et al., KDD 2026, appendix, Thm 2) in the paper's terms: each
// step draws a batch of exactly Batch (B_d) training subgraphs without
// replacement from the Population (N_tr), sums their gradients clipped to
// norm C, and adds Gaussian noise of standard deviation
// Multiplier·Occurrences·Change·C to every coordinate. Neighbouring inputs
// differ in at most Occurrences training subgraphs, and each differing
// subgraph moves the clipped sum by at most Change·C. Its events (Step,
// Event) are
//
//	Occurrences{R, Change, SampledWithoutReplacement{N_tr, B_d, GaussianEvent{z, 1}}}
//
// composed Steps times; see Occurrences for the curve and its proof.
//
// Multiplier is z = std / (R·Change·C), the one convention of dp (the noise
// std over the sensitivity of the whole released sum). The paper's σ
// (std/(R·C), eq. 6) is z·Change: the two agree at Change 1, Theorem 2 as
// printed, which holds when each differing subgraph contributes its
// gradient on one input and nothing on the other. Under node removal, the
// subgraphs of the other roots near the removed node are modified, not
// removed: their clipped gradients can move by up to 2C each, so Change = 2
// is the bound to use there. When R exceeds N_tr, at most N_tr subgraphs
// can differ and the hypergeometric weights count min(R, N_tr) marked items
// (the noise keeps its scale z·R·Change·C).
//
// The batch must be a fixed-size sample without replacement (FixedSample)
// from a population that is the same on both neighbours (for node-level
// ASGL: one training subgraph per node id, a removed node keeping its id
// and an empty subgraph); Poisson sampling is accounted differently. For
// ASGL, Steps = 2T: T noisy steps of each of the two discriminators.
type HypergeomGaussian struct {
	Population  int     // N_tr ≥ 1: training subgraphs batches are drawn from
	Batch       int     // B_d, 1 … N_tr: subgraphs per batch
	Occurrences int     // R ≥ 1: most subgraphs that differ between neighbours (R_{N,L})
	Multiplier  float64 // z > 0: noise std over R·Change·C (the paper's σ is z·Change)
	Change      float64 // > 0: most one differing subgraph moves the clipped sum, in units of C (1 or 2, see above)
	Steps       int     // ≥ 1: composed steps
}

// Validate checks the parameters (and that the mixture has at most
// MaxHypergeomTerms terms).
func (h HypergeomGaussian) Validate() error {
	if h.Population < 1 {
		return fmt.Errorf("dp: hypergeometric Gaussian: population N_tr = %d, want ≥ 1", h.Population)
	}
	if h.Batch < 1 || h.Batch > h.Population {
		return fmt.Errorf("dp: hypergeometric Gaussian: batch B_d = %d, want 1 … N_tr = %d", h.Batch, h.Population)
	}
	if h.Occurrences < 1 {
		return fmt.Errorf("dp: hypergeometric Gaussian: occurrence bound R = %d, want ≥ 1", h.Occurrences)
	}
	if err := CheckMultiplier(h.Multiplier); err != nil {
		return fmt.Errorf("%w (hypergeometric Gaussian z)", err)
	}
	if err := CheckPositiveFinite("hypergeometric Gaussian change per subgraph", h.Change); err != nil {
		return err
	}
	if err := CheckCount("hypergeometric Gaussian steps", h.Steps); err != nil {
		return err
	}
	if k := min(h.Occurrences, h.Batch) + 1; k > MaxHypergeomTerms {
		return fmt.Errorf("dp: hypergeometric Gaussian: %d mixture terms (min(R %d, B_d %d) + 1) exceed %d", k, h.Occurrences, h.Batch, MaxHypergeomTerms)
	}
	return nil
}

// NoiseStd returns the standard deviation of the noise added to each
// coordinate of the summed clipped gradient: z·R·Change·clip (the paper's
// σ·R_{N,L}·C, eq. 6, with σ = z·Change).
func (h HypergeomGaussian) NoiseStd(clip float64) float64 {
	return OccurrencesNoiseStd(h.Multiplier, h.Occurrences, h.Change, clip)
}

// hgCurve evaluates γ(α) from the cached ln w_i (the occurrence curves of
// Occurrences).
type hgCurve struct {
	lb    []float64 // ln w_i, i = lo …
	lo    int
	scale float64 // Change²/(2σ²R²) = 1/(2z²R²)
}

// gamma returns γ(α) for α > 1 (NaN otherwise). As Σ β_i = 1,
// ln Σ β_i e^{c_i} = ln(1 + Σ_{i≥1} β_i (e^{c_i} − 1)); the second sum is
// taken in log space, which keeps full relative accuracy for tiny γ (a
// plain log-sum would cancel) and does not overflow for large α.
func (c *hgCurve) gamma(alpha float64) float64 {
	if !(alpha > 1) {
		return math.NaN()
	}
	w := alpha * (alpha - 1) * c.scale
	// Streaming log-sum-exp: s·e^mx is the running sum.
	mx, s := math.Inf(-1), 0.0
	for k, l := range c.lb {
		i := float64(c.lo + k)
		if i == 0 || math.IsInf(l, -1) {
			continue
		}
		t := l + logExpm1(w*i*i)
		if math.IsInf(t, 1) || math.IsNaN(t) {
			return math.Inf(1)
		}
		if math.IsInf(t, -1) {
			continue // e^{c_i} − 1 underflowed: a term below 1e-308
		}
		if t > mx {
			s = s*math.Exp(mx-t) + 1
			mx = t
		} else {
			s += math.Exp(t - mx)
		}
	}
	if math.IsInf(mx, -1) {
		return 0
	}
	return log1pExp(mx+math.Log(s)) / (alpha - 1)
}

// StepRDP returns γ(α), the Rényi DP of order alpha > 1 of one step (see
// Occurrences); +Inf where it overflows. It fails on invalid parameters or
// alpha ≤ 1.
func (h HypergeomGaussian) StepRDP(alpha float64) (float64, error) {
	if err := h.Validate(); err != nil {
		return 0, err
	}
	return GroupStepRDP(h.step(), alpha)
}

// String names the parameters (for messages; the ledger names the events).
func (h HypergeomGaussian) String() string {
	return fmt.Sprintf("HypergeomGaussian(N_tr=%d, B_d=%d, R=%d, multiplier=%g, change=%g, steps=%d)",
		h.Population, h.Batch, h.Occurrences, h.Multiplier, h.Change, h.Steps)
}

func (h HypergeomGaussian) step() Occurrences {
	return Occurrences{R: h.Occurrences, Change: h.Change, Event: SampledWithoutReplacement{Population: h.Population, Batch: h.Batch,
		Event: GaussianEvent{Multiplier: h.Multiplier, Count: 1}}}
}

// Step returns the event of one step, the one a mechanism records per
// noisy step: Occurrences{R, Change, SampledWithoutReplacement{N_tr, B_d,
// GaussianEvent{z, 1}}}. It fails on invalid parameters.
func (h HypergeomGaussian) Step() (Event, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h.step(), nil
}

// Event returns the Steps steps, Composed{Steps, Step}: the event a privacy
// plan declares, to which the recorded steps add up (RDP accountants only;
// ASGL appendix, Thm 2: (α, 2Tγ)-RDP for Steps = 2T). It fails on invalid
// parameters.
func (h HypergeomGaussian) Event() (Event, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return Composed{Count: h.Steps, Event: h.step()}, nil
}

// FixedSample returns a uniformly random subset of exactly size indices of
// [0, n), sorted, drawn from the noise source (Floyd's algorithm; O(size)
// draws): the fixed-size sampling without replacement that
// HypergeomGaussian accounts. It fails unless 0 ≤ size ≤ n.
func FixedSample(src *Source, n, size int) ([]int, error) {
	if n < 0 || size < 0 || size > n {
		return nil, fmt.Errorf("dp: fixed-size sample of %d out of %d, want 0 ≤ size ≤ n", size, n)
	}
	seen := make(map[int]struct{}, size)
	out := make([]int, 0, size)
	for j := n - size; j < n; j++ {
		t := src.rng.IntN(j + 1)
		if _, ok := seen[t]; ok {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out, nil
}
