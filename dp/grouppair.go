package dp

import (
	"fmt"
	"math"
	"sort"
	"sync"
)

// GroupPair is DP-SGD (Poisson sampling with rate Rate, clipping norm C,
// Gaussian noise of standard deviation Noise·C on every coordinate of the
// clipped sum) where neighbouring inputs differ in a group of examples:
// Deleted examples present only on the side that holds the privacy unit,
// Inserted examples present only on the other side. A modified example is
// one deletion plus one insertion (its old and new versions); under Poisson
// sampling that is exact, since an example's inclusion does not depend on
// the others'. A node-level unit that has its own example and enters R−1
// other examples (DPAR) is Deleted = R, Inserted = R−1 (NodeGroupPair).
//
// Worst case (the theorem relied on). Schuchardt, Stoian, Kosmala &
// Günnemann (NeurIPS 2024, "Unified Mechanism-Specific Amplification by
// Subsampling and Group Privacy Amplification", Thms 3.7–3.8, as
// implemented in the authors' code group_amplification …/rdp/poisson.py,
// rdp_tight_group with insertions and deletions; their PLD code uses the
// same pair as a dominating pair) show that for a Gaussian mechanism with
// per-example L2 sensitivity C under Poisson sampling, a group of Deleted
// deletions and Inserted insertions is tightly dominated by the
// one-dimensional pair of binomial mixtures
//
//	P = Σ_k Binom(Deleted, q)(k)·N(−k·C, σ²),   Q = Σ_j Binom(Inserted, q)(j)·N(+j·C, σ²)
//
// (σ = Noise·C): every sampled deleted example pushes the sum to one side
// by the full clipping norm, every inserted one to the other, all aligned.
// The conditions, checked for how the accountants use it (Occurrences
// over Poisson{q, GaussianEvent{z, 1}}, DP-SGD's clipped sum):
//
//   - Poisson sampling: every example is included independently with
//     probability q (dpnn's Poisson draw over public ids; a modified
//     example's two versions may share their draw, since each input's
//     output law depends only on its own examples);
//   - the base mechanism is the Gaussian with std σ on a function of the
//     batch that moves by at most C per inserted or deleted batch element
//     (the "induced distance" of the theorem): a sum of per-example
//     gradients clipped to norm C has exactly this property;
//   - the neighbouring inputs differ by Deleted deletions and Inserted
//     insertions of examples: the group's examples are the only ones whose
//     presence or content differs, the rest are shared and contribute the
//     same vectors on both sides (a modified example counts once in each);
//   - isotropic noise: the pair is one-dimensional because the worst case
//     puts every vector on one line.
//
// Source checked: the authors' code (jan-schuchardt/group_amplification,
// privacy_analysis/subsampling/rdp/poisson.py: rdp_tight_group, "Theorem
// 3.7", and its Gaussian quadrature, "Theorem 3.8": numerator Σ_k
// Binom(deletions, q)(k)·N(k, σ²), denominator Σ_j Binom(insertions,
// q)(j)·N(−j, σ²), i.e. this pair mirrored). The paper's own text was not
// available to this project's sessions (not among ../shared/papers); what
// the accountants claim for Occurrences rests on that theorem as its code
// states it. The tests check the pair against what it must meet:
// it equals the plain Poisson-subsampled Gaussian for one deletion, its
// RDP matches an mpmath brute-force integral, and it is never looser than
// joint convexity or Occurrences over Poisson sampling. Whether non-aligned gradients
// can do worse than the aligned pair is not tested here; it is what the
// theorem asserts.
//
// Both directions of the relation are kept: the RDP is max(D_α(P‖Q),
// D_α(Q‖P)), and the PLD accountant (PLD.ComposeGroupPair) composes both
// PLDs.
type GroupPair struct {
	Rate     float64 // q ∈ (0, 1]: per-example Poisson sampling probability
	Deleted  int     // ≥ 0: examples present only with the unit
	Inserted int     // ≥ 0: examples present only without it (Deleted + Inserted ≥ 1)
	Noise    float64 // σ/C > 0: noise standard deviation in units of the clipping norm
	Steps    int     // ≥ 1: composed steps
}

