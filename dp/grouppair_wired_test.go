package dp

import (
	"errors"
	"math"
	"testing"
)

// dparStep is one DP-SGD step of DPAR's defaults on cora_ml's 2,396
// training nodes (q = 0.2782, R = 3: its own example deleted, two
// modified), at noise multiplier z (std z·R·2·C).
func dparStep(z float64, del, ins int) Occurrences {
	return Occurrences{R: 3, Change: 2, Deleted: del, Inserted: ins,
		Event: Poisson{Rate: 0.2782415136, Event: GaussianEvent{Multiplier: z, Count: 1}}}
}

// TestOccurrencesRDPUsesGroupPair: the RDP accountant's curve of an
// Occurrences over Poisson sampling is the minimum of the occurrence curve
// γ and the exact group pair: never below the pair's certified lower end
// (at anchor orders and between them, where the chord is used), never
// above γ, and strictly below γ for DPAR's step (the old accountant
// composed γ alone, so this fails on it).
func TestOccurrencesRDPUsesGroupPair(t *testing.T) {
	defer func(on bool) { pairRDPCertified = on }(pairRDPCertified)
	pairRDPCertified = true // the certified pair, off by default until it is fast
	for _, c := range []struct {
		z        float64
		del, ins int
	}{{2.69, 3, 2}, {2.69, 0, 0}, {1, 3, 2}, {8, 1, 0}} {
		o := dparStep(c.z, c.del, c.ins)
		g, ok := o.GroupPair()
		if !ok {
			t.Fatalf("%s: no group pair", o)
		}
		a, err := NewRDP()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(o); err != nil {
			t.Fatal(err)
		}
		for _, alpha := range []float64{1.02, 1.5, 2, 2.37, 4, 7.3, 16, 40, 255} {
			got := a.RDPAt(alpha)
			gamma, err := GroupStepRDP(o, alpha)
			if err != nil {
				t.Fatal(err)
			}
			lo, _, err := g.ExactStepRDP(alpha)
			if err != nil {
				t.Fatal(err)
			}
			if got < lo {
				t.Errorf("%s α=%g: RDP %.10g below the pair's certified lower end %.10g", o, alpha, got, lo)
			}
			if got > gamma*(1+1e-12) {
				t.Errorf("%s α=%g: RDP %.10g above the occurrence curve %.10g", o, alpha, got, gamma)
			}
			if alpha <= 16 && !(got < 0.9*gamma) {
				t.Errorf("%s α=%g: RDP %.10g not below the occurrence curve %.10g: the group pair is not used", o, alpha, got, gamma)
			}
		}
	}
}

// TestOccurrencesPLDIsGroupPair: the PLD accountant composes an
// Occurrences over Poisson sampling as its group pair (the old one refused
// it): the same ε as ComposeGroupPair, below the RDP accountant's, and a
// derived split (0, 0) is the pair (R, R).
func TestOccurrencesPLDIsGroupPair(t *testing.T) {
	const delta = 0.0222
	for _, c := range []struct{ del, ins int }{{3, 2}, {0, 0}} {
		o := Composed{Count: 719, Event: dparStep(2.5, c.del, c.ins)}
		viaEvent, err := EpsilonOf("pld", []Event{o}, delta)
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		g, _ := o.Event.(Occurrences).GroupPair()
		g.Steps = 719
		a, err := NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.ComposeGroupPair(g); err != nil {
			t.Fatal(err)
		}
		viaPair, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if viaEvent != viaPair {
			t.Errorf("%s: PLD ε %.10g, the pair's %.10g", o, viaEvent, viaPair)
		}
		rdp, err := EpsilonOf("rdp", []Event{o}, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(viaEvent < rdp) {
			t.Errorf("%s: PLD ε %.6g not below RDP's %.6g", o, viaEvent, rdp)
		}
		if c.del == 0 {
			explicit, err := EpsilonOf("pld", []Event{Composed{Count: 719, Event: dparStep(2.5, 3, 3)}}, delta)
			if err != nil {
				t.Fatal(err)
			}
			if explicit != viaEvent {
				t.Errorf("derived split: ε %.10g, explicit (3, 3) %.10g", viaEvent, explicit)
			}
		}
	}
}

// TestOccurrencesWithoutPair: Change > 2 with no split, a sampler without
// replacement or a group above 1,000 examples have no group pair: rdp
// composes γ alone, pld refuses.
func TestOccurrencesWithoutPair(t *testing.T) {
	for _, o := range []Occurrences{
		{R: 3, Change: 3, Event: Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 2, Count: 1}}},
		{R: 3, Change: 2, Event: SampledWithoutReplacement{Population: 100, Batch: 10, Event: GaussianEvent{Multiplier: 2, Count: 1}}},
		{R: 600, Change: 2, Event: Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 2, Count: 1}}},
	} {
		if _, ok := o.GroupPair(); ok {
			t.Errorf("%s: has a group pair", o)
		}
		a, _ := NewRDP()
		if err := a.Compose(o); err != nil {
			t.Fatal(err)
		}
		gamma, _ := GroupStepRDP(o, 3)
		if got := a.RDPAt(3); got != gamma {
			t.Errorf("%s: RDP(3) = %g, want γ = %g", o, got, gamma)
		}
		p, _ := NewPLD()
		var u *UnsupportedEventError
		if err := p.Compose(o); !errors.As(err, &u) {
			t.Errorf("%s: pld composed it (err %v)", o, err)
		}
	}
}

