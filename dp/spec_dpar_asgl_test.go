package dp

import (
	"math"
	"testing"
)

// dparOrders is DPAR's (TF-Privacy's) order list: 1.1 … 10.9 and 12 … 63.
func dparOrders() []float64 {
	var o []float64
	for x := 1; x <= 99; x++ {
		o = append(o, 1+float64(x)/10)
	}
	return append(o, integerOrders(12, 63)...)
}

// newTFPrivacyRDP mimics the accountant DPAR's and ASGL's code use: the
// TF-Privacy orders, the standard conversion, no refinement.
func newTFPrivacyRDP() (Accountant, error) {
	return NewRDP(WithOrders(dparOrders()...), WithConversion(ConversionStandard), WithoutRefinement())
}

// TestDPARRDPAccountant checks the RDP accountant against TF-Privacy's
// (vendored in DPAR's code): TF-Privacy orders, standard conversion;
// reference values computed with that accountant.
func TestDPARRDPAccountant(t *testing.T) {
	for _, tc := range []struct {
		q, z  float64
		steps int
		delta float64
		eps   float64
		tol   float64
		order float64
	}{
		{256.0 / 60000, 1.1, 14100, 1e-5, 3.0124127, 1e-7, 8.8},
		{0.01, 1.0, 1000, 1e-5, 2.5379829, 1e-7, 7.9},
		{60.0 / 210, 0.95, 800, 0.001 / 0.09, 79.132, 1e-5, 1.3},
		{60.0 / 210, 2.0, 800, 0.001 / 0.09, 21.7508, 5e-6, 0},
		{60.0 / 210, 4.0, 800, 0.001 / 0.09, 8.2819, 1e-5, 0},
		{60.0 / 210, 8.0, 800, 0.001 / 0.09, 3.5681, 2e-5, 0},
	} {
		a, _ := newTFPrivacyRDP()
		if err := a.Compose(PoissonGaussianEvent{Rate: tc.q, Multiplier: tc.z, Steps: tc.steps}); err != nil {
			t.Fatal(err)
		}
		eps, order, err := a.(*RDP).EpsilonAndOrder(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "TF-Privacy ε", eps, tc.eps, tc.tol)
		if tc.order != 0 && order != tc.order {
			t.Errorf("TF-Privacy best order = %v, want %v", order, tc.order)
		}
	}
}

// TestDPARComposition checks the pieces of DPAR's accounting that are dp's:
// the EM privacy of the code's defaults (Corollary 1) and the exact
// amplification behind Table 1; reference values recomputed from the
// paper's and the code's formulas. Kairouz's composition h_M, which only
// DPAR uses, is tested with it (methods/dpar, TestKairouzComposition).
func TestDPARComposition(t *testing.T) {
	// EM code defaults: K = 4, ε_c = 1.3 (Gumbel scale 2·C2/ε_c), δ = 1e-4.
	const c2 = 0.001
	eps1, err := GumbelTopKEpsilon(2*c2/1.3, c2, 4, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "EM ε₁", eps1, 5.2, 1e-14)
	// Exact amplification of the inner budgets behind DPAR's Table 1 labels
	// ε = 1 and 8 (linear amplification, q' = 0.09): 1/q' and 8/q'.
	for _, tc := range []struct{ inner, want float64 }{{1 / 0.09, 8.703317}, {8 / 0.09, 86.480943}} {
		got, err := AmplifiedEpsilon(tc.inner, 0.09)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "exact amplification", got, tc.want, 5e-7)
		back, _ := InnerEpsilon(got, 0.09)
		assertRel(t, "InnerEpsilon", back, tc.inner, 1e-12)
		if got < 0.09*tc.inner {
			t.Error("exact amplification below the linear one")
		}
	}
	for _, tc := range []struct{ eps, q float64 }{{1e-3, 0.5}, {0.3, 0.01}, {5, 0.2}, {800, 1e-3}} {
		got, _ := AmplifiedEpsilon(tc.eps, tc.q)
		want := math.Log1p(tc.q * math.Expm1(tc.eps))
		if !math.IsInf(want, 1) {
			assertRel(t, "amplify", got, want, 1e-13)
		} else {
			assertRel(t, "amplify (large ε)", got, tc.eps+math.Log(tc.q), 1e-12)
		}
		back, _ := InnerEpsilon(got, tc.q)
		assertRel(t, "amplify round trip", back, tc.eps, 1e-10)
	}
	for _, bad := range [][2]float64{{0, 0.5}, {1, 0}, {1, 1.5}, {math.NaN(), 0.5}} {
		if _, err := AmplifiedEpsilon(bad[0], bad[1]); err == nil {
			t.Errorf("AmplifiedEpsilon%v: want an error", bad)
		}
		if _, err := InnerEpsilon(bad[0], bad[1]); err == nil {
			t.Errorf("InnerEpsilon%v: want an error", bad)
		}
	}
}