// NodeGroupPair is the pair of a unit with its own example (deleted) and
// occurrences−1 others it modifies: Deleted = occurrences, Inserted =
// occurrences − 1. For DPAR, occurrences is its R and noise its noise std
// over C (OccurrencesNoiseStd(z, R, 2, 1) for the Occurrences event).
func NodeGroupPair(rate float64, occurrences int, noise float64, steps int) GroupPair {
	return GroupPair{Rate: rate, Deleted: occurrences, Inserted: occurrences - 1, Noise: noise, Steps: steps}
}

// Validate checks the parameters.
func (g GroupPair) Validate() error {
	if err := CheckRate(g.Rate); err != nil {
		return fmt.Errorf("%w (group pair)", err)
	}
	if g.Deleted < 0 || g.Inserted < 0 || g.Deleted+g.Inserted < 1 || g.Deleted+g.Inserted > 1000 {
		return fmt.Errorf("dp: group pair: %d deleted and %d inserted examples, want ≥ 0 each, 1 … 1000 in all", g.Deleted, g.Inserted)
	}
	if err := CheckMultiplier(g.Noise); err != nil {
		return fmt.Errorf("%w (group pair noise)", err)
	}
	return CheckCount("group pair steps", g.Steps)
}

// String names the mechanism per step (the ledger key).
func (g GroupPair) String() string {
	return fmt.Sprintf("GroupPair(rate=%g, deleted=%d, inserted=%d, noise=%g)", g.Rate, g.Deleted, g.Inserted, g.Noise)
}

// pair returns the dominating pair with C = 1.
func (g GroupPair) pair() mixPair {
	mk := func(n int, sign float64) ([]float64, []float64) {
		lw := binomialLogPMF(n, g.Rate)
		means, w := make([]float64, n+1), make([]float64, n+1)
		for k := range means {
			means[k], w[k] = sign*float64(k), math.Exp(lw[k])
		}
		return means, w
	}
	pm, pw := mk(g.Deleted, -1)
	qm, qw := mk(g.Inserted, 1)
	return newMixPair(g.Noise, pm, pw, qm, qw)
}

// pairTailMass bounds the binomial tail mass pldPair moves to ⊥ on each
// side (per step; over T steps it adds at most T·pairTailMass to δ).
const pairTailMass = 1e-16

// pldPair returns the dominating pair for the PLD accountant: pair() with
// each side's binomial tail {k > K} (K the smallest index whose upper tail
// has mass ≤ pairTailMass) moved to a point outside both supports (⊥P on
// P's side, ⊥Q on Q's), its mass rounded up: P̂ = Σ_{k≤K} w_k·N(−k, σ²) +
// τ_P·δ_⊥P and likewise Q̂ (mixPair's tp, tq).
//
// Proof that (P̂, Q̂) dominates (P, Q): the kernel that maps ⊥P to P's
// normalised tail Σ_{k>K} w_k·N(−k, σ²)/τ_P, ⊥Q to Q's, and every real
// output to itself sends P̂ to P and Q̂ to Q exactly (P̂ has no mass at ⊥Q,
// Q̂ none at ⊥P), so by the data-processing inequality every hockey-stick
// divergence of (P, Q), in both directions and at every ε, is at most
// that of (P̂, Q̂); rounding τ up only moves more mass to the distinguishable
// points (the same kernel argument with a larger tail). In PLD terms the
// dropped components become an atom τ_P at loss +∞ (δ rises by at most
// τ_P at every ε). For R = 169 at rate 0.039 this keeps 45 of 170
// components; not used by the RDP accountant (an atom outside Q's
// support has infinite Rényi divergence).
//
// The noise is snapped down to the grid 2^{k/1024} (snapNoise): the pair
// at noise σ is the pair at σ' ≤ σ with N(0, σ² − σ'²) added to both sides
// (⊥ points mapped to themselves), a Markov kernel, so the pair at σ'
// dominates (exactHi's argument). A calibration's last search steps, within
// 0.2 % of each other, then share one or two grid levels and their
// discretisations (pmfCache), at a cost below 0.07 % in noise.
func (g GroupPair) pldPair() mixPair {
	mk := func(n int, sign float64) ([]float64, []float64, float64) {
		lw := binomialLogPMF(n, g.Rate)
		// Upper tail sums from the top, in logs.
		k := n
		tail := math.Inf(-1)
		for k > 0 {
			t := logAdd(tail, lw[k])
			if t > math.Log(pairTailMass) {
				break
			}
			tail = t
			k--
		}
		means, w := make([]float64, k+1), make([]float64, k+1)
		for i := range means {
			means[i], w[i] = sign*float64(i), math.Exp(lw[i])
		}
		tau := 0.0
		if k < n {
			tau = math.Exp(tail)*(1+1e-9) + 1e-300
		}
		return means, w, tau
	}
	pm, pw, tp := mk(g.Deleted, -1)
	qm, qw, tq := mk(g.Inserted, 1)
	m := newMixPair(snapNoise(g.Noise), pm, pw, qm, qw)
	m.tp, m.tq = tp, tq
	return m
}

