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

// maxIntOrder bounds the integer orders summed term by term.
const maxIntOrder = 1 << 16

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

// logAInt is ln A_α for integer α ≥ 2 (Mironov et al. 2019, eq. for integer
// orders; Opacus _compute_log_a_int), as a two-pass log-sum-exp.
func logAInt(q, z float64, alpha int) float64 {
	logQ, log1mQ := math.Log(q), math.Log1p(-q)
	inv2z2 := 1 / (2 * z * z)
	lfA := logFactorial(alpha)
	term := func(i int) float64 {
		fi := float64(i)
		return lfA - logFactorial(i) - logFactorial(alpha-i) +
			fi*logQ + float64(alpha-i)*log1mQ + (fi*fi-fi)*inv2z2
	}
	maxT := math.Inf(-1)
	for i := 0; i <= alpha; i++ {
		if t := term(i); t > maxT {
			maxT = t
		}
	}
	if math.IsInf(maxT, 1) {
		return maxT
	}
	// Terms below e^-50 of the largest change the sum by less than
	// (α+1)·e^-50, far below rounding: skip their exp.
	var s float64
	for i := 0; i <= alpha; i++ {
		if d := term(i) - maxT; d > -50 {
			s += math.Exp(d)
		}
	}
	return maxT + math.Log(s)
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
