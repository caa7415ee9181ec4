package dpar

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
)

// TestKairouzComposition checks DPAR's composition h_M (Theorems 1 and 3)
// against the spec's vectors: M = 70, δ_g = 0.014; the budgets implied by
// the GM and EM defaults of DPAR's code; the per-row budgets of the Table 1
// calibration chain (ε_pr = 0.5·ε/q', δ_pr = 1e-3/q', q' = 0.09). Reference
// values were recomputed from the paper's and the code's formulas. The
// inverse must never fall below the root (it is a reported ε).
func TestKairouzComposition(t *testing.T) {
	const m, deltaG = 70, 0.014
	for _, tc := range []struct{ epsG, h float64 }{
		{1, 0.02879927598120735},
		{10, 0.23306143543886063},
		{50, 1.0446600935052464},
	} {
		h, d0, err := KairouzStepBudget(tc.epsG, deltaG, m)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "h_M", h, tc.h, 1e-13)
		assertRel(t, "δ₀", d0, deltaG/(2*m), 1e-15)
		back, err := KairouzTotalEpsilon(h, deltaG, m)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "h_M inverse", back, tc.epsG, 1e-12)
		if kairouzH(back, deltaG, m) < h {
			t.Errorf("inverse %v of h = %v lies below the root", back, h)
		}
	}
	// GM code defaults: δ = 1e-4, C1 = 0.01, σ = 0.0067 → per-row ε
	// (classical Gaussian bound) → ε_g → ×q'.
	perRow := math.Sqrt(2*math.Log(1.25/1e-4)) * 0.01 / 0.0067
	assertRel(t, "GM per-row ε", perRow, 6.4830034386548805, 1e-14)
	epsG, err := KairouzTotalEpsilon(perRow, 2*m*1e-4, m)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "GM ε_g", epsG, 344.9684752897998, 1e-11)
	assertRel(t, "GM ε_g·q'", epsG*0.09, 31.0472, 2e-6)
	// EM code defaults: K = 4, ε_c = 1.3 (Gumbel scale 2·C2/ε_c), δ = 1e-4;
	// ε₁ = 5.2 (asserted in dp's TestDPARComposition).
	const c2 = 0.001
	eps1, err := dp.GumbelTopKEpsilon(2*c2/1.3, c2, 4, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		stepEps         float64
		epsG, amplified float64
	}{
		{"option II (ε₂ = ε₁)", 2 * eps1, 566.8206, 51.0139},
		{"option I", eps1, 273.5043, 24.6154},
	} {
		g, err := KairouzTotalEpsilon(tc.stepEps, 2*m*1e-4, m)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, tc.name+" ε_g", g, tc.epsG, 5e-5)
		assertAbs(t, tc.name+" ε_g·q'", g*0.09, tc.amplified, 5e-5)
	}
	// The calibration chain's per-row budgets (dp's TestDPARCalibrationChain
	// takes ε_v from the paper's formula as its input).
	for _, tc := range []struct{ epsPr, epsV float64 }{
		{5.555556, 0.133123}, {44.444444, 0.922226},
	} {
		epsV, deltaV, err := KairouzStepBudget(tc.epsPr, 1e-3/0.09, m)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "δ_v", deltaV, 7.936508e-5, 1e-6)
		assertAbs(t, "ε_v", epsV, tc.epsV, 5e-7)
	}
}

// TestKairouzInverseNeverBelowRoot: over random (ε_v, δ, k), the reported
// total ε satisfies h_k(ε) ≥ ε_v (the simplified rule covers the rows) and
// lies within the search tolerance of the root; invalid inputs are errors.
func TestKairouzInverseNeverBelowRoot(t *testing.T) {
	for i := range 2000 {
		x := float64(i) / 2000
		stepEps := math.Pow(10, -4+8*x)                  // 1e-4 … 1e4
		delta := math.Pow(10, -12+11*math.Mod(x*7.3, 1)) // 1e-12 … 0.1
		k := 1 + int(math.Mod(x*1e4, 1)*1000)            // 1 … 1000
		eg, err := KairouzTotalEpsilon(stepEps, delta, k)
		if err != nil {
			t.Fatalf("ε_v=%g δ=%g k=%d: %v", stepEps, delta, k, err)
		}
		if kairouzH(eg, delta, k) < stepEps {
			t.Fatalf("ε_v=%g δ=%g k=%d: ε = %v has h_k(ε) = %v < ε_v", stepEps, delta, k, eg, kairouzH(eg, delta, k))
		}
		if below := eg * (1 - 2e-13); kairouzH(below, delta, k) >= stepEps {
			t.Fatalf("ε_v=%g δ=%g k=%d: ε = %v is not within 2e-13 of the root", stepEps, delta, k, eg)
		}
	}
	for _, tc := range []struct {
		name       string
		eps, delta float64
		k          int
	}{
		{"δ=0", 1, 0, 3}, {"δ=1", 1, 1, 3}, {"k=0", 1, 0.01, 0}, {"ε=0", 0, 0.01, 3},
		{"ε=NaN", math.NaN(), 0.01, 3}, {"ε=+Inf", math.Inf(1), 0.01, 3},
	} {
		if _, _, err := KairouzStepBudget(tc.eps, tc.delta, tc.k); err == nil {
			t.Errorf("KairouzStepBudget(%s): want an error", tc.name)
		}
		if _, err := KairouzTotalEpsilon(tc.eps, tc.delta, tc.k); err == nil {
			t.Errorf("KairouzTotalEpsilon(%s): want an error", tc.name)
		}
	}
}
