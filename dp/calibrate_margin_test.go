package dp

import (
	"math"
	"testing"
)

// TestCalibrationMarginRecompute: the noise calibration.noise returns has
// an ε at most targetEps·(1 − CalibrationMargin) under the calibration's own
// accountant, and stays below the target when a caller recomputes ε with a
// fresh accountant from differently grouped events (separate Compose calls,
// one ComposedEvent, the steps split into chunks), whose rounding differs
// from the calibration's; it is still within 1e-6 of the target.
func TestCalibrationMarginRecompute(t *testing.T) {
	check := func(name string, eps, target float64) {
		t.Helper()
		if !(eps <= target*(1-CalibrationMargin/2)) {
			t.Errorf("%s: recomputed ε = %.17g, target %.17g: margin lost (ε/target − 1 = %.3g)", name, eps, target, eps/target-1)
		}
		if eps < target*(1-1e-6) {
			t.Errorf("%s: recomputed ε = %.17g not within 1e-6 of the target %g", name, eps, target)
		}
	}
	epsOf := func(acct string, events ...Event) float64 {
		a, err := NewAccountant(acct)
		if err != nil {
			t.Fatal(err)
		}
		if err := ComposeAll(a, events); err != nil {
			t.Fatal(err)
		}
		e, err := a.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, acct := range AccountantNames() {
		for _, target := range []float64{0.1, 1, 8} {
			for _, count := range []int{1, 7, 50} {
				z, err := calibrateGaussian(target, 1e-5, count, acct)
				if err != nil {
					t.Fatal(err)
				}
				name := acct + " ε=" + ftoa(target) + " count=" + itoa(count)
				check(name+" (as calibrated)", epsOf(acct, GaussianEvent{Multiplier: z, Count: count}), target)
				sep := make([]Event, count)
				for i := range sep {
					sep[i] = GaussianEvent{Multiplier: z, Count: 1}
				}
				check(name+" (separate events)", epsOf(acct, sep...), target)
				check(name+" (one ComposedEvent)", epsOf(acct, ComposedEvent{Events: sep}), target)
				check(name+" (as μ-GDP)", epsOf(acct, GDPEvent{Mu: math.Sqrt(float64(count)) / z}), target)
			}
		}
	}
	for _, conv := range []Conversion{ConversionImproved, ConversionStandard} {
		acct := "rdp"
		if conv == ConversionStandard {
			acct = "rdp-standard"
		}
		for _, target := range []float64{0.05, 1} {
			const q, steps = 0.004, 3000
			z, err := calibratePoissonGaussian(q, target, 1e-5, steps, conv)
			if err != nil {
				t.Fatal(err)
			}
			name := acct + " DP-SGD ε=" + ftoa(target)
			check(name, epsOf(acct, PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}), target)
			check(name+" (chunks)", epsOf(acct,
				PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: 1000},
				ComposedEvent{Events: []Event{PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: 1999}}},
				PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: 1}), target)
		}
	}
	// The margin also holds for a custom search (tight tolerance, custom
	// bracket) and for a target reached only at the bracket's low end.
	gauss := func(z float64) []Event { return []Event{GaussianEvent{Multiplier: z, Count: 3}} }
	gdp := func() (Accountant, error) { return NewGDP(), nil }
	z, err := calibration{Lo: 1, Hi: 2, RelTol: 1e-13}.noise(2, 1e-6, gauss, gdp)
	if err != nil {
		t.Fatal(err)
	}
	a := NewGDP()
	_ = a.Compose(GaussianEvent{Multiplier: z, Count: 3})
	e, _ := a.Epsilon(1e-6)
	if !(e <= 2*(1-CalibrationMargin)) || e < 2*(1-2e-9) {
		t.Errorf("tight calibration: ε = %.17g, want in [2(1−2e-9), 2(1−1e-9)]", e)
	}
}
