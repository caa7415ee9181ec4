package methods_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// TestPrivacyReportListsEveryUse: a node-level GAP run's report lists each
// release with its ε alone (NAP, the two DP-SGD runs, the two private model
// selections), the degree bound, the evaluation and δ's source; the ε alone
// of each accounted use is at most the run's ε. Edge level says that
// best-validation selection reads public labels; node level with the
// default keeps the last epoch.
func TestPrivacyReportListsEveryUse(t *testing.T) {
	kinds := func(r *trainers.Record) map[string]int {
		k := map[string]int{}
		for _, u := range r.PrivacyReport.Uses {
			k[u.Kind]++
			if u.Covered == "accounted" && (u.Epsilon == nil || *u.Epsilon > *r.PrivacyReport.Epsilon) {
				t.Errorf("use %q: ε alone %v, run ε %v", u.What, u.Epsilon, *r.PrivacyReport.Epsilon)
			}
		}
		return k
	}
	args := []string{"--epochs", "2", "--encoder-epochs", "2", "--batch-size", "64", "--max-degree", "40"}
	m := newMethod(t, "gap", args...)
	r, err := methods.Train(m, methods.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Node, Epsilon: 8, Delta: 1e-5,
		Selection: "private", SelectionEpsilon: 0.2, Runs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(r)
	if k["release"] != 1 || k["dp-sgd"] != 2 || k["selection"] != 2 || k["degree-bound"] != 1 || k["evaluation"] != 1 {
		t.Errorf("node level uses %v, want 1 release, 2 dp-sgd, 2 selection, 1 degree-bound, 1 evaluation", k)
	}
	if !strings.Contains(r.PrivacyReport.DeltaSource, "given") {
		t.Errorf("δ source %q", r.PrivacyReport.DeltaSource)
	}

	m = newMethod(t, "gap", args...)
	r, err = methods.Train(m, methods.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Node, Epsilon: 8, Delta: 1e-5, Runs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sel string
	for _, u := range r.PrivacyReport.Uses {
		if u.Kind == "selection" {
			sel = u.What + " — " + u.Covered
		}
	}
	if !strings.Contains(sel, "last epoch") || !strings.Contains(sel, "no private data read") {
		t.Errorf("node-level default selection: %q", sel)
	}

	m = newMethod(t, "gap", args...)
	r, err = methods.Train(m, methods.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Edge, Epsilon: 1, Runs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sel = ""
	for _, u := range r.PrivacyReport.Uses {
		if u.Kind == "selection" {
			sel = u.What + " — " + u.Covered
		}
	}
	if !strings.Contains(sel, "best validation") || !strings.Contains(sel, "public") {
		t.Errorf("edge-level selection: %q", sel)
	}
	if src := r.PrivacyReport.DeltaSource; !strings.Contains(src, "auto") || r.PrivacyReport.Delta != 1e-7 {
		t.Errorf("edge-level δ %g from %q, want auto 1e-7 (2,000 nodes: 4.0e6 possible directed edges)", r.PrivacyReport.Delta, src)
	}
}

// TestSelectionAndDeltaRules: the refusals that keep node level from
// reading private data without accounting.
func TestSelectionAndDeltaRules(t *testing.T) {
	for _, tc := range []struct {
		opts methods.TrainOptions
		want string
	}{
		{methods.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Selection: "best"}, "--selection best at node level"},
		{methods.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Selection: "private"}, "--selection-epsilon"},
		{methods.TrainOptions{Level: methods.Edge, Epsilon: 8, Selection: "private", SelectionEpsilon: 1}, "labels are public"},
		{methods.TrainOptions{Level: methods.Node, Epsilon: 8, Selection: "sometimes"}, "want auto, best, last or private"},
		{methods.TrainOptions{Level: methods.Node, Epsilon: 8}, "--delta auto"},
	} {
		m := newMethod(t, "mlp", "--epochs", "1")
		tc.opts.Runs, tc.opts.Seed, tc.opts.Split = 1, 1, "ratio:0.3:0.3"
		_, err := methods.Train(m, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
	// --delta paper reads the private count, and says so.
	m := newMethod(t, "mlp", "--epochs", "1")
	r, err := methods.Train(m, methods.TrainOptions{Level: methods.Node, Epsilon: 8, DeltaRule: methods.DeltaPaper, Runs: 1, Seed: 1, Split: "ratio:0.3:0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if src := r.PrivacyReport.DeltaSource; !strings.Contains(src, "private count") || r.PrivacyReport.Delta != 1e-3 {
		t.Errorf("paper δ %g from %q, want 1e-3 (600 training nodes) named private", r.PrivacyReport.Delta, src)
	}
}
