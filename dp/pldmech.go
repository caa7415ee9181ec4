package dp

import (
	"fmt"
	"math"
	"strconv"
)

// This file builds the discretised privacy-loss distribution (PLD) of one
// mechanism: a pessimistic connect-the-dots discretisation (Doroshenko,
// Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the Dots: Tighter
// Discrete Approximations of Privacy Loss Distributions", Alg. 1) of its
// privacy profile δ(ε), on the grid d·ℤ.
//
// Notation. For a pair (P, Q) of output distributions the privacy loss is
// L = ln(dP/dQ)(X), X ~ P (+∞ where Q has no density), and the privacy
// profile (the ε-hockey-stick divergence) is
//
//	δ(ε) = sup_S P(S) − e^ε Q(S) = E_P[(1 − e^{ε−L})₊]    (ε ∈ ℝ).
//
// A measure μ ≥ 0 on (−∞, +∞] has the profile δ_μ(ε) = ∫(1 − e^{ε−l})₊ dμ(l)
// (an atom at +∞ counts fully). We say μ dominates the pair when δ_μ ≥ δ
// everywhere.

// pldPMF is a non-negative measure on the grid: mass p[i] at loss
// (lo+i)·d, plus mass inf at +∞ (the part of δ that no ε removes).
type pldPMF struct {
	lo  int
	p   []float64
	inf float64
	d   float64
}

// mass returns the total finite mass.
func (m *pldPMF) mass() float64 {
	var s float64
	for _, v := range m.p {
		s += v
	}
	return s
}

// errGridTooFine reports that a discretisation would need more than
// pldMaxBins grid points; the accountant then coarsens the grid.
type errGridTooFine struct{ bins float64 }

func (e errGridTooFine) Error() string {
	return fmt.Sprintf("dp: PLD grid would need %.3g points", e.bins)
}

// pldMaxBins caps the number of grid points of one mechanism's PLD and of
// the composed window (the FFT length).
const pldMaxBins = 1 << 21

// unitRoundoff is the float64 unit roundoff u = 2⁻⁵³.
const unitRoundoff = 0x1p-53

