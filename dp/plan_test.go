package dp

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestPlanCheckAndReport(t *testing.T) {
	z := 1.5
	plan := &Plan{Level: "node", Unit: "node", Epsilon: 20, Delta: 1e-5, Accountant: "rdp", Multiplier: z,
		Releases: []Planned{
			{Name: "nap", What: "NAP", Event: GaussianEvent{Multiplier: z, Count: 2}},
			{Name: "dpsgd", What: "DP-SGD", Event: PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 3}},
			{Name: "selection", What: "selection", Event: PureEvent{Epsilon: 0.1, Count: 1}},
		},
		Uses: []Use{{Kind: "degree-bound", What: "public bound", Covered: "public bound"}}}
	exact := func() *Ledger {
		l := NewLedger()
		l.Record("nap", GaussianEvent{Multiplier: z, Count: 1})
		for i := 0; i < 3; i++ {
			l.Record("dpsgd", PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 1})
		}
		l.Record("nap", GaussianEvent{Multiplier: z, Count: 1})
		l.Record("selection", PureEvent{Epsilon: 0.1, Count: 1})
		return l
	}
	rep, err := plan.Report(exact())
	if err != nil {
		t.Fatal(err)
	}
	want, err := EpsilonOf("rdp", []Event{GaussianEvent{z, 2}, PoissonGaussianEvent{0.1, z, 3}, PureEvent{Epsilon: 0.1, Count: 1}}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Epsilon == nil || *rep.Epsilon != want || len(rep.Uses) != 4 || rep.Uses[3].Kind != "degree-bound" || len(rep.Ledger) != 3 {
		t.Fatalf("report %+v, want ε %v and 3 release uses plus the plan's use", rep, want)
	}
	for i, kind := range []string{"release", "dp-sgd", "selection"} {
		if rep.Uses[i].Kind != kind || rep.Uses[i].Epsilon == nil || *rep.Uses[i].Epsilon > want {
			t.Errorf("use %d: %+v", i, rep.Uses[i])
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*Ledger)
		want string
	}{
		{"one NAP release more", func(l *Ledger) { l.Record("nap", GaussianEvent{Multiplier: z, Count: 1}) }, `"nap"`},
		{"a DP-SGD step more", func(l *Ledger) { l.Record("dpsgd", PoissonGaussianEvent{Rate: 0.1, Multiplier: z, Steps: 1}) }, `"dpsgd"`},
		{"less noise", func(l *Ledger) { l.Record("nap", GaussianEvent{Multiplier: z / 2, Count: 1}) }, `"nap"`},
		{"an unplanned release", func(l *Ledger) { l.Record("extra", GaussianEvent{Multiplier: z, Count: 1}) }, "does not declare"},
	} {
		l := exact()
		tc.edit(l)
		if _, err := plan.Report(l); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A release missing.
	l := NewLedger()
	l.Record("nap", GaussianEvent{Multiplier: z, Count: 2})
	if err := plan.Check(l); err == nil {
		t.Error("a ledger without the DP-SGD steps passed")
	}
	// The target is enforced on what was released.
	tight := *plan
	tight.Epsilon = want / 2
	if _, err := tight.Report(exact()); err == nil || !strings.Contains(err.Error(), "above the plan's target") {
		t.Errorf("ε above target: err = %v", err)
	}
}

func TestPlanOutsideAccountantAndNone(t *testing.T) {
	p := &Plan{Level: "edge", Epsilon: 1, Delta: 1e-6, Accountant: "objective-perturbation",
		Releases: []Planned{{Name: "objective", What: "the minimiser", Epsilon: 0.999}}}
	l := NewLedger()
	l.Record("objective", nil)
	rep, err := p.Report(l)
	if err != nil || *rep.Epsilon != 0.999 || len(rep.Uses) != 1 {
		t.Fatalf("objective perturbation: %+v, %v", rep, err)
	}
	l.Record("objective", nil)
	if _, err := p.Report(l); err == nil {
		t.Error("two minimisers released under a plan of one")
	}
	none := &Plan{Level: "none", Epsilon: math.Inf(1), Accountant: "none"}
	rep, err = none.Report(NewLedger())
	if err != nil || rep.Epsilon != nil {
		t.Fatalf("no privacy: %+v, %v", rep, err)
	}
	if _, err := none.Report(l); err == nil {
		t.Error("a release under a plan that releases nothing passed")
	}
	var nilLedger *Ledger
	nilLedger.Record("x", nil) // no-op
	if len(nilLedger.Entries()) != 0 {
		t.Error("nil ledger recorded")
	}
}

// TestRelation: the neighbouring relation is derived from a plan's level
// and unit or stated on it, validated, refused when it contradicts the
// level, and written in the report (fields and text, in JSON too).
func TestRelation(t *testing.T) {
	for _, tc := range []struct {
		level, unit string
		want        Relation
		ok          bool
	}{
		{"node", "node", Relation{Unit: UnitNode, Change: ChangeAddRemove}, true},
		{"node", "", Relation{Unit: UnitNode, Change: ChangeAddRemove}, true},
		{"edge", "directed edge", Relation{Unit: UnitEdge, Change: ChangeAddRemove, Directed: true}, true},
		{"edge", "undirected edge", Relation{Unit: UnitEdge, Change: ChangeAddRemove}, true},
		{"none", "", Relation{}, true},
		{"edge", "node", Relation{}, false},
		{"node", "directed edge", Relation{}, false},
		{"graph", "", Relation{}, false},
	} {
		got, err := NewRelation(tc.level, tc.unit)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("NewRelation(%q, %q) = %+v, %v; want %+v (ok %v)", tc.level, tc.unit, got, err, tc.want, tc.ok)
		}
	}
	for _, r := range []Relation{{Unit: "graph", Change: ChangeAddRemove}, {Unit: UnitNode, Change: "swap"},
		{Unit: UnitNode, Change: ChangeAddRemove, Directed: true}, {Unit: UnitEdge, Change: ChangeZeroOut}} {
		if r.Validate() == nil {
			t.Errorf("%+v validated", r)
		}
	}
	rel := []Planned{{Name: "g", What: "g", Event: GaussianEvent{Multiplier: 4, Count: 1}}}
	plan := &Plan{Level: "edge", Unit: "directed edge", Epsilon: 10, Delta: 1e-5, Accountant: "rdp", Releases: rel}
	rep, err := plan.Report(plan.AsPlanned())
	if err != nil || rep.Relation == nil || *rep.Relation != (Relation{Unit: UnitEdge, Change: ChangeAddRemove, Directed: true}) {
		t.Fatalf("derived relation %+v (%v)", rep.Relation, err)
	}
	plan.Relation = Relation{Unit: UnitNode, Change: ChangeZeroOut}
	if _, err := plan.Report(plan.AsPlanned()); err == nil || !strings.Contains(err.Error(), "edge-level") {
		t.Errorf("a node relation on an edge-level plan: %v", err)
	}
	plan.Level, plan.Unit = "node", "node"
	rep, err = plan.Report(plan.AsPlanned())
	if err != nil || rep.Relation == nil || rep.Relation.Change != ChangeZeroOut {
		t.Fatalf("stated relation %+v (%v)", rep.Relation, err)
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"relation":{"unit":"node","change":"zero-out","text":"node, zero-out: `) {
		t.Errorf("report JSON %s (%v)", b, err)
	}
	none := &Plan{Level: "none", Epsilon: math.Inf(1), Accountant: "none"}
	if rep, err := none.Report(NewLedger()); err != nil || rep.Relation != nil {
		t.Errorf("no privacy: relation %+v (%v)", rep.Relation, err)
	}
}
