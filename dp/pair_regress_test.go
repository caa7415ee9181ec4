package dp

import (
	"math"
	"testing"
)

// TestPairPLDLargeGroupTinyNoise: a noise that protects nothing must never
// be reported cheap. With the pair's PLD allowed up to 1000 examples, R =
// 169 at z = 0.001 (std 0.338 C against sums that move by up to 169 C)
// over 5 steps at q = 0.236 gave ε = 0 at δ = 1e-5; the true ε is
// enormous (rdp: 2.4e6). The pair's one-step PLD there has no finite mass
// (all of it at +∞), and the composition's error bound took ln 0 as 0·∞:
// a NaN mass at +∞, read as no δ. Every accountant that accepts the event
// must report at least 100 here, for small groups too.
func TestPairPLDLargeGroupTinyNoise(t *testing.T) {
	for _, r := range []int{2, 3, 8, 169} {
		ev := Composed{Count: 5, Event: Occurrences{R: r, Change: 2, Event: Poisson{Rate: 0.236, Event: GaussianEvent{Multiplier: 0.001, Count: 1}}}}
		for _, acct := range []string{"pld", "rdp", Auto} {
			name := acct
			if acct == Auto {
				name = AutoAccountant([]Event{ev})
			}
			eps, err := EpsilonOf(name, []Event{ev}, 1e-5)
			if err != nil {
				t.Fatalf("R=%d %s: %v", r, name, err)
			}
			if !(eps >= 100) && !math.IsInf(eps, 1) {
				t.Errorf("R=%d %s: ε = %g for a noise that protects nothing", r, name, eps)
			}
		}
	}
}

// TestPLDAllAtInfinityComposes: a factor whose PLD is all at +∞ beside
// ordinary ones (a Gaussian release, a sampled Gaussian) makes the whole
// composition infinite, and a NaN anywhere in a discretised measure is
// read as δ = 1, never as δ = 0.
func TestPLDAllAtInfinityComposes(t *testing.T) {
	tiny := Occurrences{R: 169, Change: 2, Event: Poisson{Rate: 0.236, Event: GaussianEvent{Multiplier: 0.001, Count: 1}}}
	evs := []Event{
		GaussianEvent{Multiplier: 5, Count: 3},
		Composed{Count: 100, Event: Poisson{Rate: 0.01, Event: GaussianEvent{Multiplier: 1.1, Count: 1}}},
		tiny,
	}
	eps, err := EpsilonOf("pld", evs, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(eps, 1) {
		t.Errorf("ε = %g with a release that protects nothing, want +Inf", eps)
	}
	bad := pldPMF{lo: 0, p: []float64{0.5, 0.5}, d: 0.1, inf: math.NaN()}
	if e := bad.epsilon(1e-5); !math.IsInf(e, 1) {
		t.Errorf("ε of a measure with a NaN mass at +∞: %g, want +Inf", e)
	}
	if d := bad.delta(1); d != 1 {
		t.Errorf("δ of a measure with a NaN mass at +∞: %g, want 1", d)
	}
}