// ctdPMF is the pessimistic connect-the-dots discretisation of a privacy
// profile on the grid points ε_i = i·d, i = iLo … iHi.
//
// delta(ε) must return δ(ε) and a bound on its absolute error; the
// discretisation uses δ̂_i = min(1, value + error), made non-increasing by
// raising (δ̂_i = max(δ̂_i, δ̂_{i+1})), so δ̂_i ≥ δ(ε_i) at every grid point.
// The masses are (n grid points, D = e^d)
//
//	p_iLo = 1 − δ̂_1 − (δ̂_1 − δ̂_2)/(D − 1)
//	p_k   = (D·(δ̂_{k−1} − δ̂_k) − (δ̂_k − δ̂_{k+1}))/(D − 1)   (1 < k < n)
//	p_iHi = (δ̂_{n−1} − δ̂_n)/(1 − 1/D)
//	inf   = δ̂_n
//
// (one point: p = 1 − δ̂_1, inf = δ̂_1). Their profile equals δ̂_i at every
// grid point, is linear in e^ε between grid points and below the first
// (through (e^ε = 0, 1): the masses add up to 1), and constant (= δ̂_n)
// above the last. The true δ is convex in e^ε (a supremum of functions
// linear in e^ε), ≤ 1, and non-increasing, so it lies below each of these
// chords and below δ̂_n beyond the grid: the discretisation dominates the
// pair. Negative masses (possible only through rounding) are raised to 0,
// which only raises the profile, and a bound on the rounding error of the
// masses (a few units of roundoff times Σ(δ̂_{k−1} − δ̂_k)/(D − 1) ≤
// 1/(D − 1)) is added to inf, so the computed measure dominates too.
//
// Accuracy: for ε between grid points ε_i ≤ ε < ε_{i+1} the profile is at
// most δ̂_i ≤ δ(ε − d) (plus δ's error bound), i.e. the discretisation is
// dominated by the true PLD shifted up by d.
func ctdPMF(delta func(eps float64) (float64, float64), iLo, iHi int, d float64) (pldPMF, error) {
	n := iHi - iLo + 1
	if n < 1 {
		return pldPMF{}, fmt.Errorf("dp: PLD grid [%d, %d] is empty", iLo, iHi)
	}
	if n > pldMaxBins {
		return pldPMF{}, errGridTooFine{float64(n)}
	}
	ds := make([]float64, n)
	for i := range ds {
		v, e := delta(float64(iLo+i) * d)
		if math.IsNaN(v) || math.IsNaN(e) {
			return pldPMF{}, fmt.Errorf("dp: PLD: δ(%g) is NaN", float64(iLo+i)*d)
		}
		ds[i] = math.Min(1, math.Max(0, v+e))
	}
	for i := n - 2; i >= 0; i-- {
		ds[i] = math.Max(ds[i], ds[i+1])
	}
	out := pldPMF{lo: iLo, p: make([]float64, n), d: d}
	if n == 1 {
		out.p[0] = 1 - ds[0]
		out.inf = ds[0] + 2*unitRoundoff
		return out, nil
	}
	em := math.Expm1(d)
	ed := em + 1
	// D_k = δ̂_k − δ̂_{k+1} ≥ 0 exactly, as hi + lo (twoSum).
	dh, dl := make([]float64, n-1), make([]float64, n-1)
	for k := range dh {
		dh[k], dl[k] = twoSum(ds[k], -ds[k+1])
	}
	// Rounding: every D_k is exact; the second differences D_{k−1} − D_k
	// are computed with relative error ≤ 2u (their hi parts are close, so
	// mostly subtracted exactly), and each mass with a few more roundings
	// of its terms, so |p̂_k − p_k| ≤ 4u·(terms), summed into slack.
	var slack float64
	for k := range out.p {
		var v, mag float64
		switch k {
		case 0:
			a, b := twoSum(1, -ds[0])
			v = a + (b - (dh[0]+dl[0])/em)
			mag = 1 + (dh[0]+dl[0])/em + math.Abs(v)
		case n - 1:
			v = (dh[n-2] + dl[n-2]) * ed / em
			mag = v
		default:
			sec := (dh[k-1] - dh[k]) + (dl[k-1] - dl[k]) // D_{k−1} − D_k
			v = dh[k-1] + (dl[k-1] + sec/em)             // D_{k−1} + (D_{k−1} − D_k)/(D − 1)
			mag = dh[k-1] + math.Abs(sec)/em + math.Abs(v)
		}
		slack += mag
		out.p[k] = math.Max(0, v)
	}
	out.inf = ds[n-1] + 4*unitRoundoff*slack
	return out, nil
}

// twoSum returns s = fl(a + b) and the exact error e, a + b = s + e
// (Knuth).
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// pldSource is one mechanism whose PLD the accountant can build, in each
// direction of the neighbouring relation: dir 0 compares the output on the
// input that holds the unit (P) with the one that lacks it (Q), dir 1 the
// reverse.
type pldSource interface {
	// key identifies the mechanism (equal keys: equal PLDs).
	key() string
	// symmetric reports whether both directions have the same PLD.
	symmetric() bool
	// lossRange returns the range of losses to discretise in direction
	// dir (the accuracy, not the validity, depends on it).
	lossRange(dir int) (lo, hi float64)
	// build returns the discretised PLD of direction dir on the grid d·ℤ.
	build(dir int, d float64) (pldPMF, error)
}

// pldTailSigmas is how many noise standard deviations beyond the extreme
// means the discretised loss range reaches (Φ(−9) ≈ 1e-19); the mass beyond
// still counts (in the last grid point's δ), so this sets accuracy only.
const pldTailSigmas = 9

// gridRange returns the grid indices covering [lo, hi].
func gridRange(lo, hi, d float64) (int, int, error) {
	a, b := math.Floor(lo/d), math.Ceil(hi/d)
	if math.IsNaN(a) || math.IsNaN(b) || b-a+1 > pldMaxBins || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0, 0, errGridTooFine{b - a + 1}
	}
	return int(a), int(b), nil
}

// gaussSrc is the Gaussian mechanism with GDP parameter mu (noise multiplier
// 1/mu): the pair N(mu, 1) vs N(0, 1), symmetric. Its profile is the exact
// GDP δ (GDPDelta), extended to ε < 0.
type gaussSrc struct{ mu float64 }

