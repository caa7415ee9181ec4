package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func runTuneJSON(t *testing.T, args ...string) tuneReport {
	t.Helper()
	out, err := runCLI(t, append([]string{"tune", "mlp", "--grid", "lr=0.01,0.05", "--grid", "hidden=16,64", "--epochs", "3", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("tune: %v\n%s", err, out)
	}
	var r tuneReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, out)
	}
	return r
}

func TestTuneNonPrivate(t *testing.T) {
	r := runTuneJSON(t)
	if r.GridSize != 4 || r.Drawn != 4 || len(r.Trials) != 4 || r.Best == nil || r.Selection != "none" {
		t.Fatalf("report %+v", r)
	}
	for _, tr := range r.Trials {
		if tr.ValAcc > r.Best.ValAcc {
			t.Errorf("best val %g below trial %s's %g", r.Best.ValAcc, tr.Setting, tr.ValAcc)
		}
	}
	if r.Privacy.TunedEpsilon != nil || r.Privacy.Covered {
		t.Errorf("non-private tuning claims privacy: %+v", r.Privacy)
	}
}

func TestTunePrivate(t *testing.T) {
	r := runTuneJSON(t, "--privacy", "node", "--epsilon", "4", "--delta", "1e-5")
	p := r.Privacy
	if r.Selection != "rdp" || !p.Covered || p.CandidateEpsilon == nil || p.TunedEpsilon == nil || p.Delta == nil || *p.Delta != 1e-5 {
		t.Fatalf("privacy %+v", p)
	}
	if !(*p.TunedEpsilon > *p.CandidateEpsilon) || *p.CandidateEpsilon > 4.001 {
		t.Errorf("one candidate ε %g, tuned ε %g", *p.CandidateEpsilon, *p.TunedEpsilon)
	}
	if r.Drawn != len(r.Trials) || p.Candidates != "poisson:4" {
		t.Errorf("drawn %d, trials %d, candidates %q", r.Drawn, len(r.Trials), p.Candidates)
	}

	n := runTuneJSON(t, "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--selection-privacy", "none")
	if n.Drawn != 4 || n.Privacy.TunedEpsilon != nil || n.Privacy.Covered || !strings.Contains(n.Privacy.Note, "not covered") {
		t.Errorf("--selection-privacy none: %+v", n.Privacy)
	}
}

func TestTuneFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"tune", "mlp", "--grid", "nosuchflag=1,2"},
		{"tune", "mlp", "--grid", "lr"},
		{"tune", "mlp", "--grid", "lr=0.1", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--candidates", "poisson:-1"},
		{"tune", "mlp", "--grid", "lr=0.1", "--selection-privacy", "rdp"},
	} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
