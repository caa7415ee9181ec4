package dp

import (
	"math"
	"strings"
	"testing"
)

func TestCalibrateRoundTrip(t *testing.T) {
	for _, acct := range AccountantNames() {
		for _, eps := range []float64{0.1, 1, 4, 32} {
			for _, count := range []int{1, 3, 50} {
				for _, delta := range []float64{1e-5, 1e-9} {
					z, err := calibrateGaussian(eps, delta, count, acct)
					if err != nil {
						t.Fatalf("%s ε=%g count=%d: %v", acct, eps, count, err)
					}
					a, _ := NewAccountant(acct)
					_ = a.Compose(GaussianEvent{Multiplier: z, Count: count})
					got, _ := a.Epsilon(delta)
					if got > eps {
						t.Errorf("%s: ε(z=%g) = %.15g exceeds the target %g", acct, z, got, eps)
					}
					if got < eps*(1-1e-6) {
						t.Errorf("%s: ε(z=%g) = %.15g is not within 1e-6 of the target %g", acct, z, got, eps)
					}
				}
			}
		}
	}
	for _, conv := range []Conversion{ConversionImproved, ConversionStandard} {
		for _, eps := range []float64{0.5, 3} {
			z, err := calibratePoissonGaussian(0.01, eps, 1e-5, 2000, conv)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := NewRDP(WithConversion(conv))
			_ = a.Compose(PoissonGaussianEvent{Rate: 0.01, Multiplier: z, Steps: 2000})
			got, _ := a.Epsilon(1e-5)
			if got > eps || got < eps*(1-1e-6) {
				t.Errorf("%v: ε(z=%g) = %.15g for target %g", conv, z, got, eps)
			}
		}
	}
	// Larger noise is never worse: the GDP calibration is below the RDP one.
	zg, _ := calibrateGaussian(1, 1e-5, 4, "gdp")
	zr, _ := calibrateGaussian(1, 1e-5, 4, "rdp")
	zs, _ := calibrateGaussian(1, 1e-5, 4, "rdp-standard")
	if !(zg < zr && zr < zs) {
		t.Errorf("want z_gdp < z_rdp(improved) < z_rdp(standard), got %g, %g, %g", zg, zr, zs)
	}
}

func TestCalibrateEdgeCases(t *testing.T) {
	if z, err := calibrateGaussian(math.Inf(1), 1e-5, 2, "gdp"); err != nil || z != 0 {
		t.Errorf("ε=∞: z=%v, err=%v; want 0", z, err)
	}
	gauss := func(z float64) []Event { return []Event{GaussianEvent{Multiplier: z, Count: 1}} }
	gdp := func() (Accountant, error) { return NewGDP(), nil }
	for _, tc := range []struct {
		name string
		run  func() (float64, error)
		msg  string
	}{
		{"eps 0", func() (float64, error) { return calibrateGaussian(0, 1e-5, 1, "gdp") }, "epsilon"},
		{"eps <0", func() (float64, error) { return calibrateGaussian(-1, 1e-5, 1, "gdp") }, "epsilon"},
		{"eps NaN", func() (float64, error) { return calibrateGaussian(math.NaN(), 1e-5, 1, "gdp") }, "epsilon"},
		{"delta 0", func() (float64, error) { return calibrateGaussian(1, 0, 1, "gdp") }, "delta"},
		{"delta 1", func() (float64, error) { return calibrateGaussian(1, 1, 1, "gdp") }, "delta"},
		{"count 0", func() (float64, error) { return calibrateGaussian(1, 1e-5, 0, "gdp") }, "count"},
		{"accountant", func() (float64, error) { return calibrateGaussian(1, 1e-5, 1, "moments") }, "accountant"},
		{"rate 0", func() (float64, error) { return calibratePoissonGaussian(0, 1, 1e-5, 10, ConversionImproved) }, "rate"},
		{"steps 0", func() (float64, error) { return calibratePoissonGaussian(0.1, 1, 1e-5, 0, ConversionImproved) }, "steps"},
		{"conversion", func() (float64, error) { return calibratePoissonGaussian(0.1, 1, 1e-5, 10, Conversion(9)) }, "accountant"},
		{"nil events", func() (float64, error) { return calibrateWith(1, 1e-5, nil, gdp) }, "events"},
		{"nil accountant", func() (float64, error) { return calibrateWith(1, 1e-5, gauss, nil) }, "accountant"},
		{"unreachable", func() (float64, error) {
			// A fixed μ = 2 release on top: ε never drops below its own.
			return calibrateWith(0.5, 1e-5, func(z float64) []Event {
				return []Event{GDPEvent{Mu: 2}, GaussianEvent{Multiplier: z, Count: 1}}
			}, gdp)
		}, "not reachable"},
		{"unsupported", func() (float64, error) {
			return calibrateWith(1, 1e-5, func(z float64) []Event {
				return []Event{PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 1}}
			}, gdp)
		}, "does not support"},
		{"bad settings", func() (float64, error) {
			return calibration{Lo: 2, Hi: 1}.noise(1, 1e-5, gauss, gdp)
		}, "calibration settings"},
	} {
		_, err := tc.run()
		if err == nil {
			t.Errorf("%s: want an error", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "dp: ") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %q should start with dp: and mention %q", tc.name, err, tc.msg)
		}
	}
	// No events: nothing to protect, no noise.
	if z, err := calibrateWith(1, 1e-5, func(float64) []Event { return nil }, gdp); err != nil || z != 0 {
		t.Errorf("no events: z=%v, err=%v; want 0", z, err)
	}
	// A target met by any noise returns a valid (tiny) noise.
	z, err := calibrateWith(1e6, 1e-5, gauss, gdp)
	if err != nil {
		t.Fatal(err)
	}
	a := NewGDP()
	_ = a.Compose(GaussianEvent{Multiplier: z, Count: 1})
	if e, _ := a.Epsilon(1e-5); e > 1e6 {
		t.Errorf("z=%g gives ε=%g above the target", z, e)
	}
	// A custom bracket and tolerance.
	z1, err := calibration{Lo: 0.5, Hi: 0.6, RelTol: 1e-12}.noise(1, 1e-5, gauss, gdp)
	if err != nil {
		t.Fatal(err)
	}
	z2, _ := calibrateWith(1, 1e-5, gauss, gdp)
	assertRel(t, "custom bracket", z1, z2, 2e-9)
}
