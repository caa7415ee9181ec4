package dp

import "testing"

// TestAutoAccountant: pld where it has a rule for every event (DP-SGD,
// Gaussian rows, DPAR's group step), rdp as soon as one event has none;
// a pld plan's report names its discretisation, an rdp plan's does not.
func TestAutoAccountant(t *testing.T) {
	sgm := PoissonGaussianEvent{Rate: 0.02671, Multiplier: 1.4355, Steps: 7488}
	group := Composed{Count: 10, Event: Occurrences{R: 3, Change: 2, Deleted: 3, Inserted: 2, Event: Poisson{Rate: 0.3, Event: GaussianEvent{Multiplier: 3, Count: 1}}}}
	curve := RDPEvent{Name: "c", Curve: func(a float64) float64 { return a / 100 }}
	for _, c := range []struct {
		events []Event
		want   string
	}{
		{[]Event{sgm}, "pld"},
		{[]Event{GaussianEvent{Multiplier: 5, Count: 70}, group}, "pld"},
		{[]Event{sgm, curve}, "rdp"},
		{[]Event{Occurrences{R: 3, Change: 2, Event: SampledWithoutReplacement{Population: 10, Batch: 2, Event: GaussianEvent{Multiplier: 2, Count: 1}}}}, "rdp"},
		{nil, "rdp"},
	} {
		if got := AutoAccountant(c.events); got != c.want {
			t.Errorf("%v: %s, want %s", c.events, got, c.want)
		}
	}
	for _, acct := range []string{"pld", "rdp"} {
		p := &Plan{Level: "node", Unit: "node", Epsilon: 10, Delta: 1e-5, Accountant: acct,
			Releases: []Planned{{Name: "g", Event: GaussianEvent{Multiplier: 2, Count: 1}}}}
		rep, err := p.Report(p.AsPlanned())
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Discretization != nil; got != (acct == "pld") {
			t.Errorf("%s: discretization %+v", acct, rep.Discretization)
		}
		if acct == "pld" && (rep.Discretization.GridInterval != DefaultPLDDiscretization || !rep.Discretization.Pessimistic || !rep.Discretization.TruncationToDelta) {
			t.Errorf("pld discretization %+v", *rep.Discretization)
		}
	}
}

// TestPLDProfileBeyond709Nats: the sampled Gaussian's profile at losses
// past e^709 (a calibration's first brackets at tiny noise reach them) is
// a number, not NaN: the closed-form inverse loss overflowed to −∞ and the
// error bound took 0·∞ (DP-MLP's plan under pld refused to calibrate on a
// small graph).
func TestPLDProfileBeyond709Nats(t *testing.T) {
	for _, c := range []struct{ q, z, eps float64 }{{0.5, 0.01, 710.08}, {0.02, 0.02, 800}, {0.9, 0.03, 1200}} {
		p := sgmPair(c.q, c.z)
		v, e := p.profile(c.eps)
		if v != v || e != e || v < -e || v > 1 {
			t.Errorf("q=%g z=%g: δ(%g) = %g ± %g", c.q, c.z, c.eps, v, e)
		}
		if _, err := EpsilonOf("pld", []Event{PoissonGaussianEvent{Rate: c.q, Multiplier: c.z, Steps: 3}}, 1e-5); err != nil {
			t.Errorf("q=%g z=%g: %v", c.q, c.z, err)
		}
	}
}