// ExactStepRDP returns a certified bracket [lo, hi] of the Rényi divergence
// of order alpha > 1 of one step, max(D_α(P‖Q), D_α(Q‖P)), in nats (hi may
// be +Inf where it overflows). See mixRDP for the quadrature and its bound.
func (g GroupPair) ExactStepRDP(alpha float64) (lo, hi float64, err error) {
	return g.stepRDPCells(alpha, mixRDPCells)
}

// stepRDPCells is ExactStepRDP with at most cells quadrature cells per
// pass (fewer cells: a wider, still certified, bracket).
func (g GroupPair) stepRDPCells(alpha float64, cells int) (lo, hi float64, err error) {
	if err := g.Validate(); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(alpha) || alpha <= 1 || math.IsInf(alpha, 1) {
		return 0, 0, fmt.Errorf("dp: RDP order must be finite and > 1, got %g", alpha)
	}
	p := g.pair()
	lo1, hi1 := mixRDP(p, alpha, cells)
	lo2, hi2 := mixRDP(p.swap(), alpha, cells)
	return math.Max(0, math.Max(lo1, lo2)), math.Max(hi1, hi2), nil
}

// JointConvexityStepRDP is the RDP of one step by joint convexity, with
// each deleted example coupled to an inserted one (valid for any coupling
// of the two sides' sampling: each side's output depends only on its own
// examples): a = min(Deleted, Inserted) pairs, each sampled with
// probability q and moving the mean by up to 2C, and b = |Deleted −
// Inserted| single examples moving it by up to C, so
//
//	γ(α) = 1/(α−1)·ln Σ_{i,j} Binom(a, q)(i)·Binom(b, q)(j)·exp(α(α−1)(2i + j)²/(2σ²))
//
// (σ = Noise). It is never larger than the Occurrences bound with
// R = max(Deleted, Inserted), Change 2 and the same noise std (which moves
// every one of R examples by 2C).
func (g GroupPair) JointConvexityStepRDP(alpha float64) (float64, error) {
	if err := g.Validate(); err != nil {
		return 0, err
	}
	if math.IsNaN(alpha) || alpha <= 1 {
		return 0, fmt.Errorf("dp: RDP order must be > 1, got %g", alpha)
	}
	a, b := min(g.Deleted, g.Inserted), max(g.Deleted, g.Inserted)-min(g.Deleted, g.Inserted)
	la, lb := binomialLogPMF(a, g.Rate), binomialLogPMF(b, g.Rate)
	c := alpha * (alpha - 1) / (2 * g.Noise * g.Noise)
	s := math.Inf(-1)
	for i, wi := range la {
		for j, wj := range lb {
			m := float64(2*i + j)
			s = logAdd(s, wi+wj+c*m*m)
		}
	}
	return math.Max(0, s/(alpha-1)), nil
}

// StepRDP returns the RDP of one step at order alpha > 1: the smaller of
// the certified upper end of ExactStepRDP and JointConvexityStepRDP (both
// valid bounds, so the minimum is too; it is never looser than joint
// convexity).
func (g GroupPair) StepRDP(alpha float64) (float64, error) {
	jc, err := g.JointConvexityStepRDP(alpha)
	if err != nil {
		return 0, err
	}
	_, hi, err := g.ExactStepRDP(alpha)
	if err != nil {
		return 0, err
	}
	return math.Min(jc, hi), nil
}

