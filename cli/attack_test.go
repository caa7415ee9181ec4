package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

type attackJSON struct {
	Attack string `json:"attack"`
	Runs   int    `json:"runs"`
	AUC    struct {
		Mean   float64   `json:"mean"`
		Values []float64 `json:"values"`
	} `json:"auc"`
	QueryCost string `json:"query_cost"`
	Uncovered string `json:"queries_uncovered"`
	PerRun    []struct {
		AUC            float64  `json:"auc"`
		Members        int      `json:"members"`
		NonMembers     int      `json:"non_members"`
		Queries        int      `json:"queries"`
		Claimed        *float64 `json:"claimed_epsilon"`
		QueriesEpsilon *float64 `json:"queries_epsilon"`
		TotalEpsilon   *float64 `json:"total_epsilon"`
		Bound          *struct {
			EpsilonLB float64 `json:"epsilon_lb"`
		} `json:"bound"`
	} `json:"per_run"`
}

func runAttackCLI(t *testing.T, args ...string) attackJSON {
	t.Helper()
	out, err := runCLI(t, append(append([]string{"audit"}, args...), "--json")...)
	if err != nil {
		t.Fatalf("audit %v: %v", args, err)
	}
	var r attackJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit --attack --json output is not one JSON object: %v\n%s", err, out)
	}
	if len(r.PerRun) != r.Runs || len(r.AUC.Values) != r.Runs {
		t.Fatalf("record of %d runs has %d per-run entries and %d AUCs", r.Runs, len(r.PerRun), len(r.AUC.Values))
	}
	return r
}

// TestAuditAttackLinkTeller: LinkTeller through the CLI finds a
// non-private GCN's edges (the GCN has no release audit, but can be
// attacked), and against a private GAP it states what its queries cost:
// more than the run's ε, the run with them more still.
func TestAuditAttackLinkTeller(t *testing.T) {
	r := runAttackCLI(t, "gcn", "--attack", "linkteller", "--epochs", "30", "--nodes", "200", "--runs", "2")
	for _, run := range r.PerRun {
		if run.AUC < 0.9 || run.Members == 0 || run.Members != run.NonMembers || run.Claimed != nil || run.Bound == nil {
			t.Fatalf("gcn: %+v", run)
		}
	}
	r = runAttackCLI(t, "gap", "--attack", "linkteller", "--privacy", "edge", "--epsilon", "1", "--epochs", "10", "--encoder-epochs", "10", "--nodes", "150")
	run := r.PerRun[0]
	if run.Claimed == nil || *run.Claimed > 1 || run.QueriesEpsilon == nil || !(*run.QueriesEpsilon > 1) || !(*run.TotalEpsilon > *run.QueriesEpsilon) ||
		run.Queries < 2 || !strings.Contains(r.QueryCost, "fresh noise") {
		t.Fatalf("gap ε = 1: %+v (%s)", run, r.QueryCost)
	}
}

// TestAuditAttackMIA: G-MIA through the CLI on the embedded graph, with a
// GCON target whose one-hop inference no ε covers.
func TestAuditAttackMIA(t *testing.T) {
	r := runAttackCLI(t, "gcon", "--attack", "mia", "--privacy", "edge", "--epsilon", "1", "--encoder-epochs", "20", "--mia-per-class", "30")
	run := r.PerRun[0]
	if run.Members != 150 || run.NonMembers != 150 || run.Queries != 1 || run.TotalEpsilon != nil || r.Uncovered == "" {
		t.Fatalf("gcon: %+v (uncovered: %q)", run, r.Uncovered)
	}
}

func TestAuditAttackBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "gap", "--attack", "foo"}, `--attack "foo"`},
		{[]string{"audit", "gap", "--attack", "mia", "--remove-node", "1"}, "--remove-node is for a release audit"},
		{[]string{"audit", "gap", "--attack", "mia", "--trials", "100"}, "--trials is for a release audit"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-node", "1", "--nodes", "10"}, "--nodes is for an attack"},
		{[]string{"audit", "gcn", "--attack", "linkteller", "--runs", "0"}, "--runs must be positive"},
		{[]string{"audit", "gcn", "--attack", "linkteller", "--influence-delta", "0"}, "--influence-delta must be positive"},
		{[]string{"audit", "gcn", "--attack", "linkteller", "--nodes", "1"}, "--nodes must be at least 2"},
		{[]string{"audit", "gcn", "--attack", "mia", "--mia-per-class", "1000"}, "--mia-per-class 1000"},
		{[]string{"audit", "gcn", "--attack", "mia", "--mia-features", "raw"}, "--mia-features must be sorted or standardized"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-node", "1", "--mia-features", "sorted"}, "--mia-features is for an attack"},
		{[]string{"audit", "gcn"}, "--attack linkteller"},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
