package dp

import (
	"math"
	"sync"
)

// This file holds the pure Rényi-DP mathematics; the RDP accountant is a thin
// ledger over it (as Opacus' analysis/rdp.py is under its accountant).

// GaussianRDP returns the Rényi DP of order alpha of the Gaussian mechanism
// with noise multiplier z (std / L2 sensitivity): α/(2z²) (Mironov 2017,
// Corollary 3). It returns NaN for alpha ≤ 1 or z ≤ 0.
func GaussianRDP(alpha, multiplier float64) float64 {
	if !(alpha > 1) || !(multiplier > 0) {
		return math.NaN()
	}
	return alpha / (2 * multiplier * multiplier)
}

// SubsampledGaussianRDP returns the Rényi DP of order alpha > 1 of one step
// of the Poisson-subsampled Gaussian mechanism with sampling rate q and noise
// multiplier z, for add/remove neighbours: ln(A_α)/(α−1), where A_α is the
// α-th moment of the likelihood ratio of (1−q)N(0,z²) + qN(1,z²) against
// N(0,z²).
//
// It follows Mironov, Talwar & Zhang (2019), "Rényi Differential Privacy of
// the Sampled Gaussian Mechanism", §3.3 — the same computation as
// Opacus/TF-Privacy's _compute_log_a_int (integer α: the finite binomial sum
// A_α = Σ_{i=0..α} C(α,i) q^i (1−q)^{α−i} exp((i²−i)/(2z²))) and
// _compute_log_a_frac (fractional α: the two-sided erfc series) — in log
// space with a stable log-add. Two deliberate differences from those ports
// make the fractional series never optimistic: it does not stop before
// passing i > α (the bulk of the binomial mass), and it adds the magnitude of
// the last computed (alternating, decreasing) term as a tail allowance. A
// numerical failure (a negative partial result, no convergence) yields +Inf.
// Integer orders up to 2²⁴ sum A_α − 1 rather than A_α (full relative
// accuracy when A_α is within rounding of 1) and skip negligible stretches of
// the sum under certified bounds (see logAInt), so large orders are cheap:
// a few µs to a few tens of µs at α = 1e5. Fractional orders cost O(α) erfc
// evaluations (~10 ms at α = 1e5) and give +Inf above about 1e6, where the
// series is cut off.
//
// The value is D_α(μ₁‖μ₀) for μ₀ = N(0, z²), μ₁ = (1−q)N(0, z²) + qN(1, z²).
// Mironov et al. show this direction dominates D_α(μ₀‖μ₁); like Opacus,
// TF-Privacy and dp_accounting we use it at fractional orders too (checked
// numerically for the reference cases in the tests).
//
// Special cases: q = 1 gives α/(2z²) (no subsampling); invalid arguments give
// NaN.
func SubsampledGaussianRDP(q, multiplier, alpha float64) float64 {
	switch {
	case math.IsNaN(q) || q <= 0 || q > 1, !(multiplier > 0), !(alpha > 1):
		return math.NaN()
	case math.IsInf(multiplier, 1):
		return 0
	case q == 1:
		return alpha / (2 * multiplier * multiplier)
	case math.IsInf(alpha, 1):
		return math.Inf(1)
	}
	var logA float64
	if alpha == math.Trunc(alpha) && alpha <= maxIntOrder {
		logA = logAInt(q, multiplier, int(alpha))
	} else {
		logA = logAFrac(q, multiplier, alpha)
	}
	if math.IsNaN(logA) {
		return math.Inf(1)
	}
	return math.Max(logA, 0) / (alpha - 1)
}

// maxIntOrder bounds the integer orders summed with the binomial formula
// (logAInt); larger orders go through the fractional series. (i² must stay
// exact in float64 for i ≤ α, and the sum is truncated with certified
// bounds, so its cost grows far slower than α.)
const maxIntOrder = 1 << 24

// logFactorials caches ln(k!) for k ≤ logFactCache.
const logFactCache = 4096

var (
	logFactOnce  sync.Once
	logFactTable []float64
)

func logFactorial(k int) float64 {
	logFactOnce.Do(func() {
		logFactTable = make([]float64, logFactCache+1)
		for i := range logFactTable {
			v, _ := math.Lgamma(float64(i) + 1)
			logFactTable[i] = v
		}
	})
	if k <= logFactCache {
		return logFactTable[k]
	}
	v, _ := math.Lgamma(float64(k) + 1)
	return v
}

