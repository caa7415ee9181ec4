package dp

import (
	"math"
	"testing"
)

// TestSubsampledGaussianRDPSpecVectors: exact integer-order RDP of the
// sampled Gaussian (Mironov et al. 2019; ProGAP's ε_SGM of Thm 4.2 with its
// typos fixed; the TF-Privacy formula of ASGL's code), against reference
// values computed in float64.
func TestSubsampledGaussianRDPSpecVectors(t *testing.T) {
	for _, tc := range []struct {
		src         string
		alpha, q, z float64
		want        float64
	}{
		{"progap", 2, 0.01, 1.0, 1.7181342207e-4},
		{"progap", 8, 0.01, 1.0, 8.936439076e-4},
		{"progap", 10, 0.05, 2.0, 4.044112498e-3},
		{"progap", 32, 0.0129, 1.0, 11.5091324205},
		{"asgl", 2, 0.01, 4, 6.44942509418e-06},
		{"asgl", 8, 0.01, 4, 2.58991230124e-05},
		{"asgl", 4, 0.05, 2, 1.46256321295e-03},
		{"asgl", 2, 0.1, 1, 0.0170368632362},
	} {
		got := SubsampledGaussianRDP(tc.q, tc.z, tc.alpha)
		assertRel(t, tc.src, got, tc.want, 1e-9)
		// The fractional-order series must agree at integer orders.
		assertRel(t, tc.src+" (fractional series)", logAFrac(tc.q, tc.z, tc.alpha)/(tc.alpha-1), tc.want, 1e-9)
	}
	// At α = 2 the sum has the closed form log(0.99·1.01 + 1e-4·e).
	assertRel(t, "alpha=2 closed form", SubsampledGaussianRDP(0.01, 1, 2), math.Log(0.99*1.01+1e-4*math.E), 1e-12)
	// The Thm 4.2 typo (exp(1/(2z²)) for the l=2 term) would give 0.000493.
	if v := SubsampledGaussianRDP(0.01, 1, 8); v < 8.9e-4 {
		t.Errorf("RDP(8; 0.01, 1) = %v: looks like the Thm 4.2 l=2 typo", v)
	}
}

// sgmReference holds Rényi divergences of the sampled Gaussian computed by
// direct numerical integration of E_{x~N(0,z²)}[(1−q+q·e^{(2x−1)/(2z²)})^α]
// with mpmath at 40 digits (independent of the series used here).
var sgmReference = []struct{ q, z, alpha, want float64 }{
	{0.01, 1, 1.5, 0.00012725374332744984},
	{0.01, 1, 2.5, 0.00021757533228188046},
	{0.01, 1, 7.3, 0.00075844510705746127},
	{0.05, 2, 1.05, 0.00036761029789811039},
	{0.05, 2, 12.75, 0.0054417335693869191},
	{0.2857142857142857, 0.95, 1.3, 0.080165841522961309},
	{0.004266666666666667, 1.1, 8.8, 0.00010896430075952502},
	{0.1, 0.7, 3.5, 0.54702353273578826},
	{0.001, 5, 1.78, 3.6321258093730522e-8},
	{0.3, 3, 25.5, 0.35474612148286236},
	{0.02, 0.8, 60.5, 43.287853708766334},
}

func TestSubsampledGaussianRDPFractionalOrders(t *testing.T) {
	for _, tc := range sgmReference {
		got := SubsampledGaussianRDP(tc.q, tc.z, tc.alpha)
		// Relative 1e-8, or 1e-12 absolute for tiny values: the series stops
		// at terms e^-30 below max(A_α, 1) and adds the tail bound.
		if d := math.Abs(got - tc.want); d > 1e-8*tc.want && d > 1e-12 {
			t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %.17g, want %.17g", tc.q, tc.z, tc.alpha, got, tc.want)
		}
		// Never optimistic beyond rounding.
		if got < tc.want*(1-1e-12) {
			t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %.17g below the reference %.17g", tc.q, tc.z, tc.alpha, got, tc.want)
		}
	}
}