// TestOccurrencesSplitValidate: a split beyond R, negative, or stated with
// Change > 2 is refused; the pair's noise is z·R·Change.
func TestOccurrencesSplitValidate(t *testing.T) {
	in := Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: 2, Count: 1}}
	for _, o := range []Occurrences{
		{R: 3, Change: 2, Deleted: 4, Inserted: 2, Event: in},
		{R: 3, Change: 2, Deleted: 3, Inserted: 4, Event: in},
		{R: 3, Change: 2, Deleted: -1, Inserted: 2, Event: in},
		{R: 3, Change: 2.5, Deleted: 3, Inserted: 2, Event: in},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", o)
		}
	}
	g, ok := Occurrences{R: 3, Change: 2, Deleted: 3, Inserted: 2, Event: in}.GroupPair()
	if !ok || g.Noise != 2*3*2 || g.Deleted != 3 || g.Inserted != 2 || g.Rate != 0.1 {
		t.Errorf("group pair %+v, want rate 0.1, 3 deleted, 2 inserted, noise 12", g)
	}
}

// TestGroupPairMonotone: one more deletion or insertion never lowers the
// pair's RDP, the property that makes the derived split (R, R) and any
// overstated split safe (see Occurrences).
func TestGroupPairMonotone(t *testing.T) {
	for _, base := range []GroupPair{{Rate: 0.28, Deleted: 2, Inserted: 1, Noise: 4}, {Rate: 0.05, Deleted: 1, Inserted: 0, Noise: 1.5}, {Rate: 0.5, Deleted: 0, Inserted: 2, Noise: 3}} {
		base.Steps = 1
		for _, alpha := range []float64{1.5, 3, 10} {
			_, hi, err := base.ExactStepRDP(alpha)
			if err != nil {
				t.Fatal(err)
			}
			for _, more := range []GroupPair{{Deleted: base.Deleted + 1, Inserted: base.Inserted}, {Deleted: base.Deleted, Inserted: base.Inserted + 1}} {
				more.Rate, more.Noise, more.Steps = base.Rate, base.Noise, 1
				lo, _, err := more.ExactStepRDP(alpha)
				if err != nil {
					t.Fatal(err)
				}
				if lo < hi*(1-1e-6) {
					t.Errorf("α=%g: %+v has RDP ≥ %.10g, below %+v's ≤ %.10g", alpha, more, lo, base, hi)
				}
			}
		}
	}
}

// TestChordRDPAboveExact: between anchors the chord of (α−1)·D_α bounds
// the pair's RDP from above, and it is within 5 % of the exact value
// there.
func TestChordRDPAboveExact(t *testing.T) {
	g := GroupPair{Rate: 0.2782415136, Deleted: 3, Inserted: 2, Noise: 15, Steps: 1}
	for i := 1; i < len(pairAnchors); i += 7 {
		alpha := math.Sqrt(pairAnchors[i-1] * pairAnchors[i])
		lo, hi, err := g.ExactStepRDP(alpha)
		if err != nil {
			t.Fatal(err)
		}
		c := g.chordRDP(alpha)
		if c < lo || c > 1.05*hi {
			t.Errorf("α=%g: chord %.10g, exact in [%.10g, %.10g]", alpha, c, lo, hi)
		}
	}
	if c := g.chordRDP(pairAnchors[len(pairAnchors)-1] + 1); !math.IsInf(c, 1) {
		t.Errorf("chord above the last anchor = %g, want +Inf", c)
	}
}