// RDPEvent returns the Steps steps as an RDPEvent (per-step curve StepRDP,
// Count Steps), for the RDP accountant.
func (g GroupPair) RDPEvent() (RDPEvent, error) {
	if err := g.Validate(); err != nil {
		return RDPEvent{}, err
	}
	return RDPEvent{Name: g.String(), Count: g.Steps, Curve: func(alpha float64) float64 {
		v, err := g.StepRDP(alpha)
		if err != nil || math.IsNaN(v) {
			return math.Inf(1)
		}
		return v
	}}, nil
}

// mixRDPCells caps the number of quadrature cells of one RDP evaluation
// (beyond it the cells widen: the bound stays certified, only looser).
const mixRDPCells = 1 << 17

// mixRDP returns a certified bracket [lo, hi] of D_α(P‖Q) for a mixPair:
//
//	D_α = 1/(α−1)·ln I,   I = ∫ e^{g(x)} dx,   g = α·ln p + (1−α)·ln q.
//
// Quadrature with a certified error. With r_P, r_Q the ranges of P's and
// Q's means, (ln p)” = (Var_post(mean) − s²)/s⁴ lies in [−1/s²,
// −1/s² + r_P²/(4s⁴)] (a variance of values in an interval of length r is
// at most r²/4), and likewise for q, so g” lies in
//
//	[m₋, m₊] = [−1/s² − (α−1)r_Q²/(4s⁴),  −1/s² + α·r_P²/(4s⁴)].
//
// On a cell [c − h/2, c + h/2], Taylor's theorem gives
// g(c) + g'(c)t + min(m₋,0)h²/8 ≤ g(c+t) ≤ g(c) + g'(c)t + max(m₊,0)h²/8, and
// ∫ e^{g'(c)t} dt = h·sinh(g'(c)h/2)/(g'(c)h/2) exactly, so each cell's
// integral is bracketed in closed form (g' is exact: (α·E_P[mean|x] −
// (α−1)·E_Q[mean|x] − x)/s²). The step h makes the two ends differ by a
// factor e^{1e-6} (or fewer than mixRDPCells cells).
//
// Tails, outside [a, b]: for x ≤ a ≤ min P mean, p(x) ≤ φ_s(x − min P mean)
// and q(x) ≥ v_j·φ_s(x − m_j) for any component j of Q, so e^g is below a
// Gaussian whose integral is closed form; for x ≥ b ≥ max Q mean, p(x) ≤
// φ_s(x − max P mean) likewise. The smaller of the bounds over Q's smallest
// and largest components is used, and a, b move out until each tail is
// below 1e-13 (I ≥ 1 as D_α ≥ 0). The upper end adds the tails and a
// relative 1e-9 for floating-point rounding; the lower end omits the tails
// and subtracts the same.
func mixRDP(m mixPair, alpha float64, cells int) (lo, hi float64) {
	s := m.s
	s2 := s * s
	rng := func(a []float64) (float64, float64) {
		l, h := a[0], a[0]
		for _, v := range a {
			l, h = math.Min(l, v), math.Max(h, v)
		}
		return l, h
	}
	pLo, pHi := rng(m.pm)
	qLo, qHi := rng(m.qm)
	rp, rq := pHi-pLo, qHi-qLo
	mMinus := -1/s2 - (alpha-1)*rq*rq/(4*s2*s2)
	mPlus := -1/s2 + alpha*rp*rp/(4*s2*s2)
	curv := math.Max(-mMinus, math.Max(mPlus, 0))

	// Q's components used in the tail bounds: smallest and largest mean.
	idx := func(v float64) int {
		for i, x := range m.qm {
			if x == v {
				return i
			}
		}
		return 0
	}
	comps := []int{idx(qLo), idx(qHi)}
	// Left tail (x ≤ a): p ≤ φ_s(x − pLo), q ≥ v_j φ_s(x − m_j):
	// exponent −[α(x−pLo)² + (1−α)(x−m_j)²]/(2s²) = −[(x − c)² − c² + αpLo² + (1−α)m_j²]/(2s²),
	// c = α·pLo + (1−α)·m_j; ∫_{−∞}^a = v_j^{1−α}·e^{(c² − α pLo² − (1−α)m_j²)/(2s²)}·Φ((a − c)/s).
	tail := func(a float64, left bool) float64 {
		best := math.Inf(1)
		for _, j := range comps {
			mj, lv := m.qm[j], m.ql[j]
			pm := pLo
			if !left {
				pm = pHi
			}
			c := alpha*pm + (1-alpha)*mj
			pre := (1-alpha)*lv + (c*c-alpha*pm*pm-(1-alpha)*mj*mj)/(2*s2)
			var t float64
			if left {
				t = pre + logNormCDF((a-c)/s)
			} else {
				t = pre + logNormCDF((c-a)/s)
			}
			best = math.Min(best, t)
		}
		return best
	}
	// Centres of the tail Gaussians bound where the mass is.
	cMin, cMax := math.Inf(1), math.Inf(-1)
	for _, j := range comps {
		for _, pm := range []float64{pLo, pHi} {
			c := alpha*pm + (1-alpha)*m.qm[j]
			cMin, cMax = math.Min(cMin, c), math.Max(cMax, c)
		}
	}
	a := math.Min(cMin, math.Min(pLo, qLo)) - 8*s
	b := math.Max(cMax, math.Max(pHi, qHi)) + 8*s
	const tailTarget = -30 // ln 1e-13
	var lt, rt float64
	for lt = tail(a, true); lt > tailTarget && a > -1e9; lt = tail(a, true) {
		a -= 2 * s
	}
	for rt = tail(b, false); rt > tailTarget && b < 1e9; rt = tail(b, false) {
		b += 2 * s
	}
	// A first pass with a coarse step estimates ln I; the second takes the
	// step that brackets ln I to about 1e-4 of itself (at most 1e-6 and
	// at least 1e-12 absolute), or mixRDPCells cells. With a smaller cell
	// cap (the accountant's anchors, pairAnchorCells) the target is 1e-5 …
	// 1e-10: a relative 1e-4 of K = (α−1)·D_α is far below what an
	// accountant resolves, and a capped step only widens the bracket.
	logI, _, _ := mixQuad(m, alpha, a, b, math.Sqrt(8*1e-3/curv), mMinus, mPlus, cells)
	eta := math.Min(1e-6, math.Max(1e-12, 1e-4*math.Abs(logI)))
	if cells < mixRDPCells {
		eta = math.Min(1e-5, math.Max(1e-10, 1e-4*math.Abs(logI)))
	}
	logI, up, down := mixQuad(m, alpha, a, b, math.Sqrt(8*eta/curv), mMinus, mPlus, cells)
	hiI := logAdd(logI+up, logAdd(lt, rt))
	loI := logI + down
	// Floating-point rounding: relative 1e-13 of ln I's parts (exponents up to
	// |g| ~ 1e3 carry ~1e-13 absolute error) plus the sum's cells·u.
	margin := 1e-13*(math.Abs(logI)+1) + float64(max(cells, mixRDPCells))*unitRoundoff
	return (loI - margin) / (alpha - 1), (hiI + margin) / (alpha - 1)
}