func (g gaussSrc) key() string     { return "gauss:" + strconv.FormatFloat(g.mu, 'g', -1, 64) }
func (g gaussSrc) symmetric() bool { return true }
func (g gaussSrc) lossRange(int) (float64, float64) {
	m := g.mu * g.mu / 2
	return m - pldTailSigmas*g.mu, m + pldTailSigmas*g.mu
}

func (g gaussSrc) build(dir int, d float64) (pldPMF, error) {
	lo, hi := g.lossRange(dir)
	iLo, iHi, err := gridRange(lo, hi, d)
	if err != nil {
		return pldPMF{}, err
	}
	return ctdPMF(func(eps float64) (float64, float64) { return gaussProfile(g.mu, eps) }, iLo, iHi, d)
}

// gaussProfile returns δ(ε) of N(mu,1) vs N(0,1) for any real ε, with an
// absolute error bound.
//
// The connect-the-dots construction needs δ to a small absolute error only,
// so the direct form Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) is used, in logs
// (ln Φ is accurate to a few ulps, also in the far tails), with the bound
// 1e-13 of the two terms.
func gaussProfile(mu, eps float64) (float64, float64) {
	la, lb := logNormCDF(-eps/mu+mu/2), eps+logNormCDF(-eps/mu-mu/2)
	a, b := math.Exp(la), math.Exp(lb)
	return a - b, profileErr(a, b, la, lb, eps)
}

// profileErr bounds the absolute error of a − b with a = e^{la}, b = e^{lb}
// computed from ln Φ values (a few ulps each) and, for b, ε: the exponent's
// absolute error (16u of its parts' magnitudes, a 4× margin) becomes a
// relative error of e^{la} and e^{lb}, plus the subtraction's.
func profileErr(a, b, la, lb, eps float64) float64 {
	var ea, eb float64 // a term that is exactly 0 (ln = −∞) has no error
	if a > 0 {
		ea = (math.Abs(la) + 4) * a
	}
	if b > 0 {
		eb = (math.Abs(lb) + 2*math.Abs(eps) + 4) * b
	}
	return 16*unitRoundoff*(ea+eb) + 1e-300
}

// pureSrc is an ε-DP mechanism: it is dominated by randomized response, the
// pair P = (e^ε, 1)/(1+e^ε), Q = (1, e^ε)/(1+e^ε) on two points (Kairouz,
// Oh & Viswanath 2015), whose PLD has mass e^ε/(1+e^ε) at +ε and
// 1/(1+e^ε) at −ε. On the grid both atoms are rounded up (raising a loss
// raises the profile everywhere), the result dominating any ε-DP pair.
type pureSrc struct{ eps float64 }

func (s pureSrc) key() string                      { return "pure:" + strconv.FormatFloat(s.eps, 'g', -1, 64) }
func (s pureSrc) symmetric() bool                  { return true }
func (s pureSrc) lossRange(int) (float64, float64) { return -s.eps, s.eps }
func (s pureSrc) build(_ int, d float64) (pldPMF, error) {
	if _, _, err := gridRange(-s.eps, s.eps, d); err != nil {
		return pldPMF{}, err
	}
	lo, hi := int(math.Ceil(-s.eps/d)), int(math.Ceil(s.eps/d))
	out := pldPMF{lo: lo, p: make([]float64, hi-lo+1), d: d}
	out.p[0] += 1 / (1 + math.Exp(s.eps))
	out.p[len(out.p)-1] += 1 / (1 + math.Exp(-s.eps))
	out.inf = 4 * unitRoundoff
	return out, nil
}

// mixPair is the pair of Gaussian mixtures with common noise std s
//
//	P = Σ_k w_k·N(pm_k, s²),  Q = Σ_j v_j·N(qm_j, s²)
//
// with every mean of P ≤ 0 ≤ every mean of Q (ln weights pl, ql; weights
// summing to 1). Then p/φ_s is non-increasing and q/φ_s non-decreasing, so
// the loss L(x) = ln p(x) − ln q(x) is non-increasing in x (strictly unless
// both are N(0, s²)): {L > ε} = {x < x_ε}, and
//
//	δ(ε) = P(X < x_ε) − e^ε·Q(X < x_ε),   L(x_ε) = ε.
//
// The subsampled Gaussian is the case P = (1−q)N(0) + qN(−1), Q = N(0)
// (and its reverse); the group pair of GroupPair has binomial weights.
//
// tp and tq (normally 0) are masses moved to points outside both supports:
// P̂ = P + tp·δ_⊥P and Q̂ = Q + tq·δ_⊥Q with P's and Q's weights then
// summing to 1 − tp and 1 − tq (GroupPair.pldPair's truncated binomial
// tails). P̂'s mass at ⊥P has loss +∞ (it adds tp to δ at every ε), Q̂'s
// at ⊥Q is never seen under P̂ (E_P̂[e^{−L}] = 1 − tq).
type mixPair struct {
	s      float64
	pm, pl []float64
	qm, ql []float64
	tp, tq float64
}

