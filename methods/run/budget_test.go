package run_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// TestBudgetChecks: the one rule every command applies to ε and δ. ε is a
// positive number of at least MinEpsilon (or +Inf); δ is in (0, MaxDelta].
func TestBudgetChecks(t *testing.T) {
	for _, tc := range []struct {
		eps  float64
		want string // "" : accepted
	}{
		{1, ""}, {run.MinEpsilon, ""}, {math.Inf(1), ""}, {8, ""},
		{0, "must be positive"}, {-1, "must be positive"}, {math.NaN(), "must be positive"},
		{1e-300, "implausibly small"}, {math.Nextafter(run.MinEpsilon, 0), "implausibly small"},
	} {
		err := run.CheckEpsilon("--epsilon", tc.eps, "")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ε %g: err %v, want %q", tc.eps, err, tc.want)
		}
	}
	for _, tc := range []struct {
		delta float64
		want  string
	}{
		{1e-5, ""}, {run.MaxDelta, ""}, {2e-3, ""}, {1e-300, ""},
		{0, "(0, 0.01]"}, {-1e-5, "(0, 0.01]"}, {1, "(0, 0.01]"}, {math.NaN(), "(0, 0.01]"}, {math.Inf(1), "(0, 0.01]"},
		{0.5, "above 0.01"}, {math.Nextafter(run.MaxDelta, 1), "above 0.01"},
	} {
		err := run.CheckDelta("--delta", tc.delta, "")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("δ %g: err %v, want %q", tc.delta, err, tc.want)
		}
	}
}

// TestDeltaRulesKeepTheCeiling: δ auto never exceeds MaxDelta (on a graph
// of a few nodes 10^-digits would be 0.1: it is capped, still below one
// over the possible units); δ paper above it is refused; Train refuses a
// given δ above it and an ε below MinEpsilon before loading anything.
func TestDeltaRulesKeepTheCeiling(t *testing.T) {
	ctx := &methods.Context{Level: methods.Edge, Epsilon: 1, DeltaRule: methods.DeltaAuto}
	for _, tc := range []struct {
		possible float64
		want     float64
	}{{6, 0.01}, {9, 0.01}, {10, 0.01}, {90, 0.01}, {100, 1e-3}, {3.998e6, 1e-7}} {
		d, src, err := run.ResolveDelta(ctx, run.DeltaUnits{Unit: "directed edge", Possible: tc.possible})
		if err != nil || d != tc.want || d > 1/tc.possible {
			t.Errorf("%g possible units: δ auto %g (%q, %v), want %g, below 1/%g", tc.possible, d, src, err, tc.want, tc.possible)
		}
	}
	paper := func(d float64) run.DeltaUnits {
		return run.DeltaUnits{Unit: "node", Paper: func() (float64, string, error) { return d, "paper", nil }}
	}
	ctx.DeltaRule = methods.DeltaPaper
	if d, _, err := run.ResolveDelta(ctx, paper(1e-3)); err != nil || d != 1e-3 {
		t.Errorf("δ paper 1e-3: %g, %v", d, err)
	}
	if _, _, err := run.ResolveDelta(ctx, paper(0.1)); err == nil || !strings.Contains(err.Error(), "--delta paper gives δ = 0.1") {
		t.Errorf("δ paper 0.1: err %v, want a refusal", err)
	}
	m := newMethod(t, "mlp", "--epochs", "1")
	for _, opts := range []run.TrainOptions{
		{Level: methods.Node, Epsilon: 1, Delta: 0.5, DeltaRule: methods.DeltaGiven},
		{Level: methods.Node, Epsilon: 1e-300, Delta: 1e-5},
	} {
		opts.Runs, opts.Dataset = 1, filepath.Join(t.TempDir(), "absent.npz") // refused before the load
		if _, err := run.Train(m, opts); err == nil || strings.Contains(err.Error(), "absent.npz") {
			t.Errorf("%+v: err %v, want a budget refusal before the dataset is read", opts, err)
		}
	}
}