func TestSubsampledGaussianRDPProperties(t *testing.T) {
	orders := []float64{1.01, 1.5, 2, 2.5, 3, 7.75, 16, 31.5, 64, 255.5, 1024}
	for _, z := range []float64{0.6, 1, 3} {
		for _, alpha := range orders {
			// q = 1 is the plain Gaussian.
			assertRel(t, "q=1", SubsampledGaussianRDP(1, z, alpha), GaussianRDP(alpha, z), 1e-15)
			// q → 0 gives 0; RDP increases in q.
			if v := SubsampledGaussianRDP(1e-12, z, alpha); v > 1e-9 && alpha <= 16 {
				t.Errorf("q→0: RDP(α=%g, z=%g) = %g", alpha, z, v)
			}
			prev := 0.0
			for _, q := range []float64{1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 1} {
				v := SubsampledGaussianRDP(q, z, alpha)
				if math.IsNaN(v) || v < prev*(1-1e-12) {
					t.Errorf("RDP not increasing in q at α=%g z=%g q=%g: %g < %g", alpha, z, q, v, prev)
				}
				if v > GaussianRDP(alpha, z)*(1+1e-12) {
					t.Errorf("subsampling increased RDP at α=%g z=%g q=%g", alpha, z, q)
				}
				prev = v
			}
		}
	}
	// Integer and fractional formulas agree at integer orders, and the
	// fractional one is continuous across them.
	for _, c := range []struct{ q, z float64 }{{0.01, 1}, {0.05, 2}, {0.3, 0.8}, {0.0043, 1.1}, {0.9, 3}} {
		for _, a := range []int{2, 3, 5, 8, 13, 32, 64, 200} {
			alpha := float64(a)
			intV := logAInt(c.q, c.z, a) / (alpha - 1)
			fracV := logAFrac(c.q, c.z, alpha) / (alpha - 1)
			if math.IsInf(intV, 1) {
				continue
			}
			assertRel(t, "int vs frac", fracV, intV, 1e-10)
			near := SubsampledGaussianRDP(c.q, c.z, alpha*(1+1e-9))
			assertRel(t, "continuity above integer", near, intV, 1e-6)
			near = SubsampledGaussianRDP(c.q, c.z, alpha*(1-1e-9))
			assertRel(t, "continuity below integer", near, intV, 1e-6)
		}
	}
	// Monotone in α (RDP is non-decreasing in the order).
	for _, c := range []struct{ q, z float64 }{{0.01, 1}, {0.2857142857142857, 0.95}, {0.5, 10}} {
		prev := 0.0
		for _, alpha := range DefaultOrders() {
			v := SubsampledGaussianRDP(c.q, c.z, alpha)
			if v < prev*(1-1e-9) {
				t.Errorf("RDP decreases in α at q=%g z=%g α=%g: %g < %g", c.q, c.z, alpha, v, prev)
			}
			prev = v
		}
	}
	for _, bad := range [][3]float64{{0, 1, 2}, {1.5, 1, 2}, {0.1, 0, 2}, {0.1, 1, 1}, {math.NaN(), 1, 2}} {
		if v := SubsampledGaussianRDP(bad[0], bad[1], bad[2]); !math.IsNaN(v) {
			t.Errorf("SubsampledGaussianRDP%v = %v, want NaN", bad, v)
		}
	}
	if v := GaussianRDP(1, 1); !math.IsNaN(v) {
		t.Errorf("GaussianRDP(1, 1) = %v, want NaN", v)
	}
}

// logNormCDFReference: ln Φ(x) from mpmath at 50 digits.
var logNormCDFReference = []struct{ x, want float64 }{
	{3, -0.0013508099647481938},
	{1, -0.17275377902344988},
	{0, -0.6931471805599453},
	{-3, -6.607726221510349},
	{-10, -53.23128515051247},
	{-20, -203.91715537109727},
	{-29.999, -454.29121119612387},
	{-30, -454.3212439563432},
	{-30.001, -454.35127771545876},
	{-38, -726.5572160188201},
	{-100, -5005.524208694205},
	{-1e4, -50000010.12927891},
}

func TestLogNormCDF(t *testing.T) {
	for _, tc := range logNormCDFReference {
		assertRel(t, "logNormCDF", logNormCDF(tc.x), tc.want, 1e-14)
	}
	if !math.IsInf(logNormCDF(math.Inf(-1)), -1) || logNormCDF(math.Inf(1)) != 0 || !math.IsNaN(logNormCDF(math.NaN())) {
		t.Error("logNormCDF special values")
	}
}

func TestLogAddSub(t *testing.T) {
	assertRel(t, "logAdd", logAdd(math.Log(2), math.Log(3)), math.Log(5), 1e-15)
	assertRel(t, "logAdd big", logAdd(1000, 1000), 1000+math.Ln2, 1e-15)
	if logAdd(math.Inf(-1), 2) != 2 || logAdd(2, math.Inf(-1)) != 2 {
		t.Error("logAdd with -Inf")
	}
	v, ok := logSub(math.Log(5), math.Log(3))
	if !ok {
		t.Fatal("logSub failed")
	}
	assertRel(t, "logSub", v, math.Log(2), 1e-15)
	v, ok = logSub(0, -1e-10)
	if !ok {
		t.Fatal("logSub failed")
	}
	assertRel(t, "logSub near", v, math.Log(-math.Expm1(-1e-10)), 1e-12)
	if _, ok := logSub(1, 2); ok {
		t.Error("logSub of a larger number must fail")
	}
	if v, _ := logSub(3, 3); !math.IsInf(v, -1) {
		t.Error("logSub(a, a) must be -Inf")
	}
}
