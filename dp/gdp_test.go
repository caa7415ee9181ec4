package dp

import (
	"math"
	"testing"
)

// gdpDeltaReference: δ(ε; μ) from mpmath at 40 digits.
var gdpDeltaReference = []struct{ mu, eps, want float64 }{
	{0.5, 1, 0.0068295949831145754},
	{0.5, 10, 9.8551206108501659e-89},
	{1, 30, 4.7093263180975222e-193},
	{2, 5, 0.032281984750072821},
	{0.1, 3, 7.3048061017546759e-200},
	{3, 60, 1.4338597021611082e-77},
	{0.268051, 1, 9.9999236806394018e-6},
	{10, 100, 1.8797170020519157e-7},
}

func TestGDPDelta(t *testing.T) {
	for _, tc := range gdpDeltaReference {
		assertRel(t, "GDPDelta", GDPDelta(tc.mu, tc.eps), tc.want, 1e-10)
	}
	// Increasing in μ, decreasing in ε.
	for _, eps := range []float64{0, 0.5, 2, 8} {
		prev := 0.0
		for _, mu := range []float64{0.1, 0.3, 1, 2, 5} {
			d := GDPDelta(mu, eps)
			if d < prev {
				t.Errorf("δ not increasing in μ at ε=%g μ=%g", eps, mu)
			}
			prev = d
		}
	}
	prev := 1.0
	for _, eps := range []float64{0, 0.1, 1, 3, 10, 30} {
		d := GDPDelta(1.3, eps)
		if d > prev {
			t.Errorf("δ not decreasing in ε at ε=%g", eps)
		}
		prev = d
	}
	if GDPDelta(0, 1) != 0 || !math.IsNaN(GDPDelta(-1, 1)) || !math.IsNaN(GDPDelta(1, -1)) {
		t.Error("GDPDelta special values")
	}
}

// TestGDPEpsilonSpecVectors: progap.md §7.1 exact analytic Gaussian forward
// values and caribou.md §4.8 μ_GDP values.
func TestGDPEpsilonSpecVectors(t *testing.T) {
	for _, tc := range []struct {
		k            int
		sigma, delta float64
		want         float64
	}{
		{2, 5, 1e-8, 1.4733066886},
		{1, 1, 1e-5, 4.3771780957},
	} {
		a := NewGDP()
		if err := a.Compose(GaussianEvent{Multiplier: tc.sigma, Count: tc.k}); err != nil {
			t.Fatal(err)
		}
		eps, err := a.Epsilon(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "exact Gaussian ε", eps, tc.want, 1e-9)
	}
	// caribou.md §4.8: μ_GDP(ε, δ=1e-5) for ε = 1, 2, 4, 8, 16, and δ(ε; μ*) = δ.
	for _, tc := range []struct{ eps, mu float64 }{
		{1, 0.268051}, {2, 0.501552}, {4, 0.924931}, {8, 1.666031}, {16, 2.905478},
	} {
		got, err := CalibrateNoise(tc.eps, 1e-5,
			func(s float64) []Event { return []Event{GDPEvent{Mu: 1 / s}} },
			func() (Accountant, error) { return NewGDP(), nil })
		if err != nil {
			t.Fatal(err)
		}
		mu := 1 / got
		assertAbs(t, "μ_GDP", mu, tc.mu, 6e-7)
		if d := GDPDelta(mu, tc.eps); math.Abs(d-1e-5) > 1e-12 || d > 1e-5 {
			t.Errorf("δ(ε=%g; μ*) = %.15g, want 1e-5 (|diff| < 1e-12, never above)", tc.eps, d)
		}
	}
}

func TestGDPEpsilonProperties(t *testing.T) {
	for _, mu := range []float64{1e-3, 0.05, 0.3, 1, 2.5, 7, 20} {
		for _, delta := range []float64{1e-12, 1e-8, 1e-5, 1e-2, 0.3} {
			eps, err := GDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			if eps == 0 {
				if GDPDelta(mu, 0) > delta {
					t.Errorf("μ=%g δ=%g: ε=0 but δ(0)=%g > δ", mu, delta, GDPDelta(mu, 0))
				}
				continue
			}
			// The returned ε is the upper end of the bracket: δ(ε) ≤ δ, and
			// a hair below it δ exceeds the target.
			if d := GDPDelta(mu, eps); d > delta*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: δ(ε=%g) = %g exceeds the target", mu, delta, eps, d)
			}
			if d := GDPDelta(mu, eps*(1-1e-9)); d <= delta {
				t.Errorf("μ=%g δ=%g: ε=%g is not tight", mu, delta, eps)
			}
			// Never above the RDP closed form.
			if rdp := mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta)); eps > rdp*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: exact ε %g above the RDP bound %g", mu, delta, eps, rdp)
			}
		}
	}
	if e, _ := GDPEpsilon(0, 1e-5); e != 0 {
		t.Error("μ=0 must give ε=0")
	}
	if e, _ := GDPEpsilon(math.Inf(1), 1e-5); !math.IsInf(e, 1) {
		t.Error("μ=∞ must give ε=∞")
	}
	for _, bad := range [][2]float64{{-1, 1e-5}, {math.NaN(), 1e-5}, {1, 0}, {1, 1}, {1, math.NaN()}} {
		if _, err := GDPEpsilon(bad[0], bad[1]); err == nil {
			t.Errorf("GDPEpsilon%v: want an error", bad)
		}
	}
}

func TestGDPAccountantComposition(t *testing.T) {
	a := NewGDP()
	for _, e := range []Event{
		GaussianEvent{Multiplier: 2, Count: 3},
		GDPEvent{Mu: 0.5},
		ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 4, Count: 1}, GDPEvent{Mu: 0.1}}},
	} {
		if err := a.Compose(e); err != nil {
			t.Fatal(err)
		}
	}
	want := math.Sqrt(3.0/4 + 0.25 + 1.0/16 + 0.01)
	assertRel(t, "μ", a.Mu(), want, 1e-15)
	eps, _ := a.Epsilon(1e-5)
	d, err := a.Delta(eps)
	if err != nil {
		t.Fatal(err)
	}
	if d > 1e-5*(1+1e-12) || d < 1e-5*(1-1e-6) {
		t.Errorf("Delta(Epsilon(1e-5)) = %g", d)
	}
	if _, err := a.Delta(-1); err == nil {
		t.Error("Delta(-1): want an error")
	}
}