// mixQuad returns ln Σ over the cells of [a, b] (step about h, at most
// mixRDPCells cells) of e^{g(c)}·h·sinhc(g'(c)h/2), the exact integral of
// e^g's tangent line at each cell's centre c, and the log-factors up ≥ 0,
// down ≤ 0 that bound the integral above and below (see mixRDP).
func mixQuad(m mixPair, alpha, a, b, h, mMinus, mPlus float64, maxCells int) (logI, up, down float64) {
	s := m.s
	s2 := s * s
	norm := -math.Log(s * math.Sqrt(2*math.Pi))
	if cells := (b - a) / h; cells > float64(maxCells) || math.IsNaN(cells) {
		h = (b - a) / float64(maxCells)
	}
	nCells := int(math.Ceil((b - a) / h))
	h = (b - a) / float64(nCells)
	up = math.Max(mPlus, 0) * h * h / 8
	down = math.Min(mMinus, 0) * h * h / 8
	logH := math.Log(h)
	vals := make([]float64, nCells)
	best := math.Inf(-1)
	for i := range vals {
		c := a + (float64(i)+0.5)*h
		lp, mp := logMix(c, s, m.pm, m.pl)
		lq, mq := logMix(c, s, m.qm, m.ql)
		gc := alpha*(lp+norm) + (1-alpha)*(lq+norm)
		gd := (alpha*mp - (alpha-1)*mq - c) / s2
		v := gc + logH + logSinhc(gd*h/2)
		vals[i] = v
		best = math.Max(best, v)
	}
	var sum float64
	for _, v := range vals {
		sum += math.Exp(v - best)
	}
	return best + math.Log(sum), up, down
}