// writeSignedFiles writes a signed dataset directory name under dir from
// "u v sign" lines (and its published split when train is not empty).
func writeSignedFiles(t *testing.T, dir, name, whole, train, test string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"whole_edge.txt": whole}
	if train != "" {
		files[name+".train"], files[name+".test"] = train, test
	}
	for f, c := range files {
		if err := os.WriteFile(filepath.Join(path, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestSplitRecord: the split a record states is the one that runs. Edge-
// sign prediction draws no node split: its record is "fixed" for the
// published edge split and "edges:random:F" for a hold-out, and a --split
// it would ignore is refused; link prediction adds its edge hold-out to
// the node split; node classification states the node split. Check and
// Train agree (a sweep compares them).
func TestSplitRecord(t *testing.T) {
	signed := signedDataset(t) // no published split
	lines := "1 2 1\n2 3 -1\n3 4 1\n4 5 -1\n5 6 1\n6 1 -1\n1 3 1\n2 4 -1\n"
	published := writeSignedFiles(t, t.TempDir(), "pub", lines, "1 2 1\n2 3 -1\n3 4 1\n4 5 -1\n5 6 1\n6 1 -1\n", "1 3 1\n2 4 -1\n")
	load := func(name string) *graphs.Graph {
		g, err := graphio.Load(name, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	gHold, gPub := load(signed), load(published)
	task := run.SignedLink{TestFraction: 0.2}
	spec, _ := graphs.ParseSplit("fixed")
	for _, tc := range []struct {
		g     *graphs.Graph
		given string
		want  string // record, or the error's start
		err   bool
	}{
		{gHold, "", "edges:random:0.2", false},
		{gPub, "", "fixed", false},
		{gPub, "fixed", "fixed", false},
		{gHold, "fixed", "--split fixed: dataset", true},
		{gHold, "ratio:0.5:0.2", "--split ratio:0.5:0.2: edge-sign prediction draws no node split", true},
		{gPub, "per-class:20:500:1000", "--split per-class:20:500:1000: edge-sign prediction draws no node split", true},
	} {
		got, err := run.SplitRecord(task, tc.g, tc.given, spec)
		if tc.err {
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%s --split %q: err %v, want %q…", tc.g.Name, tc.given, err, tc.want)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("%s --split %q: %q, %v, want %q", tc.g.Name, tc.given, got, err, tc.want)
		}
	}
	ratio, _ := graphs.ParseSplit("ratio:0.5:0.2")
	csbm := load("csbm")
	if got, err := run.SplitRecord(run.LinkPrediction{TestFraction: 0.1}, csbm, "", ratio); err != nil || got != "ratio:0.5:0.2+edges:random:0.1" {
		t.Errorf("link prediction: %q, %v", got, err)
	}
	if got, err := run.SplitRecord(run.NodeClassification{}, csbm, "", ratio); err != nil || got != "ratio:0.5:0.2" {
		t.Errorf("node classification: %q, %v", got, err)
	}
	// Check names the split Train records.
	m := newMethod(t, "asgl", "--embedding-dim", "4", "--epochs", "1", "--disc-steps", "1", "--gen-steps", "1", "--disc-batch", "16", "--gen-batch", "16")
	opts := run.TrainOptions{Dataset: signed, Runs: 1, Seed: 1}
	checked, err := run.Check(m, opts, gHold)
	if err != nil {
		t.Fatal(err)
	}
	r, err := run.Train(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if checked != "edges:random:0.2" || r.Split != checked {
		t.Errorf("Check %q, Train's record %q: want edges:random:0.2 both", checked, r.Split)
	}
}

// TestOneSignRefusedOnlyWithoutPrivacy: a signed graph whose edges are all
// positive is refused before training without privacy (its sign metrics
// are undefined), and accepted by a private run's checks: G − v can lose
// the last negative edge of G, and refusing one side of a neighbouring
// pair but not the other would be a release.
func TestOneSignRefusedOnlyWithoutPrivacy(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%d %d 1\n%d %d 1\n", i, i%40+1, i, (i+6)%40+1)
	}
	path := writeSignedFiles(t, t.TempDir(), "positive", b.String(), "", "")
	g, err := graphio.Load(path, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	m := newMethod(t, "asgl", "--degree-bound", "cap")
	for _, tc := range []struct {
		opts   run.TrainOptions
		refuse bool
	}{
		{run.TrainOptions{Level: methods.None}, true},
		{run.TrainOptions{Level: methods.Node, Epsilon: math.Inf(1)}, true},
		{run.TrainOptions{Level: methods.Node, Epsilon: 4, Delta: 1e-5}, false},
	} {
		tc.opts.Runs, tc.opts.Seed = 1, 1
		_, err := run.Check(m, tc.opts, g)
		if refused := err != nil && strings.Contains(err.Error(), "edges of one sign only"); refused != tc.refuse {
			t.Errorf("level %s ε %g: err %v, want a refusal: %v", tc.opts.Level, tc.opts.Epsilon, err, tc.refuse)
		}
	}
}

// TestMasksRunsRefused: --split masks with more runs than published masks
// is refused by Check and Train (run r uses mask r; the rest repeated
// masks); masks:K, and as many runs as masks, are accepted.
func TestMasksRunsRefused(t *testing.T) {
	g, err := graphio.Load("csbm", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Three published masks, as a geom-gcn dataset holds ten.
	const n = 3
	for k := range n {
		var s graphs.Split
		for v := range 60 {
			switch (v + k) % 3 {
			case 0:
				s.Train = append(s.Train, v)
			case 1:
				s.Val = append(s.Val, v)
			default:
				s.Test = append(s.Test, v)
			}
		}
		g.MaskSplits = append(g.MaskSplits, s)
	}
	m := newMethod(t, "gcn", "--epochs", "1")
	for _, tc := range []struct {
		split  string
		runs   int
		refuse bool
	}{{"masks", n + 1, true}, {"masks", n, false}, {"masks:0", n + 1, false}} {
		_, err := run.Check(m, run.TrainOptions{Dataset: "chain-s", Split: tc.split, Runs: tc.runs, Seed: 1}, g)
		if refused := err != nil && strings.Contains(err.Error(), "published masks"); refused != tc.refuse {
			t.Errorf("--split %s --runs %d: err %v, want a refusal: %v", tc.split, tc.runs, err, tc.refuse)
		}
	}
}

// TestSelectionNoteWithoutValidation: the report's model-selection use
// states the epoch a training loop keeps: best validation accuracy where
// the split has validation nodes, the last epoch (and why) where it has
// none, as trainers.FullBatch does.
func TestSelectionNoteWithoutValidation(t *testing.T) {
	for _, tc := range []struct {
		val  []int
		sel  string
		want string
	}{
		{[]int{3}, trainers.SelectBest, "best validation accuracy"},
		{nil, trainers.SelectBest, "the split has no validation nodes"},
		{nil, trainers.SelectLast, "the last epoch of each of 1 module(s); no label"},
		{[]int{3}, trainers.SelectLast, "the last epoch of each of 1 module(s); no label"},
	} {
		c := &methods.Context{Level: methods.Edge, Epsilon: 1, Selection: tc.sel,
			Graph: &graphs.Graph{N: 5, Split: graphs.Split{Train: []int{0, 1}, Val: tc.val, Test: []int{4}}}}
		plan := &dp.Plan{}
		run.NoteSelection(c, plan, 1)
		if len(plan.Uses) != 1 || !strings.Contains(plan.Uses[0].What, tc.want) {
			t.Errorf("val %v, selection %s: %+v, want %q", tc.val, tc.sel, plan.Uses, tc.want)
		}
		if tc.val == nil && strings.Contains(plan.Uses[0].What, "best validation") {
			t.Errorf("no validation nodes: %q says best validation", plan.Uses[0].What)
		}
	}
}

// TestCaribouZeroSensitivityRefused: CARIBOU's layers with sensitivity 0 at
// the run's level (nothing of the unit is read: a release without noise
// while the plan declares a Gaussian one) are refused by the options'
// check, before any data is loaded, exactly when the layer's sensitivity
// at that level is 0; without privacy they run.
func TestCaribouZeroSensitivityRefused(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		level methods.Level
		eps   float64
	}{
		{[]string{"--lipschitz", "0"}, methods.Edge, 1},
		{[]string{"--alpha1", "0"}, methods.Edge, 1},
		{[]string{"--lipschitz", "0", "--beta", "0"}, methods.Node, 1},
		{[]string{"--lipschitz", "0"}, methods.Node, 1},
		{[]string{"--alpha1", "0"}, methods.Node, 1},
		{[]string{"--lipschitz", "0"}, methods.Edge, math.Inf(1)},
		{[]string{"--lipschitz", "0", "--beta", "0"}, methods.None, math.Inf(1)},
		{nil, methods.Edge, 1},
	} {
		m := newMethod(t, "caribou", tc.args...)
		cfg := methods.ConfigValues(m.Config())
		cl, a1, beta := cfg["lipschitz"].(float64), cfg["alpha1"].(float64), cfg["beta"].(float64)
		var sens float64
		switch tc.level {
		case methods.Edge:
			sens = layers.EdgeSensitivity(cl, a1, cfg["min-degree"].(int))
		case methods.Node:
			sens = layers.NodeSensitivity(cl, a1, beta, cfg["min-degree"].(int), cfg["max-degree"].(int))
		}
		refuse := sens == 0 && tc.level != methods.None && !math.IsInf(tc.eps, 1)
		opts := run.TrainOptions{Level: tc.level, Epsilon: tc.eps, Delta: 1e-5, Runs: 1, Dataset: filepath.Join(t.TempDir(), "absent.npz")}
		_, err := run.Train(m, opts)
		refused := err != nil && strings.Contains(err.Error(), "sensitivity 0")
		if refused != refuse {
			t.Errorf("%v at %s, ε %g (sensitivity %g): err %v, want a refusal: %v", tc.args, tc.level, tc.eps, sens, err, refuse)
		}
		if !refuse && (err == nil || !strings.Contains(err.Error(), "absent.npz")) {
			t.Errorf("%v at %s: err %v, want the load of the absent dataset to fail next", tc.args, tc.level, err)
		}
	}
}
