package dp

import (
	"errors"
	"math"
	"testing"
)

// TestComposableShorthands: a shorthand and its composable expansion give
// the same ε bit for bit under every accountant that supports them, and
// the same verdict where one is refused; a plan declaring one is met by a
// ledger recording the other one step at a time.
func TestComposableShorthands(t *testing.T) {
	const delta = 1e-5
	pairs := []struct{ short, long Event }{
		{GaussianEvent{Multiplier: 1.3, Count: 7}, Composed{Count: 7, Event: GaussianEvent{Multiplier: 1.3, Count: 1}}},
		{GaussianEvent{Multiplier: 1.3, Count: 6}, Composed{Count: 2, Event: GaussianEvent{Multiplier: 1.3, Count: 3}}},
		{PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 900}, Composed{Count: 900, Event: Poisson{Rate: 0.01, Event: GaussianEvent{Multiplier: 1.1, Count: 1}}}},
		{PoissonGaussianEvent{Rate: 1, Multiplier: 4, Steps: 3}, Composed{Count: 3, Event: Poisson{Rate: 1, Event: GaussianEvent{Multiplier: 4, Count: 1}}}},
		{PureEvent{Epsilon: 0.3, Count: 5}, Composed{Count: 5, Event: PureEvent{Epsilon: 0.3, Count: 1}}},
		{PureEvent{Epsilon: 0.6, Count: 1}, Poisson{Rate: 1, Event: PureEvent{Epsilon: 0.3, Count: 2}}},
		{GDPEvent{Mu: 0.4}, Composed{Count: 1, Event: GDPEvent{Mu: 0.4}}},
	}
	for _, p := range pairs {
		for _, name := range AccountantNames() {
			a, errA := EpsilonOf(name, []Event{p.short}, delta)
			b, errB := EpsilonOf(name, []Event{p.long}, delta)
			if (errA == nil) != (errB == nil) || a != b {
				t.Errorf("%s: %s gives %v (%v), %s gives %v (%v)", name, p.short, a, errA, p.long, b, errB)
			}
			if errA == nil && !(a > 0) {
				t.Errorf("%s: %s gives ε %v", name, p.short, a)
			}
		}
	}
	// Ledger: the plan's shorthand, recorded one expanded step at a time.
	plan := &Plan{Level: "node", Epsilon: math.Inf(1), Delta: delta, Accountant: "rdp",
		Releases: []Planned{{Name: "dpsgd", Event: PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 4}}}}
	l := NewLedger()
	for k := 1; k <= 5; k++ {
		l.Record("dpsgd", Poisson{Rate: 0.01, Event: GaussianEvent{Multiplier: 1.1, Count: 1}})
		if err := plan.Check(l); (k == 4) != (err == nil) {
			t.Errorf("%d expanded steps against 4 planned: %v", k, err)
		}
	}
	if k := releaseKind(Composed{Count: 3, Event: Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 1, Count: 1}}}); k != "dp-sgd" {
		t.Errorf("release kind of composed Poisson Gaussian steps %q", k)
	}
}

// TestUnsupportedStructures: every structure an accountant has no rule for
// is refused with an UnsupportedEventError and leaves it unchanged; nothing
// is composed as zero.
func TestUnsupportedStructures(t *testing.T) {
	g1 := GaussianEvent{Multiplier: 2, Count: 1}
	occ := Occurrences{R: 3, Change: 2, Event: Poisson{Rate: 0.1, Event: g1}}
	hg := Occurrences{R: 3, Change: 2, Event: SampledWithoutReplacement{Population: 100, Batch: 10, Event: g1}}
	everywhere := []Event{
		Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 2, Count: 2}},                                                // several releases on one sample
		Poisson{Rate: 0.1, Event: Poisson{Rate: 0.5, Event: g1}},                                                         // nested sampling
		Poisson{Rate: 0.1, Event: Composed{Count: 1, Event: Poisson{Rate: 0.5, Event: PureEvent{Epsilon: 1, Count: 1}}}}, // nested sampling
		Poisson{Rate: 0.1, Event: GDPEvent{Mu: 1}},                                                                       // no rule
		SampledWithoutReplacement{Population: 100, Batch: 10, Event: g1},                                                 // only inside Occurrences
		Occurrences{R: 3, Change: 2, Event: g1},                                                                          // no sampler
		Occurrences{R: 3, Change: 2, Event: Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 2, Count: 3}}},
		Occurrences{R: 3, Change: 2, Event: Occurrences{R: 2, Change: 1, Event: Poisson{Rate: 0.1, Event: g1}}},
		Composed{Count: 4, Event: Poisson{Rate: 0.1, Event: GDPEvent{Mu: 1}}},
		ComposedEvent{Events: []Event{g1, SampledWithoutReplacement{Population: 100, Batch: 10, Event: g1}}},
	}
	for _, name := range AccountantNames() {
		cases := everywhere
		switch name {
		case "gdp":
			cases = append(cases, occ, hg, Poisson{Rate: 0.1, Event: g1}, Composed{Count: 2, Event: occ},
				Poisson{Rate: 0.1, Event: PureEvent{Epsilon: 1, Count: 1}})
		case "pld":
			// pld has Occurrences over Poisson sampling (the group pair),
			// not over sampling without replacement.
			cases = append(cases, hg, Composed{Count: 2, Event: hg})
		}
		for _, e := range cases {
			if err := e.Validate(); err != nil {
				t.Fatalf("test set-up: %s invalid: %v", e, err)
			}
			acct, err := NewAccountant(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := acct.Compose(g1); err != nil {
				t.Fatal(err)
			}
			before, _ := acct.Epsilon(1e-5)
			if acct.Supports(e) {
				t.Errorf("%s supports %s", name, e)
			}
			var u *UnsupportedEventError
			if err := acct.Compose(e); !errors.As(err, &u) {
				t.Errorf("%s: Compose(%s) = %v, want an UnsupportedEventError", name, e, err)
			}
			if after, _ := acct.Epsilon(1e-5); after != before || len(acct.Ledger()) != 1 {
				t.Errorf("%s: refused %s changed ε %v → %v", name, e, before, after)
			}
		}
	}
	// And pld supports the occurrences over Poisson sampling.
	for _, e := range []Event{occ, Composed{Count: 50, Event: occ}} {
		if eps, err := EpsilonOf("pld", []Event{e}, 1e-5); err != nil || !(eps > 0) {
			t.Errorf("pld: %s: ε %v, %v", e, eps, err)
		}
	}
	// And the RDP accountants do support the occurrence structures.
	for _, e := range []Event{occ, hg, Composed{Count: 50, Event: occ}} {
		if eps, err := EpsilonOf("rdp", []Event{e}, 1e-5); err != nil || !(eps > 0) {
			t.Errorf("rdp: %s: ε %v, %v", e, eps, err)
		}
	}
}