// logSinhc returns ln(sinh(y)/y) (0 at y = 0).
func logSinhc(y float64) float64 {
	y = math.Abs(y)
	if y < 1e-4 {
		return y * y / 6
	}
	return y + math.Log(-math.Expm1(-2*y)/(2*y))
}

// pairAnchors are the orders at which the RDP accountant evaluates a group
// pair's certified RDP (pairCurve): α − 1 = 2^{k/4}, k = −20 … 32, i.e.
// 1.03 … 257, consecutive ones 19 % apart in α − 1. Orders above the last
// anchor take the joint-convexity bound alone.
var pairAnchors = func() []float64 {
	var o []float64
	for k := -20; k <= 32; k++ {
		o = append(o, 1+math.Exp2(float64(k)/4))
	}
	return o
}()

// pairRDPCache memoises ExactStepRDP's upper end per (pair, order), shared
// by every accountant (a calibration, tune's candidates and repeated runs
// evaluate the same pairs many times). It holds at most pairCacheMax
// entries and is emptied when full.
var pairRDPCache = struct {
	sync.Mutex
	m map[pairRDPKey]float64
}{m: map[pairRDPKey]float64{}}

const pairCacheMax = 1 << 16

type pairRDPKey struct {
	rate, noise, alpha float64
	del, ins           int
}

// pairAnchorCells caps the quadrature cells of one anchor evaluation in
// the accountant (exactHi): 1024 instead of mixRDPCells' 131072 moves a
// calibration's result by about 0.05 % (sage at R = 3: std 3.08715 →
// 3.08860 with the noise grid below) for a 100× smaller cost.
const pairAnchorCells = 1 << 10

// pairAnchorCellsLow is the cap below order 2, where D_α is small and the
// quadrature's per-cell curvature term (absolute in ln I) needs finer cells
// to stay within a few per cent of it.
const pairAnchorCellsLow = 1 << 13

// pairNoiseSteps is how finely exactHi's noise grid divides a factor of 2
// (consecutive grid levels 2^{1/1024} ≈ 1.0007 apart).
const pairNoiseSteps = 1024

// snapNoise returns the largest level 2^{k/pairNoiseSteps} (k integer)
// that is ≤ s.
func snapNoise(s float64) float64 {
	k := math.Floor(math.Log2(s) * pairNoiseSteps)
	for math.Exp2((k+1)/pairNoiseSteps) <= s { // a level itself maps to itself
		k++
	}
	for {
		v := math.Exp2(k / pairNoiseSteps)
		if v <= s {
			return v
		}
		k--
	}
}

// exactHi returns an upper bound on the pair's one-step RDP at alpha: the
// certified upper end of ExactStepRDP for the same pair with the noise
// snapped down to the grid 2^{k/1024} (snapNoise), with at most
// pairAnchorCells quadrature cells, memoised.
//
// Proof that the snapped value bounds the pair at noise s: for s' ≤ s the
// pair at noise s is the pair at noise s' with N(0, s² − s'²) added on both
// sides (a sum of independent Gaussians), one Markov kernel applied to P
// and to Q, so by the data-processing inequality for Rényi divergences
// D_α at s is at most D_α at s' (both directions). The grid costs at most
// a factor 2^{1/1024} in noise (about 0.14 % in D_α ∝ 1/s²) and lets a
// calibration, whose bisection narrows to within the grid spacing after a
// dozen steps, reuse the anchors of every later step (issue 39's speed
// item: the work is shared across the noise levels of a calibration).
func (g GroupPair) exactHi(alpha float64) float64 {
	g.Noise = snapNoise(g.Noise)
	k := pairRDPKey{rate: g.Rate, noise: g.Noise, alpha: alpha, del: g.Deleted, ins: g.Inserted}
	pairRDPCache.Lock()
	v, ok := pairRDPCache.m[k]
	pairRDPCache.Unlock()
	if ok {
		return v
	}
	cells := pairAnchorCells
	if alpha < 2 {
		cells = pairAnchorCellsLow
	}
	_, hi, err := g.stepRDPCells(alpha, cells)
	if err != nil || math.IsNaN(hi) {
		hi = math.Inf(1)
	}
	pairRDPCache.Lock()
	if len(pairRDPCache.m) >= pairCacheMax {
		clear(pairRDPCache.m)
	}
	pairRDPCache.m[k] = hi
	pairRDPCache.Unlock()
	return hi
}

