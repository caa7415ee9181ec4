package dp

import (
	"math"
	"testing"
)

// TestCARIBOUCalibrationVectors: PCMP is μ-GDP with μ = sqrt(g)/σ_mult
// (CARIBOU Thm 6); GDP route (exact conversion, the autodp accounting of
// GAP's code that CARIBOU §6 reuses), RDP route (Thm 11: α μ²/2, standard
// conversion, continuous α) and linear composition (g=K). Reference values
// computed in float64 from these formulas.
func TestCARIBOUCalibrationVectors(t *testing.T) {
	gdp := func() (Accountant, error) { return NewGDP(), nil }
	rdpStd := func() (Accountant, error) { return NewRDP(WithConversion(ConversionStandard)) }
	unitMu := func(s float64) []Event { return []Event{GDPEvent{Mu: 1 / s}} }
	for _, tc := range []struct {
		eps, delta     float64
		k              int
		cl             float64
		g              float64
		muGDP, muRDP   float64
		sigGDP, sigRDP float64
		sigLinear      float64
	}{
		{1, 1e-5, 10, 0.9, 9.175730, 0.268051, 0.204059, 11.300631, 14.844501, 11.797293},
		{1, 1e-5, 20, 0.5, 2.999994, 0.268051, 0.204059, 6.461637, 8.488002, 16.683892},
		{4, 1e-6, 15, 0.8, 8.388207, 0.837859, 0.712651, 3.456716, 4.064038, 4.622478},
		{8, 1e-7, 5, 0.3, 1.848139, 1.424272, 1.267536, 0.954497, 1.072524, 1.569973},
		{1, 1e-5, 1, 0.9, 1, 0.268051, 0.204059, 3.730632, 4.900555, 3.730632},
		// The reference computation gave μ_GDP = 4.800940, σ_mult(GDP) =
		// 0.929953 and σ_mult(linear) = 0.931513 for this row. Those are wrong:
		// δ(32; 4.800940) = 5.118e-6, not 1e-5 (mpmath, 50 digits); the root
		// of δ(32; μ) = 1e-5 is μ = 4.8795983443, hence the values below.
		// The RDP-route entries of the row are right.
		{32, 1e-5, 20, 0.99, 19.933099, 4.879598, 4.530239, 0.914963, 0.985522, 0.916497},
	} {
		g, err := CNIFactor(tc.cl, tc.k) // g(γ, K) of CARIBOU Thm 5/6
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "g", g, tc.g, 5.1e-7)
		// μ* by calibrating a unit-sensitivity GDP release: noise s ↦ μ = 1/s.
		sGDP, err := calibrateWith(tc.eps, tc.delta, unitMu, gdp)
		if err != nil {
			t.Fatal(err)
		}
		sRDP, err := calibrateWith(tc.eps, tc.delta, unitMu, rdpStd)
		if err != nil {
			t.Fatal(err)
		}
		muGDP, muRDP := 1/sGDP, 1/sRDP
		assertAbs(t, "μ_GDP", muGDP, tc.muGDP, 6e-7)
		assertAbs(t, "μ_RDP", muRDP, tc.muRDP, 6e-7)
		// μ_RDP has the closed form sqrt(2L+2ε) − sqrt(2L).
		l := math.Log(1 / tc.delta)
		assertRel(t, "μ_RDP closed form", muRDP, math.Sqrt(2*l+2*tc.eps)-math.Sqrt(2*l), 1e-8)
		// σ_mult directly from the PCMP event.
		pcmp := func(sigma float64) []Event { return []Event{GDPEvent{Mu: math.Sqrt(g) / sigma}} }
		sigGDP, err := calibrateWith(tc.eps, tc.delta, pcmp, gdp)
		if err != nil {
			t.Fatal(err)
		}
		sigRDP, err := calibrateWith(tc.eps, tc.delta, pcmp, rdpStd)
		if err != nil {
			t.Fatal(err)
		}
		sigLin, err := calibrateGaussian(tc.eps, tc.delta, tc.k, "gdp")
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "σ_mult (GDP)", sigGDP, tc.sigGDP, 1e-5)
		assertAbs(t, "σ_mult (RDP)", sigRDP, tc.sigRDP, 1e-5)
		assertAbs(t, "σ_mult (linear, GDP)", sigLin, tc.sigLinear, 1e-5)
		// After calibration δ(ε; μ*) = δ to 1e-12.
		if d := GDPDelta(muGDP, tc.eps); math.Abs(d-tc.delta) > 1e-12 || d > tc.delta {
			t.Errorf("δ(ε; μ*) = %.15g, want %g", d, tc.delta)
		}
	}
	// More vectors: μ_RDP(ε, δ = 1e-5) for ε = 2, 4, 8, 16.
	for _, tc := range []struct{ eps, mu float64 }{{2, 0.400113}, {4, 0.771559}, {8, 1.448541}, {16, 2.619415}} {
		s, err := calibrateWith(tc.eps, 1e-5, unitMu, rdpStd)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "μ_RDP", 1/s, tc.mu, 6e-7)
	}
}

// TestCARIBOUSpecErratum pins why the last calibration row above departs from
// the reference computation: its μ_GDP = 4.800940 gives, at ε = 32, a δ of
// about 5.12e-6 rather than the target 1e-5.
func TestCARIBOUSpecErratum(t *testing.T) {
	assertRel(t, "δ(32; 4.800940)", GDPDelta(4.800940, 32), 5.11778930712671e-6, 1e-9)
	assertRel(t, "δ(32; 4.8795983443381540)", GDPDelta(4.8795983443381540, 32), 1e-5, 1e-9)
}

// TestCARIBOUForwardAndRDPClosedForm: a forward check (σ_mult = 5, K = 10,
// C_L = 0.9, δ = 1e-5; reference values computed in float64), the closed
// form of Thm 11's RDP route, ε = μ²/2 + μ·sqrt(2 ln(1/δ)) (a derivation),
// and ε_GDP ≤ ε_RDP.
func TestCARIBOUForwardAndRDPClosedForm(t *testing.T) {
	g, err := CNIFactor(0.9, 10)
	if err != nil {
		t.Fatal(err)
	}
	mu := math.Sqrt(g) / 5
	assertAbs(t, "μ", mu, 0.605829, 5e-7)
	a, _ := NewRDP(WithConversion(ConversionStandard))
	if err := a.Compose(GDPEvent{Mu: mu}); err != nil {
		t.Fatal(err)
	}
	eps, _ := a.Epsilon(1e-5)
	assertAbs(t, "ε_RDP", eps, 3.090602, 5e-7)
	for _, mu := range []float64{0.05, 0.3, 1, 3} {
		for _, delta := range []float64{1e-5, 1e-8} {
			l := math.Log(1 / delta)
			r, _ := NewRDP(WithConversion(ConversionStandard))
			_ = r.Compose(GDPEvent{Mu: mu})
			got, _ := r.Epsilon(delta)
			want := mu*mu/2 + mu*math.Sqrt(2*l)
			assertRel(t, "RDP closed form", got, want, 1e-6)
			back := math.Sqrt(2*l+2*want) - math.Sqrt(2*l)
			assertRel(t, "μ(ε(μ))", back, mu, 1e-12)
			exact, _ := GDPEpsilon(mu, delta)
			if exact > got {
				t.Errorf("ε_GDP(%g) = %g above ε_RDP = %g", mu, exact, got)
			}
		}
	}
}
