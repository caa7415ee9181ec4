package dp

import (
	"strings"
	"testing"
)

// TestRecorderRefusesAtConstruction: a recorder is refused for a name the
// plan does not declare and for a per-release event of another kind (other
// noise, rate or mechanism) than the plan's, with both named; it is built
// for every declared (name, kind), the shorthand and its expansion alike.
func TestRecorderRefusesAtConstruction(t *testing.T) {
	z := 1.5
	plan := &Plan{Level: "node", Unit: "node", Epsilon: 20, Delta: 1e-5, Accountant: "rdp", Multiplier: z,
		Releases: []Planned{
			{Name: "nap", Event: GaussianEvent{Multiplier: z, Count: 2}},
			{Name: "dpsgd", Event: PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 3}},
			{Name: "selection", Event: PureEvent{Epsilon: 0.1, Count: 1}},
		}}
	for _, tc := range []struct {
		name string
		rel  string
		per  Event
		want []string // substrings of the error; nil: accepted
	}{
		{"NAP", "nap", GaussianEvent{Multiplier: z, Count: 1}, nil},
		{"DP-SGD step", "dpsgd", PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 1}, nil},
		{"DP-SGD step, expanded", "dpsgd", Poisson{Rate: 0.1, Event: GaussianEvent{Multiplier: z, Count: 1}}, nil},
		{"selection", "selection", PureEvent{Epsilon: 0.1, Count: 1}, nil},
		{"undeclared name", "napp", GaussianEvent{Multiplier: z, Count: 1}, []string{`"napp"`, "does not declare", `"nap"`}},
		{"less noise", "nap", GaussianEvent{Multiplier: z / 2, Count: 1}, []string{`"nap"`, "multiplier=0.75", "multiplier=1.5"}},
		{"another rate", "dpsgd", PoissonGaussianEvent{Rate: 0.2, Multiplier: z, Steps: 1}, []string{"rate=0.2", "rate=0.1"}},
		{"another mechanism", "selection", GaussianEvent{Multiplier: z, Count: 1}, []string{`"selection"`, "Gaussian", "Pure"}},
		{"outside the accountant", "nap", nil, []string{"outside the accountant", "Gaussian"}},
		{"invalid event", "nap", GaussianEvent{Multiplier: -1, Count: 1}, []string{`"nap"`}},
	} {
		l := NewLedger()
		r, err := plan.Recorder(l, tc.rel, tc.per)
		if tc.want == nil {
			if err != nil || r == nil {
				t.Errorf("%s: refused: %v", tc.name, err)
				continue
			}
			r.Record()
			if e := l.Entries(); len(e) != 1 || e[0].Name != tc.rel || e[0].Event != tc.per {
				t.Errorf("%s: recorded %v, want one %v under %q", tc.name, e, tc.per, tc.rel)
			}
			continue
		}
		if err == nil || r != nil {
			t.Errorf("%s: accepted (%v)", tc.name, r)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %q", tc.name, err, w)
			}
		}
	}
	if _, err := plan.Recorder(nil, "nap", GaussianEvent{Multiplier: z, Count: 1}); err == nil {
		t.Error("a recorder without a ledger was built")
	}
	var none *Plan
	if _, err := none.Recorder(NewLedger(), "nap", GaussianEvent{Multiplier: z, Count: 1}); err == nil {
		t.Error("a recorder without a plan was built")
	}
	outside := &Plan{Level: "edge", Epsilon: 1, Delta: 1e-6, Accountant: "objective-perturbation",
		Releases: []Planned{{Name: "objective", Epsilon: 0.999}}}
	if _, err := outside.Recorder(NewLedger(), "objective", nil); err != nil {
		t.Errorf("objective perturbation's recorder refused: %v", err)
	}
	if _, err := outside.Recorder(NewLedger(), "objective", GaussianEvent{Multiplier: 1, Count: 1}); err == nil {
		t.Error("a Gaussian recorder for a release outside the accountant was built")
	}
}

// TestRecorderCountsCheckedByPlan: a run whose recorders record exactly
// the planned number of releases passes Plan.Check; one release fewer or
// more, or a release recorded with another event (RecordEvent), fails it;
// a nil recorder records nothing (so a private run that holds one fails).
func TestRecorderCountsCheckedByPlan(t *testing.T) {
	z := 2.0
	plan := &Plan{Level: "edge", Unit: "directed edge", Epsilon: 50, Delta: 1e-5, Accountant: "rdp", Multiplier: z,
		Releases: []Planned{
			{Name: "nap", Event: GaussianEvent{Multiplier: z, Count: 3}},
			{Name: "dpsgd", Event: PoissonGaussianEvent{Rate: 0.25, Multiplier: z, Steps: 4}},
		}}
	run := func(naps, steps int, changed bool) error {
		l := NewLedger()
		nap, err := plan.Recorder(l, "nap", GaussianEvent{Multiplier: z, Count: 1})
		if err != nil {
			return err
		}
		sgd, err := plan.Recorder(l, "dpsgd", PoissonGaussianEvent{Rate: 0.25, Multiplier: z, Steps: 1})
		if err != nil {
			return err
		}
		for i := 0; i < naps; i++ {
			if changed && i == 0 {
				nap.RecordEvent(GaussianEvent{Multiplier: z / 2, Count: 1})
				continue
			}
			nap.Record()
		}
		for i := 0; i < steps; i++ {
			sgd.Record()
		}
		return plan.Check(l)
	}
	for _, tc := range []struct {
		name        string
		naps, steps int
		changed     bool
		ok          bool
	}{
		{"as planned", 3, 4, false, true},
		{"one NAP release fewer", 2, 4, false, false},
		{"one NAP release more", 4, 4, false, false},
		{"one DP-SGD step fewer", 3, 3, false, false},
		{"one DP-SGD step more", 3, 5, false, false},
		{"one release with less noise", 3, 4, true, false},
	} {
		if err := run(tc.naps, tc.steps, tc.changed); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		name string
		per  Event
		want float64
	}{
		{"nap", GaussianEvent{Multiplier: z, Count: 1}, 3},
		{"nap", GaussianEvent{Multiplier: z, Count: 3}, 1},
		{"dpsgd", PoissonGaussianEvent{Rate: 0.25, Multiplier: z, Steps: 1}, 4},
		{"dpsgd", Poisson{Rate: 0.25, Event: GaussianEvent{Multiplier: z, Count: 1}}, 4},
	} {
		r, err := plan.Recorder(NewLedger(), tc.name, tc.per)
		if err != nil || r.Planned() != tc.want {
			t.Errorf("%s %v: Planned = %v (%v), want %v", tc.name, tc.per, r.Planned(), err, tc.want)
		}
	}
	var r *Recorder
	r.Record()
	r.RecordEvent(GaussianEvent{Multiplier: z, Count: 1})
	if r.Name() != "" || r.Event() != nil || r.Planned() != 0 {
		t.Error("a nil recorder has a name or event")
	}
}