// newMixPair builds the pair from P's and Q's means and weights, dropping
// zero weights.
func newMixPair(s float64, pm, pw, qm, qw []float64) mixPair {
	m := mixPair{s: s}
	for i, w := range pw {
		if w > 0 {
			m.pm, m.pl = append(m.pm, pm[i]), append(m.pl, math.Log(w))
		}
	}
	for i, w := range qw {
		if w > 0 {
			m.qm, m.ql = append(m.qm, qm[i]), append(m.ql, math.Log(w))
		}
	}
	return m
}

// swap returns the reverse pair (Q, P), mirrored (x → −x) so that the
// means keep their order: δ of the result is δ_{Q‖P}.
func (m mixPair) swap() mixPair {
	neg := func(a []float64) []float64 {
		out := make([]float64, len(a))
		for i, v := range a {
			out[i] = -v
		}
		return out
	}
	return mixPair{s: m.s, pm: neg(m.qm), pl: m.ql, qm: neg(m.pm), ql: m.pl, tp: m.tq, tq: m.tp}
}

func (m mixPair) key() string {
	b := []byte("mix:" + strconv.FormatFloat(m.s, 'g', -1, 64) + "/" +
		strconv.FormatFloat(m.tp, 'g', -1, 64) + "/" + strconv.FormatFloat(m.tq, 'g', -1, 64))
	for _, a := range [][]float64{m.pm, m.pl, m.qm, m.ql} {
		b = append(b, '|')
		for _, v := range a {
			b = strconv.AppendFloat(append(b, ','), v, 'g', -1, 64)
		}
	}
	return string(b)
}

// logMix returns ln Σ_i e^{l_i}·φ_s(x − m_i) up to the common factor
// 1/(s√(2π)), and the posterior mean of the m_i given x.
//
// Terms more than logMixSkip nats below the largest are skipped (no exp):
// each is below e^{−logMixSkip} of the largest, so with at most 1000
// components (GroupPair.Validate) the omitted part is below
// 1000·e^{−60} ≈ 9e-24 of the sum, far below the unit roundoff that every
// caller's error bound already carries per component. The exponents are a
// multiply-add each, so a mixture of many binomial components (most of
// them negligible at any x) costs a few exps instead of one per
// component (issue 39's speed item).
func logMix(x, s float64, means, logw []float64) (float64, float64) {
	inv := 1 / (s * s)
	best := math.Inf(-1)
	for i, mu := range means {
		d := x - mu
		if v := logw[i] - d*d*inv/2; v > best {
			best = v
		}
	}
	var sum, mean float64
	for i, mu := range means {
		d := x - mu
		v := logw[i] - d*d*inv/2 - best
		if v < -logMixSkip {
			continue
		}
		e := math.Exp(v)
		sum += e
		mean += e * mu
	}
	return best + math.Log(sum), mean / sum
}

// logMixSkip is how far below the largest term (in nats) logMix and
// logMixCDF skip a component.
const logMixSkip = 60

// loss returns L(x) and L'(x) = (E_P[mean | x] − E_Q[mean | x])/s² ≤ 0.
func (m mixPair) loss(x float64) (float64, float64) {
	lp, mp := logMix(x, m.s, m.pm, m.pl)
	lq, mq := logMix(x, m.s, m.qm, m.ql)
	return lp - lq, (mp - mq) / (m.s * m.s)
}

