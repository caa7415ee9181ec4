package dp

import (
	"fmt"
	"strings"
)

// A Recorder is the ledger entry one mechanism is constructed with: the
// name of one release its run's plan declares and the event of one of its
// releases. The mechanism calls Record once per release it makes (once per
// noise draw, per noisy DP-SGD step, per private selection), so the ledger
// is written by the code that draws the noise and nothing else, and
// Plan.Check then compares the releases made with the releases planned.
//
// Plan.Recorder refuses, at construction and so before any noise is
// drawn, a name the plan does not declare and a per-release event whose
// kind (its parameters, as Plan.Check adds events up) differs from every
// event the plan declares under that name: a mechanism whose noise, rate
// or sensitivity departs from the calibrated plan fails before it releases
// anything instead of when the run is checked.
//
// A nil *Recorder records nothing (a mechanism that runs without privacy
// holds none); a private run whose mechanism holds a nil Recorder records
// fewer releases than planned, and Plan.Check fails it.
type Recorder struct {
	ledger  *Ledger
	name    string
	per     Event
	planned float64 // the plan's releases of per under name, in units of per
}

// Recorder returns the recorder of the planned release name whose every
// release is the event per (nil: a release outside the accountant, e.g.
// objective perturbation), writing to ledger l. It fails when the plan
// does not declare name or declares it with events of other kinds than
// per (the error names both), and when l is nil.
func (p *Plan) Recorder(l *Ledger, name string, per Event) (*Recorder, error) {
	if p == nil {
		return nil, fmt.Errorf("dp: a mechanism recording %q has no privacy plan", name)
	}
	if l == nil {
		return nil, fmt.Errorf("dp: a mechanism recording %q has no ledger", name)
	}
	if per != nil {
		if err := per.Validate(); err != nil {
			return nil, fmt.Errorf("dp: the release %q: %w", name, err)
		}
	}
	kind, unit := amount(per)
	var declared []string
	planned := 0.0
	for _, r := range p.Releases {
		if r.Name != name {
			continue
		}
		k, a := amount(r.Event)
		if k == kind {
			planned += a
			continue
		}
		declared = append(declared, k)
	}
	if planned > 0 {
		return &Recorder{ledger: l, name: name, per: per, planned: planned / unit}, nil
	}
	if declared == nil {
		names := make([]string, 0, len(p.Releases))
		for _, r := range p.Releases {
			names = append(names, fmt.Sprintf("%q", r.Name))
		}
		return nil, fmt.Errorf("dp: a mechanism would release %q (%s), which the privacy plan does not declare (it declares %s)", name, kind, orNone(names))
	}
	return nil, fmt.Errorf("dp: a mechanism would release %q as %s, the privacy plan declares it as %s", name, kind, strings.Join(declared, ", "))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no release"
	}
	return strings.Join(s, ", ")
}

// Record records one release: the recorder's per-release event under its
// name. Safe for concurrent use; a nil Recorder records nothing.
func (r *Recorder) Record() {
	if r == nil {
		return
	}
	r.ledger.Record(r.name, r.per)
}

// RecordEvent records one release under the recorder's name as e, for a
// mechanism whose release differed from the per-release event it was
// constructed with (a NAP layer whose noise std was changed records the
// multiplier it actually used): Plan.Check then sees the difference and
// fails the run. A nil Recorder records nothing.
func (r *Recorder) RecordEvent(e Event) {
	if r == nil {
		return
	}
	r.ledger.Record(r.name, e)
}

// Planned is how many releases of the recorder's event its plan declares
// under its name (all the plan's events of that name and kind, in units of
// the per-release event; 0 for nil). A task that runs a mechanism a
// number of times it computes itself compares the two before it starts
// (trainers.Adversarial's steps against an ASGL player's), so a plan whose
// count departs from the task's fails before anything is released.
func (r *Recorder) Planned() float64 {
	if r == nil {
		return 0
	}
	return r.planned
}

// Name is the ledger name the recorder writes under ("" for nil).
func (r *Recorder) Name() string {
	if r == nil {
		return ""
	}
	return r.name
}

// Event is the per-release event the recorder was constructed with (nil
// for a nil Recorder or a release outside the accountant).
func (r *Recorder) Event() Event {
	if r == nil {
		return nil
	}
	return r.per
}

// SameKind reports whether a and b are releases of the same kind — the
// same mechanism with the same parameters, counts aside — as Plan.Check
// and Plan.Recorder add them up (GaussianEvent{z, 1} and GaussianEvent{z,
// 5}; a PoissonGaussianEvent step and its Poisson-wrapped expansion).
func SameKind(a, b Event) bool {
	ka, _ := amount(a)
	kb, _ := amount(b)
	return ka == kb
}
