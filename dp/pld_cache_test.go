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

// BenchmarkPLDDPAR: a calibration of DPAR's DP-SGD noise under pld (its
// default plan on cora_ml at ε = 8: 70 Gaussian DP-APPR rows and 719 group
// steps at rate 0.2782, R = 3 split 3/2), cold in the first iteration and
// served from the ε cache after (a plan is calibrated again per run).
func BenchmarkPLDDPAR(b *testing.B) {
	events := func(s float64) []Event {
		return []Event{GaussianEvent{Multiplier: 5.117, Count: 70}, Composed{Count: 719, Event: Occurrences{R: 3, Change: 2, Deleted: 3, Inserted: 2,
			Event: Poisson{Rate: 0.2782415136, Event: GaussianEvent{Multiplier: s / 2, Count: 1}}}}}
	}
	for b.Loop() {
		if _, err := CalibrateNoise(10.40764029, 0.02222222222, "pld", events); err != nil {
			b.Fatal(err)
		}
	}
}