// lossLimits returns inf L and sup L (possibly ∓Inf): as x → +∞ the
// largest means dominate, as x → −∞ the smallest.
func (m mixPair) lossLimits() (lo, hi float64) {
	argmax := func(a []float64) int {
		b := 0
		for i, v := range a {
			if v > a[b] {
				b = i
			}
		}
		return b
	}
	argmin := func(a []float64) int {
		b := 0
		for i, v := range a {
			if v < a[b] {
				b = i
			}
		}
		return b
	}
	pMax, qMax := argmax(m.pm), argmax(m.qm)
	pMin, qMin := argmin(m.pm), argmin(m.qm)
	lo, hi = math.Inf(-1), math.Inf(1)
	if m.pm[pMax] == m.qm[qMax] { // both top means equal (0): L → ln(w/v)
		lo = m.pl[pMax] - m.ql[qMax]
	}
	if m.pm[pMin] == m.qm[qMin] {
		hi = m.pl[pMin] - m.ql[qMin]
	}
	return lo, hi
}

// lossRange returns the losses at P's tails: x = min mean − 9s and max
// mean + 9s, for a pair of more than three components (a group pair)
// clipped to [−pldMaxLoss, pldMaxLoss]. The range sets accuracy
// only (ctdPMF's measure dominates the pair on any grid range: below the
// first point its chord runs to (e^ε = 0, 1), above the last the rest of δ
// is an atom at +∞), so the clip is valid; it keeps a build at a tiny
// noise level (a calibration's first bisection steps, where the loss
// spans hundreds of nats) from costing 10⁵ profile evaluations, and costs
// accuracy only where one step's δ(pldMaxLoss) is not negligible, i.e.
// where ε is far beyond any target.
func (m mixPair) lossRange() (float64, float64) {
	lo, hi := m.pm[0], m.pm[0]
	for _, v := range m.pm {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	a, _ := m.loss(hi + pldTailSigmas*m.s)
	b, _ := m.loss(lo - pldTailSigmas*m.s)
	if len(m.pm)+len(m.qm) > 3 { // group pairs; the sampled Gaussian keeps its full range
		a, b = math.Max(a, -pldMaxLoss), math.Min(b, pldMaxLoss)
	}
	return a, b
}

// pldMaxLoss (nats) bounds the loss range a mixture pair is discretised
// on (see mixPair.lossRange).
const pldMaxLoss = 60

// invLoss returns x with L(x) = eps, for inf L < eps < sup L, by
// safeguarded Newton iteration on a bracket (closed form for the
// one-sided subsampled Gaussian).
func (m mixPair) invLoss(eps float64) float64 {
	s2 := m.s * m.s
	if len(m.pm) == 2 && len(m.qm) == 1 && m.qm[0] == 0 && m.pm[0] == 0 && m.pm[1] < 0 {
		// P = (1−q)N(0) + qN(−c), Q = N(0): L = ln(1−q + q·e^{−c(2x+c)/(2s²)}).
		c, lq := -m.pm[1], m.pl[1]
		// q·e^{t} = e^ε − (1 − q), t = −c(2x+c)/(2s²); above ε = 1 as
		// ε + ln(1 − (1−q)e^{−ε}), which does not overflow past 709 nats.
		u := math.Log(math.Expm1(eps)+math.Exp(lq)) - lq
		if eps > 1 {
			u = eps + math.Log1p(-math.Exp(math.Log1p(-math.Exp(lq))-eps)) - lq
		}
		return -(u*s2/c + c/2)
	}
	if len(m.pm) == 1 && m.pm[0] == 0 && len(m.qm) == 2 && m.qm[0] == 0 && m.qm[1] > 0 {
		// P = N(0), Q = (1−q)N(0) + qN(c): L = −ln(1−q + q·e^{c(2x−c)/(2s²)}).
		c, lq := m.qm[1], m.ql[1]
		u := math.Log(math.Expm1(-eps)+math.Exp(lq)) - lq
		return u*s2/c + c/2
	}
	// Bracket: L(a) > eps > L(b).
	a, b := -m.s, m.s
	for step := m.s; ; step *= 2 {
		if la, _ := m.loss(a); la > eps {
			break
		}
		a -= step
		if math.IsInf(a, 0) {
			return a
		}
	}
	for step := m.s; ; step *= 2 {
		if lb, _ := m.loss(b); lb < eps {
			break
		}
		b += step
		if math.IsInf(b, 0) {
			return b
		}
	}
	return m.newton(eps, a, b, (a+b)/2)
}

// newton returns the root of L(x) = eps in the bracket L(a) > eps > L(b)
// by Newton's iteration from x, safeguarded by bisection, to near machine
// precision.
func (m mixPair) newton(eps, a, b, x float64) float64 {
	for it := 0; it < 200 && b-a > 1e-15*(math.Abs(a)+math.Abs(b)+m.s); it++ {
		l, dl := m.loss(x)
		if l > eps {
			a = x
		} else {
			b = x
		}
		nx := x - (l-eps)/dl
		if !(nx > a && nx < b) || dl == 0 {
			nx = (a + b) / 2
		}
		if nx == x {
			break
		}
		x = nx
	}
	return x
}

// logMixCDF returns ln Σ_i e^{l_i}·Φ((x − m_i)/s). Each term has the
// cheap upper bound l_i + ln Φ(t) ≤ l_i − t²/2 − ln 2 for t = (x − m_i)/s ≤ 0
// (Φ(t) ≤ e^{−t²/2}/2 there) and ≤ l_i otherwise; the term with the largest
// bound is computed first, and a term whose bound is more than logMixSkip
// nats below the largest computed term is skipped, as in logMix: the
// omitted part is below 1000·e^{−60} of the sum.
func logMixCDF(x, s float64, means, logw []float64) float64 {
	var buf [64]float64
	bounds := buf[:0]
	if len(means) > len(buf) {
		bounds = make([]float64, 0, len(means))
	}
	top := 0
	for i, mu := range means {
		u := logw[i]
		if t := (x - mu) / s; t < 0 {
			u -= t*t/2 + math.Ln2
		}
		bounds = append(bounds, u)
		if u > bounds[top] {
			top = i
		}
	}
	best := logw[top] + logNormCDF((x-means[top])/s)
	first := best
	for i, mu := range means {
		if i == top || bounds[i] < best-logMixSkip {
			continue
		}
		t := logw[i] + logNormCDF((x-mu)/s)
		bounds[i] = t
		best = math.Max(best, t)
	}
	if math.IsInf(best, -1) {
		return best
	}
	sum := math.Exp(first - best)
	for i := range means {
		if i != top && bounds[i] >= best-logMixSkip {
			sum += math.Exp(bounds[i] - best)
		}
	}
	return best + math.Log(sum)
}

// invLossNear returns x with L(x) = eps given a point x0 where L(x0) =
// l0 < eps and L'(x0) = dl0 (the previous grid point's last Newton
// evaluation), and the same for the returned root. The root lies left of
// x0 (L is non-increasing). Newton's iteration runs from x0 and stops when
// its step falls below 1e-9·s (quadratic convergence puts the next error
// near 1e-18·s; δ is stationary at x_ε, so its error is of second order in
// that); a step that leaves the bracket, a non-negative slope or more than
// 40 iterations fall back to invLoss's search from scratch, so the root is
// always found. Typically two loss evaluations per grid point.
func (m mixPair) invLossNear(eps, x0, l0, dl0 float64) (x, l, dl float64) {
	a, b := math.Inf(-1), x0 // L(a) > eps > L(b) once a is finite
	x, l, dl = x0, l0, dl0
	for it := 0; it < 40; it++ {
		if !(dl < 0) || math.IsNaN(l) {
			break
		}
		nx := x - (l-eps)/dl
		if math.IsInf(a, -1) {
			if !(nx < b) {
				break
			}
		} else if !(nx > a && nx < b) {
			nx = (a + b) / 2
		}
		if math.Abs(nx-x) <= 1e-9*m.s {
			return nx, l, dl
		}
		x = nx
		l, dl = m.loss(x)
		if l > eps {
			a = x
		} else {
			b = x
		}
	}
	x = m.invLoss(eps)
	l, dl = m.loss(x)
	return x, l, dl
}

// profile returns δ_{P‖Q}(ε) and an absolute error bound (profileErr, plus
// the mixture sums' rounding). x_ε is found to near machine
// precision; δ(ε) = max_x P(X<x) − e^ε Q(X<x) is stationary at x_ε, so the
// error from x_ε is of second order.
func (m mixPair) profile(eps float64) (float64, float64) {
	lo, hi := m.lossLimits()
	if eps >= hi {
		// No finite loss reaches ε: only the truncated tail at +∞ counts.
		return m.tp, 4 * unitRoundoff * m.tp
	}
	if eps <= lo {
		// P̂(ℝ ∪ ⊥P) − e^ε·Q(ℝ) = 1 − e^ε(1 − tq).
		v := -math.Expm1(eps) + math.Exp(eps)*m.tq
		return v, 4 * unitRoundoff * (v + math.Exp(eps)*m.tq)
	}
	return m.profileAt(eps, m.invLoss(eps))
}

// profileAt is profile with the root x = x_ε of L(x) = ε given (eps
// strictly between the loss limits).
func (m mixPair) profileAt(eps, x float64) (float64, float64) {
	lp := logMixCDF(x, m.s, m.pm, m.pl)
	lq := eps + logMixCDF(x, m.s, m.qm, m.ql)
	a, b := math.Exp(lp), math.Exp(lq)
	// The mixture sums add a relative error of (components)·u to each term.
	k := float64(len(m.pm) + len(m.qm))
	return a - b + m.tp, profileErr(a, b, lp, lq, eps) + 4*k*unitRoundoff*(a+b+m.tp)
}

// mixSrc is a mixPair as a pldSource: dir 0 is P‖Q, dir 1 is Q‖P.
type mixSrc struct{ pair, rev mixPair }

func newMixSrc(p mixPair) mixSrc { return mixSrc{pair: p, rev: p.swap()} }

func (m mixSrc) key() string     { return m.pair.key() }
func (m mixSrc) symmetric() bool { return false }
func (m mixSrc) dirPair(dir int) mixPair {
	if dir == 0 {
		return m.pair
	}
	return m.rev
}
func (m mixSrc) lossRange(dir int) (float64, float64)     { return m.dirPair(dir).lossRange() }
func (m mixSrc) build(dir int, d float64) (pldPMF, error) { return m.dirPair(dir).build(d) }

// build discretises the pair on the grid d·ℤ over its loss range.
func (p mixPair) build(d float64) (pldPMF, error) {
	lo, hi := p.lossRange()
	iLo, iHi, err := gridRange(lo, hi, d)
	if err != nil {
		return pldPMF{}, err
	}
	// Nearly all of δ at the top of the range (a noise far too small for
	// the group): every ε ≤ hi has δ(ε) ≥ δ(hi) ≥ 1 − 1e-12 (δ is
	// non-increasing), so the measure with all its mass at +∞, which
	// dominates every pair, overstates δ by at most 1e-12 up to hi, and
	// ctdPMF would put δ̂(hi) there anyway. It saves discretising a range of
	// ±pldMaxLoss nats point by point (16 s for R = 169 at z = 0.001).
	if len(p.pm)+len(p.qm) > 3 {
		if v, e := p.profile(float64(iHi) * d); v-e >= 1-1e-12 {
			return pldPMF{lo: 0, p: []float64{0}, d: d, inf: 1}, nil
		}
	}
	return ctdPMF(p.sweepProfile(), iLo, iHi, d)
}

// sweepProfile returns profile as a function for ctdPMF, which asks for ε
// in increasing order: each root x_ε is searched from the previous one
// (invLossNear). Any other order falls back to a search from scratch, so
// the values do not depend on the order.
func (m mixPair) sweepProfile() func(eps float64) (float64, float64) {
	if len(m.pm)+len(m.qm) <= 3 { // invLoss has the closed forms
		return m.profile
	}
	lo, hi := m.lossLimits()
	prevEps, prevX, prevL, prevDL := math.NaN(), math.NaN(), math.NaN(), math.NaN()
	return func(eps float64) (float64, float64) {
		if eps >= hi || eps <= lo {
			return m.profile(eps)
		}
		var x float64
		if eps > prevEps && prevL < eps {
			x, prevL, prevDL = m.invLossNear(eps, prevX, prevL, prevDL)
		} else {
			x = m.invLoss(eps)
			prevL, prevDL = m.loss(x)
		}
		prevEps, prevX = eps, x
		return m.profileAt(eps, x)
	}
}

// sgmPair returns the Poisson-subsampled Gaussian's pair with rate q and
// noise multiplier z (sensitivity 1): P = (1−q)N(0, z²) + qN(−1, z²), the
// output with the record, against Q = N(0, z²), without it.
func sgmPair(q, z float64) mixPair {
	return newMixPair(z, []float64{0, -1}, []float64{1 - q, q}, []float64{0}, []float64{1})
}