// TestDPARCalibrationChain runs DPAR's budget-to-noise chain (linear
// amplification as in Theorem 2, r = 0.5, δ_total = 2e-3 split evenly,
// M = 70, K = 2, C2 = 0.001, N_train = 216, B = 60, T = 800) against
// reference values recomputed from the paper's and the code's formulas.
func TestDPARCalibrationChain(t *testing.T) {
	const (
		qNode  = 0.09
		m      = 70
		k      = 2
		c2     = 0.001
		deltaT = 2e-3
	)
	for _, tc := range []struct {
		epsTotal           float64
		epsPr              float64
		gumbelEps, gumbelB float64
		z                  float64
	}{
		{1, 5.555556, 0.033281, 3.004746e-2, 5.3545},
		{8, 44.444444, 0.230557, 4.337332e-3, 1.2626},
	} {
		epsPr := 0.5 * tc.epsTotal / qNode // linear amplification
		deltaPr := 0.5 * deltaT / qNode
		assertAbs(t, "ε_pr", epsPr, tc.epsPr, 5e-7)
		// The per-row budget of Kairouz's simplified composition (DPAR
		// Thms 1 and 3), an input here, computed from the paper's formula
		// h_M(ε) = ε/(2·sqrt(M·ln(e + ε/δ))), δ_v = δ/(2M); its
		// implementation and the ε_v vectors (0.133123, 0.922226) are
		// tested in methods/dpar (TestKairouzComposition).
		epsV := epsPr / (2 * math.Sqrt(m*math.Log(math.E+epsPr/deltaPr)))
		deltaV := deltaPr / (2 * m)
		scale, err := GumbelTopKScale(epsV, deltaV, k, c2)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "EM-I Gumbel ε (paper form)", c2/scale, tc.gumbelEps, 5e-7)
		assertRel(t, "EM-I β", scale, tc.gumbelB, 2e-7)
		// DP-SGD: TF-Privacy accountant, q = B/N_train, T = 800, inner
		// δ_sgd = δ_total/2/q'.
		z, err := calibrateWith(epsPr, deltaPr, func(z float64) []Event {
			return []Event{PoissonGaussianEvent{Rate: 60.0 / 216, Multiplier: z, Steps: 800}}
		}, newTFPrivacyRDP)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "DP-SGD z", z, tc.z, 5e-5)
	}
}

// asglGamma is ASGL's per-iteration bound γ(α) for one discriminator
// (ASGL appendix, Thm 2) as HypergeomGaussian computes it, with the
// theorem's change of one clipped contribution.
func asglGamma(alpha, sigma float64, nTr, bd, r int) float64 {
	g, err := HypergeomGaussian{Population: nTr, Batch: bd, Occurrences: r, Multiplier: sigma, Change: 1, Steps: 1}.StepRDP(alpha)
	if err != nil {
		panic(err)
	}
	return g
}