// stirlingErrSmall holds σ(m) = ln m! − (m+½)ln m + m − ½ln(2π) for
// m = 1 … 15 (mpmath, 40 digits).
var stirlingErrSmall = [16]float64{
	0, // unused
	0.08106146679532725822,
	0.041340695955409294094,
	0.027677925684998339149,
	0.020790672103765093112,
	0.016644691189821192163,
	0.013876128823070747999,
	0.011896709945891770095,
	0.010411265261972096497,
	0.0092554621827127329177,
	0.0083305634333628712565,
	0.007573675487951840795,
	0.0069428401072095298657,
	0.0064089941880042070684,
	0.0059513701127588477356,
	0.005554733551962801371,
}

// stirlingErr returns σ(m) = ln m! − (m+½)ln m + m − ½ln(2π) for m ≥ 1:
// a table below 16, else the Stirling series to the m⁻⁹ term (truncation
// error below 691/(360360 m¹¹) < 2e-16).
func stirlingErr(m float64) float64 {
	if m < 16 {
		return stirlingErrSmall[int(m)]
	}
	r := 1 / (m * m)
	return (1.0/12 - r*(1.0/360-r*(1.0/1260-r*(1.0/1680-r/1188)))) / m
}

// logBinom returns ln C(n, k) for 0 ≤ k ≤ n, to a few ulps of the result
// rather than of ln n! (a difference of three log-gammas loses ~n·ln n·2⁻⁵²
// absolutely, 3e-10 at n = 1e5). With k ≤ n/2 (C is symmetric),
//
//	ln C(n,k) = k ln(n/k) − (n−k) ln(1−k/n) + ½ ln(n/(2π k (n−k))) + σ(n) − σ(k) − σ(n−k).
func logBinom(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	if 2*k > n {
		k = n - k
	}
	if k == 0 {
		return 0
	}
	fn, fk := float64(n), float64(k)
	fm := fn - fk
	return fk*math.Log(fn/fk) - fm*math.Log1p(-fk/fn) +
		0.5*math.Log(fn/(2*math.Pi*fk*fm)) +
		stirlingErr(fn) - stirlingErr(fk) - stirlingErr(fm)
}