// chordRDP returns an upper bound on the pair's one-step RDP at alpha
// from its certified values at the two anchors around alpha (+Inf above
// the last anchor). Proof: K(α) = (α−1)·D_α = ln ∫ p^α q^{1−α} is convex in
// α (Hölder's inequality), K(1) = 0, and so is the larger of the two
// directions' K; a convex function lies below its chords, and replacing
// the anchors' values by upper bounds only raises the chord. So
// K(α) ≤ ((a₂ − α)·K̂(a₁) + (α − a₁)·K̂(a₂))/(a₂ − a₁) for a₁ ≤ α ≤ a₂
// (a₁ = 1, K̂ = 0, below the first anchor), and D_α = K(α)/(α−1).
func (g GroupPair) chordRDP(alpha float64) float64 {
	i := sort.SearchFloat64s(pairAnchors, alpha) // first anchor ≥ alpha
	if i == len(pairAnchors) {
		return math.Inf(1)
	}
	a2 := pairAnchors[i]
	k2 := (a2 - 1) * g.exactHi(a2)
	if a2 == alpha {
		return g.exactHi(a2)
	}
	a1, k1 := 1.0, 0.0
	if i > 0 {
		a1 = pairAnchors[i-1]
		k1 = (a1 - 1) * g.exactHi(a1)
	}
	if math.IsInf(k1, 1) || math.IsInf(k2, 1) {
		return math.Inf(1)
	}
	k := ((a2-alpha)*k1 + (alpha-a1)*k2) / (a2 - a1)
	return math.Max(0, k/(alpha-1)*(1+1e-12))
}

// occurrencesPairCurve is the RDP accountant's per-step curve of an
// Occurrences over Poisson sampling that has a group pair (see
// Occurrences): at every order the smallest of the occurrence curve γ, the
// pair's joint-convexity bound and (up to pairRDPMaxExamples examples) its
// certified exact RDP (by chordRDP).
// Each is a valid bound, so the minimum is.
//
// pairRDPCertified turns the pair's certified RDP (chordRDP) on in the rdp
// accountant's occurrence curve. It is on: with the anchors' cell cap
// (pairAnchorCells) and their noise grid (exactHi) a calibration through it
// costs about a second of CPU at R = 3 instead of a minute (issue 39's
// speed item); tests turn it off to see the other bounds alone.
var pairRDPCertified = true

// pairRDPMaxExamples caps the pair's certified RDP in the rdp accountant
// by cost: above Deleted + Inserted = 16 (R > 8 at Change 2) the curve is
// the occurrence curve and joint convexity alone (both valid, looser), so
// no rdp calibration takes minutes (R = 41: 12 s of CPU with the pair,
// R = 169: 32 s). The pld accountant, the default for DP-SGD over
// Examples, uses the pair's PLD at every size.
const pairRDPMaxExamples = 16

func occurrencesPairCurve(name string, count int, c *hgCurve, g GroupPair) RDPEvent {
	return RDPEvent{Name: name, Count: count, Curve: func(alpha float64) float64 {
		v := c.gamma(alpha)
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		if jc, err := g.JointConvexityStepRDP(alpha); err == nil && !math.IsNaN(jc) {
			v = math.Min(v, jc)
		}
		if pairRDPCertified && g.Deleted+g.Inserted <= pairRDPMaxExamples {
			if e := g.chordRDP(alpha); !math.IsNaN(e) {
				v = math.Min(v, e)
			}
		}
		return v
	}}
}
