package dp

import (
	"testing"
	"time"
)

// TestPLDEpsilonCacheSameBits: a second accountant with the same
// composition (the same terms in the same order, grid and δ) returns the
// cached ε, bit for bit the computed one, and much faster; a different
// count, order or δ is not served from another key.
func TestPLDEpsilonCacheSameBits(t *testing.T) {
	build := func(events ...Event) *PLD {
		a, err := NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		if err := ComposeAll(a, events); err != nil {
			t.Fatal(err)
		}
		return a
	}
	sgm := PoissonGaussianEvent{Rate: 0.013, Multiplier: 1.37, Steps: 1234}
	pure := PureEvent{Epsilon: 0.01, Count: 3}
	t0 := time.Now()
	first, err := build(sgm, pure).Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	t0 = time.Now()
	again, err := build(sgm, pure).Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if warm := time.Since(t0); again != first || warm > cold/2 {
		t.Errorf("second ε %v in %v, first %v in %v: not served from the cache", again, warm, first, cold)
	}
	other := sgm
	other.Steps++
	for _, c := range []struct {
		name  string
		a     *PLD
		delta float64
	}{{"one more step", build(other, pure), 1e-5}, {"other δ", build(sgm, pure), 1e-6}} {
		e, err := c.a.Epsilon(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(e > first) {
			t.Errorf("%s: ε %v, want above %v", c.name, e, first)
		}
	}
}

// BenchmarkPLDDPAR: a cold calibration (caches emptied) of DPAR's DP-SGD
// noise under pld, its default plan on cora_ml at ε = 8, δ = 2e-3
// (`dpgnn account dpar --epsilon 8 --delta 2e-3 --train-nodes 2396`): 10
// Gaussian DP-APPR rows at their calibrated multiplier and 959 group steps
// at rate 0.1043, R = 2 split 2/1.
func BenchmarkPLDDPAR(b *testing.B) {
	events := func(z float64) []Event {
		return []Event{GaussianEvent{Multiplier: 11.567761165735785, Count: 10}, Composed{Count: 959, Event: Occurrences{R: 2, Change: 2, Deleted: 2, Inserted: 1,
			Event: Poisson{Rate: 0.10434056761268781, Event: GaussianEvent{Multiplier: z, Count: 1}}}}}
	}
	for b.Loop() {
		clearPairCaches()
		if _, err := CalibrateNoise(8, 2e-3, "pld", events); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPLDNodeModules: cold calibrations under pld of the node-level
// plans of GAP/ProGAP (one NAP Gaussian at the DP-SGD multiplier z) and
// CARIBOU (PCMP at z·0.330, its g and Δ ratio at D_max = 168) beside two
// modules of 936 DP-SGD steps at rate 0.1068: `dpgnn account gap|caribou
// --level node --epsilon 8 --delta 1e-4 --train-nodes 2396 --max-degree
// 246|168`.
func BenchmarkPLDNodeModules(b *testing.B) {
	for _, c := range []struct {
		name string
		nap  float64 // the release's multiplier over z
	}{{"gap", 1}, {"caribou", 1.0129010937784408 / 3.068226102203915}} {
		b.Run(c.name, func(b *testing.B) {
			events := func(z float64) []Event {
				sgm := PoissonGaussianEvent{Rate: 0.10684474123539232, Multiplier: z, Steps: 936}
				return []Event{GaussianEvent{Multiplier: z * c.nap, Count: 1}, sgm, sgm}
			}
			for b.Loop() {
				clearPairCaches()
				if _, err := CalibrateNoise(8, 1e-4, "pld", events); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