// logExpm1 returns ln(eˣ − 1) for x ≥ 0 (−Inf at 0).
func logExpm1(x float64) float64 {
	if x > math.Ln2 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// log1pExp returns ln(1 + eˣ).
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// logAInt is ln A_α for integer α = n ≥ 2 (Mironov et al. 2019, integer
// orders; Opacus _compute_log_a_int). Since the binomial weights
// p_i = C(n,i) q^i (1−q)^{n−i} sum to 1,
//
//	A_n = Σ_i p_i e^{c_i} = 1 + S,  S = Σ_{i≥2} p_i (e^{c_i} − 1),  c_i = (i²−i)/(2z²),
//
// and it returns log1p(S), with S summed in log space. Summing S rather than
// A keeps full relative accuracy when A is within rounding of 1 (tiny q,
// large z, large n), where ln A itself is tiny and a few ulps of the i = 0
// and i = 1 terms would be a large relative error in the RDP.
//
// The sum is not evaluated term by term over all n + 1 terms: see
// sgmIntSum.logSum, which sums exactly where the terms matter and adds
// certified upper bounds elsewhere, so the result is never below the exact
// sum (beyond rounding) and exceeds it by less than 1e-20 relative.
func logAInt(q, z float64, n int) float64 {
	s := sgmIntSum{n: n, fn: float64(n), lq: math.Log(q), l1q: math.Log1p(-q), w: 1 / (2 * z * z)}
	if c := s.c(n); math.IsInf(c, 1) || math.IsNaN(c) {
		return math.Inf(1) // 1/(2z²) overflows: no finite bound
	}
	return log1pExp(s.logSum())
}

// sgmIntSum evaluates the terms of logAInt. With the (log) terms
//
//	t(i) = ln p_i + c_i            (the terms of A)
//	u(i) = ln p_i + ln(e^{c_i}−1)  (the terms of S; u ≤ t)
//
// and d(i) = t(i+1) − t(i) = ln((n−i)/(i+1)) + ln(q/(1−q)) + i/z², the
// second difference Δ(i) = d(i+1) − d(i) = ln(1 − 1/(n−i)) − ln(1 + 1/(i+1))
// + 1/z² is a concave function of i (both logarithms are), largest at
// i = (n−2)/2. So {i : Δ(i) > 0} is an interval [ia, ib] (possibly empty),
// and t is concave on [0, ia+1], convex on [ia, ib+2] and concave on
// [ib+1, n]. On a concave stretch t lies below its end tangents, on a
// convex one below its chord, so the sum of e^t over any sub-stretch is
// bounded by a geometric series from two or three evaluations.
type sgmIntSum struct {
	n            int
	fn           float64
	lq, l1q, w   float64 // ln q, ln(1−q), 1/(2z²)
	maxU, thresh float64 // largest exact u so far; bounds below thresh are accepted
	acc          float64 // ln of the running sum
}

// sgmTruncate: a stretch whose bound is below e^-sgmTruncate of the
// largest term of S is not summed term by term; its bound is added instead
// (so the result is high by at most that fraction per stretch, ~1e-22).
const (
	sgmTruncate = 50.0
	sgmExactLen = 16 // stretches this short are summed term by term
)

func (s *sgmIntSum) c(i int) float64 {
	fi := float64(i)
	return (fi*fi - fi) * s.w
}

func (s *sgmIntSum) lp(i int) float64 {
	fi := float64(i)
	return logBinom(s.n, i) + fi*s.lq + (s.fn-fi)*s.l1q
}

func (s *sgmIntSum) t(i int) float64 { return s.lp(i) + s.c(i) }

func (s *sgmIntSum) u(i int) float64 {
	if i < 2 {
		return math.Inf(-1)
	}
	return s.lp(i) + logExpm1(s.c(i))
}

func (s *sgmIntSum) d(i int) float64 {
	fi := float64(i)
	return math.Log((s.fn-fi)/(fi+1)) + s.lq - s.l1q + 2*fi*s.w
}

func (s *sgmIntSum) delta2(i int) float64 {
	fi := float64(i)
	return math.Log1p(-1/(s.fn-fi)) - math.Log1p(1/(fi+1)) + 2*s.w
}

// logSum returns ln S (−Inf when S = 0).
func (s *sgmIntSum) logSum() float64 {
	s.acc = math.Inf(-1)
	s.maxU = math.Inf(-1)
	n := s.n
	if n-1 <= 4*sgmExactLen {
		s.exact(2, n)
		return s.acc
	}
	// The stretches: [2, ia] concave, [ia+1, ib+1] convex, [ib+2, n]
	// concave (or [2, n] concave when Δ ≤ 0 everywhere).
	type stretch struct {
		l, r    int
		concave bool
	}
	var parts []stretch
	m := (n - 2) / 2
	if s.delta2(m+1) > s.delta2(m) && m+1 <= n-2 {
		m++
	}
	if !(s.delta2(m) > 0) {
		parts = []stretch{{2, n, true}}
	} else {
		// Smallest i ≤ m and largest i ≥ m with Δ(i) > 0 (Δ is monotone on
		// each side of m).
		lo, hi := 0, m
		for lo < hi {
			mid := (lo + hi) / 2
			if s.delta2(mid) > 0 {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		ia := lo
		lo, hi = m, n-2
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if s.delta2(mid) > 0 {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		ib := lo
		parts = []stretch{{2, ia, true}, {ia + 1, ib + 1, false}, {ib + 2, n, true}}
	}
	// Estimate the largest term of S from the modes of t on the concave
	// stretches (where d changes sign) and the stretch ends; u peaks at or
	// just after a mode of t. The estimate only sets how much is summed
	// exactly: the result is an upper bound whatever it is.
	try := func(i int) {
		if i >= 2 && i <= n {
			s.maxU = math.Max(s.maxU, s.u(i))
		}
	}
	for i := range parts {
		parts[i].l = max(parts[i].l, 2)
	}
	for _, p := range parts {
		if p.l > p.r {
			continue
		}
		try(p.l)
		try(p.r)
		if p.concave {
			lo, hi := p.l, p.r
			for lo < hi { // first i with d(i) ≤ 0, d non-increasing
				mid := (lo + hi) / 2
				if s.d(mid) <= 0 {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			try(lo)
			try(lo + 1)
		}
	}
	s.thresh = s.maxU - sgmTruncate
	for _, p := range parts {
		if p.l <= p.r {
			s.stretch(p.l, p.r, p.concave)
		}
	}
	return s.acc
}

// exact adds e^{u(i)} for l ≤ i ≤ r.
func (s *sgmIntSum) exact(l, r int) {
	for i := l; i <= r; i++ {
		v := s.u(i)
		s.acc = logAdd(s.acc, v)
		if v > s.maxU {
			s.maxU = v
			s.thresh = v - sgmTruncate
		}
	}
}

// stretch adds the terms l … r of a stretch on which t is concave or
// convex: a bound when it is negligible, else the two halves.
func (s *sgmIntSum) stretch(l, r int, concave bool) {
	if r-l < sgmExactLen {
		s.exact(l, r)
		return
	}
	k := r - l
	tl, tr := s.t(l), s.t(r)
	var b float64
	if concave {
		// Below the tangent at l (going right) and at r (going left).
		b = math.Min(logGeomSum(tl, s.d(l), k), logGeomSum(tr, -s.d(r-1), k))
	} else {
		b = logGeomSum(tl, (tr-tl)/float64(k), k) // below the chord
	}
	if b <= s.thresh { // false for NaN: split
		s.acc = logAdd(s.acc, b)
		return
	}
	mid := l + k/2
	s.stretch(l, mid, concave)
	s.stretch(mid+1, r, concave)
}

// logGeomSum returns ln Σ_{j=0..k} e^{t0 + j·step}.
func logGeomSum(t0, step float64, k int) float64 {
	switch {
	case math.IsNaN(t0) || math.IsNaN(step):
		return math.Inf(1) // no bound: never accepted
	case k == 0 || math.IsInf(t0, -1) && step <= 0:
		return t0
	case step > 0:
		// Reverse: the last term is the largest.
		return t0 + float64(k)*step + logGeomSum(0, -step, k)
	case step == 0:
		return t0 + math.Log(float64(k)+1)
	}
	return t0 + math.Log(-math.Expm1(float64(k+1)*step)) - math.Log(-math.Expm1(step))
}

// logAFrac is ln A_α for any real α > 1 (Mironov et al. 2019, §3.3; Opacus
// _compute_log_a_frac), with the two one-sided series
//
//	a0 = Σ_i C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2z²)} Φ((z0−i)/z)
//	a1 = Σ_i C(α,i) q^{α−i} (1−q)^i e^{(j²−j)/(2z²)} Φ((j−z0)/z),  j = α−i
//
// where z0 = z² ln(1/q − 1) + ½ and C(α,i) is the generalised binomial
// coefficient (its sign alternates once i > α).
func logAFrac(q, z, alpha float64) float64 {
	logQ, log1mQ := math.Log(q), math.Log1p(-q)
	inv2z2 := 1 / (2 * z * z)
	z0 := z*z*(math.Log(1/q-1)) + 0.5
	a0, a1 := math.Inf(-1), math.Inf(-1)
	logCoef, sign := 0.0, 1.0 // C(α,0) = 1
	const (
		relTol   = -30.0     // stop once a term is below e^-30 of the total
		maxTerms = 1_000_000 // then give up: the order becomes +Inf
	)
	for i := 0; i < maxTerms; i++ {
		fi := float64(i)
		j := alpha - fi
		t0 := logCoef + fi*logQ + j*log1mQ
		t1 := logCoef + j*logQ + fi*log1mQ
		s0 := t0 + (fi*fi-fi)*inv2z2 + logNormCDF((z0-fi)/z)
		s1 := t1 + (j*j-j)*inv2z2 + logNormCDF((j-z0)/z)
		if sign > 0 {
			a0 = logAdd(a0, s0)
			a1 = logAdd(a1, s1)
		} else {
			var ok0, ok1 bool
			a0, ok0 = logSub(a0, s0)
			a1, ok1 = logSub(a1, s1)
			if !ok0 || !ok1 {
				return math.NaN()
			}
		}
		// Next generalised binomial coefficient: C(α,i+1) = C(α,i)(α−i)/(i+1).
		f := alpha - fi
		if f == 0 {
			// Integer α: every later coefficient is zero; the sum is exact.
			return logAdd(a0, a1)
		}
		if fi > alpha {
			last := math.Max(s0, s1)
			total := math.Max(logAdd(a0, a1), 0) // A_α ≥ 1
			if last < total+relTol {
				// The remaining terms alternate in sign and decrease in
				// magnitude, so each tail is bounded by its first omitted
				// term, itself below the current one: add that bound
				// (conservative).
				return logAdd(logAdd(a0, a1), last+math.Ln2)
			}
		}
		if f < 0 {
			sign = -sign
		}
		logCoef += math.Log(math.Abs(f)) - math.Log(fi+1)
	}
	return math.NaN()
}

// logAdd returns ln(e^a + e^b).
func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logSub returns ln(e^a − e^b) and false if the result would be negative.
func logSub(a, b float64) (float64, bool) {
	switch {
	case math.IsInf(b, -1):
		return a, true
	case b > a:
		return math.NaN(), false
	case a == b:
		return math.Inf(-1), true
	}
	d := b - a
	if d > -math.Ln2 {
		return a + math.Log(-math.Expm1(d)), true
	}
	return a + math.Log1p(-math.Exp(d)), true
}

// logNormCDF returns ln Φ(x) for the standard normal CDF Φ, accurate in the
// far tails: for x ≥ 0 it uses log1p(−Φ(−x)); for −30 < x < 0 the direct
// log(½·erfc(−x/√2)) (Go's Erfc keeps full relative accuracy there); below,
// the asymptotic series
//
//	ln Φ(x) = −x²/2 − ln(−x) − ½ln(2π) + ln(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − 945/x¹⁰ + 10395/x¹²)
//
// whose truncation error at x = −30 is below 1e-15.
func logNormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x >= 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x > -30:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return x
	}
	r := 1 / (x * x)
	series := 1 + r*(-1+r*(3+r*(-15+r*(105+r*(-945+r*10395)))))
	return -0.5*x*x - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(series)
}