// TestWrapperValidate: wrappers validate their own parameters and the
// event they wrap.
func TestWrapperValidate(t *testing.T) {
	g1 := GaussianEvent{Multiplier: 2, Count: 1}
	for _, e := range []Event{
		Poisson{Rate: 0, Event: g1}, Poisson{Rate: 1.5, Event: g1}, Poisson{Rate: 0.5},
		Poisson{Rate: 0.5, Event: GaussianEvent{Multiplier: 0, Count: 1}},
		SampledWithoutReplacement{Population: 0, Batch: 1, Event: g1}, SampledWithoutReplacement{Population: 5, Batch: 6, Event: g1},
		SampledWithoutReplacement{Population: 5, Batch: 0, Event: g1},
		Occurrences{R: 0, Change: 1, Event: g1}, Occurrences{R: 1, Change: 0, Event: g1}, Occurrences{R: 1, Change: math.Inf(1), Event: g1},
		Occurrences{R: 1, Change: 1},
		Composed{Count: 0, Event: g1}, Composed{Count: 2},
	} {
		if e.Validate() == nil {
			t.Errorf("%s validated", e)
		}
		for _, name := range AccountantNames() {
			acct, _ := NewAccountant(name)
			if acct.Compose(e) == nil {
				t.Errorf("%s composed the invalid %s", name, e)
			}
		}
	}
}

// TestOccurrencesConvention: under Occurrences the multiplier z is the
// noise std over the sensitivity of the whole released sum (R·Change·C):
// at rate 1 (every example in the batch) the step is exactly the Gaussian
// of multiplier z whatever R and Change; and the std is z·R·Change·C. (The
// PoissonGroupGaussian this replaces read its multiplier as std/(R·C), so
// its rate-1 step was the Gaussian of multiplier σ/Change.)
func TestOccurrencesConvention(t *testing.T) {
	for _, r := range []int{1, 3, 40} {
		for _, change := range []float64{1, 2, 0.5} {
			for _, z := range []float64{0.7, 3} {
				o := Occurrences{R: r, Change: change, Event: Poisson{Rate: 1, Event: GaussianEvent{Multiplier: z, Count: 1}}}
				for _, alpha := range []float64{1.5, 4, 32} {
					got, err := GroupStepRDP(o, alpha)
					if err != nil {
						t.Fatal(err)
					}
					if want := alpha / (2 * z * z); math.Abs(got-want) > 1e-12*want {
						t.Errorf("%s at α %g: %v, want the Gaussian's %v", o, alpha, got, want)
					}
				}
				if s := OccurrencesNoiseStd(z, r, change, 1.5); math.Abs(s-z*float64(r)*change*1.5) > 1e-15*s {
					t.Errorf("std %v", s)
				}
			}
		}
	}
}

// TestComposedCountOverflow: nested counts whose product would overflow
// (and wrap to a small or negative multiplicity, under-stating the loss)
// are refused by every accountant, as is a product above MaxComposedCount.
func TestComposedCountOverflow(t *testing.T) {
	g := GaussianEvent{Multiplier: 1e6, Count: 1 << 30}
	for _, e := range []Event{
		Composed{Count: 1 << 40, Event: Composed{Count: 1 << 40, Event: g}},
		Composed{Count: 1 << 62, Event: Composed{Count: 4, Event: GDPEvent{Mu: 1e-9}}},
		Composed{Count: 1 << 11, Event: g},
		Composed{Count: 1 << 20, Event: PoissonGaussianEvent{Rate: 0.5, Multiplier: 1e3, Steps: 1 << 21}},
		Composed{Count: 1 << 20, Event: PureEvent{Epsilon: 1e-9, Count: 1 << 21}},
	} {
		if err := e.Validate(); err != nil {
			t.Fatalf("test set-up: %s: %v", e, err)
		}
		for _, name := range AccountantNames() {
			acct, _ := NewAccountant(name)
			if err := acct.Compose(e); err == nil {
				eps, _ := acct.Epsilon(1e-5)
				t.Errorf("%s composed %s (ε %v)", name, e, eps)
			}
		}
	}
	if _, err := EpsilonOf("rdp", []Event{Composed{Count: 1 << 10, Event: g}}, 1e-5); err != nil {
		t.Errorf("a product at the bound refused: %v", err)
	}
}