// asglR is R_{N,L} = Σ_{l≤L} N^l (ASGL appendix, Lemma 2; the
// walk package's ReceptiveField, written out here so that dp's tests do
// not import the graph packages).
func asglR(n, l int) int {
	r, p := 1, 1
	for range l {
		p *= n
		r += p
	}
	return r
}

// TestASGLGeneralRDP checks values of ASGL's Theorem 2 (appendix) that need
// only generic RDP: γ, its use through an RDPEvent with the standard
// conversion, and full batch. Reference values were computed in float64
// from the theorem's formula, and γ also with mpmath.
func TestASGLGeneralRDP(t *testing.T) {
	// want: the float64 reference γ values, accurate to ~5e-7 only (their
	// last digits carry float64 cancellation error); exact: mpmath at 50
	// digits.
	for _, tc := range []struct {
		alpha, sigma     float64
		nTr, bd, n, l, r int
		want, exact      float64
	}{
		{2, 1.0, 10, 4, 2, 1, 3, 0.249919957816, 0.249919957816},
		{2, 4.0, 10000, 256, 3, 4, 121, 5.36915591347e-05, 5.36915352212629e-5},
		{8, 4.0, 10000, 256, 3, 4, 121, 2.14932442199e-04, 0.000214932438781364},
		{32, 4.0, 10000, 256, 3, 4, 121, 8.71486383823e-04, 0.00087148638304665},
		{2, 1.0, 1000, 128, 3, 2, 13, 0.0253576878412, 0.0253576878410867},
		{10, 2.0, 1000, 128, 3, 2, 13, 0.0406303876235, 0.0406303876235342},
	} {
		if got := asglR(tc.n, tc.l); got != tc.r {
			t.Fatalf("R(%d,%d) = %d, want %d", tc.n, tc.l, got, tc.r)
		}
		got := asglGamma(tc.alpha, tc.sigma, tc.nTr, tc.bd, tc.r)
		assertRel(t, "γ vs float64 reference", got, tc.want, 5e-7)
		assertRel(t, "γ vs mpmath", got, tc.exact, 1e-10)
	}
	assertRel(t, "γ hand check", asglGamma(2, 1, 10, 4, 3),
		math.Log(1.0/6+0.5*math.Exp(1.0/9)+0.3*math.Exp(4.0/9)+math.E/30), 1e-14)
	// Full batch: γ = α/(2σ²).
	assertRel(t, "full batch", asglGamma(4, 1, 50, 50, 13), 2, 1e-12)

	// The conversion example (T = 1000, σ = 4, N_tr = 1e4, B_d = 256,
	// R = 121, δ = 1e-5) is TestHypergeomGaussianEvent.
}

// TestDeltaAuto checks the δ "auto" rule of GAP's and ProGAP's code,
// delta = 1/10^len(str(units)), on unit counts of ProGAP's and CARIBOU's
// datasets (e.g. Facebook's 2,117,924 edges, Cora's 10,556) and at boundaries.
func TestDeltaAuto(t *testing.T) {
	for _, tc := range []struct {
		units int
		want  float64
	}{
		{2117924, 1e-7}, {19804, 1e-5}, {840210, 1e-6}, {2708, 1e-4}, {10556, 1e-5},
		{491722, 1e-6}, {46233380, 1e-8}, {1, 0.1}, {9, 0.1}, {10, 0.01}, {99999, 1e-5}, {100000, 1e-6},
	} {
		got, err := DeltaAuto(tc.units)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("DeltaAuto(%d) = %g, want %g", tc.units, got, tc.want)
		}
		if got >= 1/float64(tc.units) {
			t.Errorf("DeltaAuto(%d) = %g is not below 1/units", tc.units, got)
		}
	}
	for _, bad := range []int{0, -5} {
		if _, err := DeltaAuto(bad); err == nil {
			t.Errorf("DeltaAuto(%d): want an error", bad)
		}
	}
}
