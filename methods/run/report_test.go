package run_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
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
	r, err := run.Train(m, run.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Node, Epsilon: 8, Delta: 1e-5,
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
	r, err = run.Train(m, run.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Node, Epsilon: 8, Delta: 1e-5, Runs: 1, Seed: 1})
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
	r, err = run.Train(m, run.TrainOptions{Split: "ratio:0.3:0.3", Level: methods.Edge, Epsilon: 1, Runs: 1, Seed: 1})
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
		opts run.TrainOptions
		want string
	}{
		{run.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Selection: "best"}, "--selection best at node level"},
		{run.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Selection: "private"}, "--selection-epsilon"},
		{run.TrainOptions{Level: methods.Edge, Epsilon: 8, Selection: "private", SelectionEpsilon: 1}, "labels are public"},
		{run.TrainOptions{Level: methods.Node, Epsilon: 8, Selection: "sometimes"}, "want auto, best, last or private"},
		{run.TrainOptions{Level: methods.Node, Epsilon: 8}, "--delta auto"},
	} {
		m := newMethod(t, "mlp", "--epochs", "1")
		tc.opts.Runs, tc.opts.Seed, tc.opts.Split = 1, 1, "ratio:0.3:0.3"
		_, err := run.Train(m, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
	// --delta paper reads the private count, and says so.
	m := newMethod(t, "mlp", "--epochs", "1")
	r, err := run.Train(m, run.TrainOptions{Level: methods.Node, Epsilon: 8, DeltaRule: methods.DeltaPaper, Runs: 1, Seed: 1, Split: "ratio:0.3:0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if src := r.PrivacyReport.DeltaSource; !strings.Contains(src, "private count") || r.PrivacyReport.Delta != 1e-3 {
		t.Errorf("paper δ %g from %q, want 1e-3 (600 training nodes) named private", r.PrivacyReport.Delta, src)
	}
}

// signedDataset writes a small two-community signed graph as a dataset
// directory without a published edge split (the task holds one out) and
// returns its path.
func signedDataset(t *testing.T) string {
	t.Helper()
	s := gen.SignedSBM(gen.SignedSBMConfig{Nodes: 80, Communities: 2, AvgDegree: 6, NegWithin: 0.05, PosAcross: 0.05}, 4)
	var b strings.Builder
	for _, e := range []struct {
		m    *graphs.CSR
		sign int
	}{{s.Adj, 1}, {s.Neg, -1}} {
		for i := 0; i < e.m.Rows; i++ {
			cols, _ := e.m.Row(i)
			for _, j := range cols {
				if i < j {
					fmt.Fprintf(&b, "%d %d %d\n", i, j, e.sign)
				}
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "tiny_signed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "whole_edge.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reportCase is one private run whose report is checked.
type reportCase struct {
	name, method string
	args         []string
	opts         run.TrainOptions
	// public are the quantities the run reads and treats as public: each
	// must be named in the What of a use whose Covered is
	// dp.TreatedAsPublic(...).
	public []string
	// uses are other uses the report must hold: kind → a substring of
	// What + " — " + Covered.
	uses map[string]string
}

// privateRunCases are small private runs of every built-in private method
// at each level it supports, with the data-dependent quantities each one
// reads. GCN is non-private only (TestGCNHasNoPrivateLevel). CARIBOU is in
// TestReportStatesNoiseSource; its counts are its own package's lines.
func privateRunCases(t *testing.T) []reportCase {
	node := func(o run.TrainOptions) run.TrainOptions {
		o.Level, o.Epsilon, o.Runs, o.Seed = methods.Node, 8, 1, 1
		if o.DeltaRule == "" {
			o.Delta = 1e-5
		}
		if o.Split == "" {
			o.Split = "ratio:0.3:0.3"
		}
		return o
	}
	edge := func(o run.TrainOptions) run.TrainOptions {
		o.Level, o.Epsilon, o.Runs, o.Seed = methods.Edge, 2, 1, 1
		if o.Split == "" {
			o.Split = "ratio:0.3:0.3"
		}
		return o
	}
	gapArgs := []string{"--epochs", "1", "--encoder-epochs", "1", "--batch-size", "64", "--max-degree", "40"}
	return []reportCase{
		{name: "mlp node", method: "mlp", args: []string{"--epochs", "2"}, opts: node(run.TrainOptions{}),
			public: []string{"N_train = 600", "node split ratio:0.3:0.3", "the class count C = "}},
		{name: "mlp node, δ paper", method: "mlp", args: []string{"--epochs", "2"}, opts: node(run.TrainOptions{DeltaRule: methods.DeltaPaper}),
			public: []string{"N_train = 600", "δ = 0.001 by --delta paper: paper convention: 10^-digits of the training nodes (600"}},
		{name: "mlp edge", method: "mlp", args: []string{"--epochs", "2"}, opts: edge(run.TrainOptions{}),
			uses: map[string]string{run.UseNoise: "nothing to reproduce", run.UseSplit: "public data (at edge level"}},
		{name: "gap node", method: "gap", args: gapArgs, opts: node(run.TrainOptions{}),
			public: []string{"N_train = 600", "node split ratio:0.3:0.3"}},
		{name: "gap node, published masks", method: "gap", args: gapArgs,
			opts: node(run.TrainOptions{Dataset: "chain-s", Split: "fixed"}), public: []string{"N_train", "node split fixed: the training, validation and test nodes the dataset comes with"}},
		{name: "gap edge, δ auto", method: "gap", args: gapArgs, opts: edge(run.TrainOptions{}),
			uses: map[string]string{run.UseDelta: "possible directed edges among the graph's nodes (a public bound on their number) — public data (the node count"}},
		{name: "gap edge, δ paper", method: "gap", args: gapArgs, opts: edge(run.TrainOptions{DeltaRule: methods.DeltaPaper}),
			public: []string{"by --delta paper: paper convention: 10^-digits of the directed edges"}},
		{name: "gap edge, inductive", method: "gap", args: gapArgs, opts: edge(run.TrainOptions{Split: "inductive:0.7"}),
			uses: map[string]string{run.UseSplit: "G minus an edge e gives G's training graph minus e"}},
		{name: "progap node", method: "progap", args: []string{"--epochs", "1", "--batch-size", "64", "--max-degree", "40"}, opts: node(run.TrainOptions{}),
			public: []string{"N_train = 600", "node split ratio:0.3:0.3"}},
		{name: "progap edge, δ paper, undirected", method: "progap", args: []string{"--epochs", "1", "--edge-unit", "undirected"}, opts: edge(run.TrainOptions{DeltaRule: methods.DeltaPaper}),
			public: []string{"10^-digits of the undirected edges"}},
		{name: "dpar node, δ paper", method: "dpar", args: []string{"--epochs", "2", "--rows", "5"}, opts: node(run.TrainOptions{DeltaRule: methods.DeltaPaper, Split: "inductive:0.8"}),
			public: []string{"N_train = 1600", "by --delta paper: paper convention: 10^-digits of the training nodes (1600", "node split inductive:0.8"}},
		{name: "gcon edge, δ paper", method: "gcon", args: []string{"--encoder-epochs", "2"}, opts: edge(run.TrainOptions{DeltaRule: methods.DeltaPaper}),
			public: []string{"1/|E|"}},
		{name: "gcon edge, public inference", method: "gcon", args: []string{"--encoder-epochs", "2", "--inference", "public"}, opts: edge(run.TrainOptions{}),
			public: []string{"public test graph"}, uses: map[string]string{run.UseDelta: "--delta auto"}},
		{name: "asgl node, drawn edge split", method: "asgl",
			args:   []string{"--embedding-dim", "4", "--epochs", "1", "--disc-steps", "1", "--gen-steps", "1", "--disc-batch", "16", "--gen-batch", "16", "--max-len", "2", "--paths", "2", "--degree-bound", "cap"},
			opts:   run.TrainOptions{Dataset: signedDataset(t), Level: methods.Node, Epsilon: 4, Delta: 1e-5, Runs: 1, Seed: 1},
			public: []string{"the 80 node ids", "edge split: a fraction 0.2 of the edges held out"}},
	}
}

// seededReports caches the reports of seeded runs by case name: the two
// report tests check the same runs (tests in a package run one at a time).
var seededReports = map[string]*dp.Report{}

// runReport trains one case and returns its privacy report (a seeded run's
// from the cache when an earlier test trained it).
func runReport(t *testing.T, tc reportCase) *dp.Report {
	t.Helper()
	if rep := seededReports[tc.name]; rep != nil && !tc.opts.SecureNoise {
		return rep
	}
	r, err := run.Train(newMethod(t, tc.method, tc.args...), tc.opts)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	if r.PrivacyReport == nil {
		t.Fatalf("%s: no privacy report", tc.name)
	}
	if !tc.opts.SecureNoise {
		seededReports[tc.name] = r.PrivacyReport
	}
	return r.PrivacyReport
}

// TestReportListsDataDependentQuantities: every private run's report names
// each data-dependent quantity the method reads outside a mechanism (the
// training-node count behind DP-SGD's rate, δ from a count of edges or
// training nodes, the split, ASGL's node ids and edge hold-out, GCON's
// public test graph) in a use covered as "treated as public (...)", and
// lists δ auto's node count as public data. Before these uses existed the
// counts were read silently.
func TestReportListsDataDependentQuantities(t *testing.T) {
	for _, tc := range privateRunCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			rep := runReport(t, tc)
			for _, want := range tc.public {
				found := false
				for _, u := range rep.Uses {
					found = found || (strings.HasPrefix(u.Covered, "treated as public (") && strings.Contains(u.What, want))
				}
				if !found {
					t.Errorf("no use treated as public names %q; uses:\n%s", want, usesText(rep))
				}
			}
			for kind, want := range tc.uses {
				found := false
				for _, u := range rep.Uses {
					found = found || (u.Kind == kind && strings.Contains(u.What+" — "+u.Covered, want))
				}
				if !found {
					t.Errorf("no %s use with %q; uses:\n%s", kind, want, usesText(rep))
				}
			}
		})
	}
}

func usesText(rep *dp.Report) string {
	var b strings.Builder
	for _, u := range rep.Uses {
		fmt.Fprintf(&b, "  %s: %s — %s\n", u.Kind, u.What, u.Covered)
	}
	return b.String()
}

// TestReportStatesNoiseSource: every private run of every method with a
// private level — CARIBOU and DPAR included, through the generic
// Report — states where its mechanisms' randomness came from: one
// noise use, "reproducible ... seed in this record ... --secure-noise"
// without --secure-noise, "not reproducible ... crypto/rand" with it, and
// "nothing to reproduce" for a run that draws no noise (the MLP at edge
// level).
func TestReportStatesNoiseSource(t *testing.T) {
	cases := privateRunCases(t)
	cases = append(cases,
		reportCase{name: "caribou edge", method: "caribou", args: []string{"--epochs", "2", "--encoder-epochs", "2"},
			opts: run.TrainOptions{Level: methods.Edge, Epsilon: 2, Runs: 1, Seed: 1, Split: "ratio:0.3:0.3"}},
		reportCase{name: "dpar node", method: "dpar", args: []string{"--epochs", "2"},
			opts: run.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Runs: 1, Seed: 1, Split: "ratio:0.3:0.3"}},
		reportCase{name: "sage node", method: "sage", args: []string{"--epochs", "1", "--max-degree", "200"},
			opts: run.TrainOptions{Level: methods.Node, Epsilon: 8, Delta: 1e-5, Runs: 1, Seed: 1, Split: "ratio:0.3:0.3"}})
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.method] = true
		for _, secure := range []bool{false, true} {
			if secure && strings.Contains(tc.name, ",") {
				continue // one secure run per method and level is enough
			}
			tc := tc
			tc.opts.SecureNoise = secure
			t.Run(fmt.Sprintf("%s secure=%v", tc.name, secure), func(t *testing.T) {
				rep := runReport(t, tc)
				var noise []dp.Use
				for _, u := range rep.Uses {
					if u.Kind == run.UseNoise {
						noise = append(noise, u)
					}
				}
				if len(noise) != 1 {
					t.Fatalf("%d noise uses, want 1; uses:\n%s", len(noise), usesText(rep))
				}
				c := noise[0].Covered
				switch {
				case len(rep.Ledger) == 0:
					if c != "nothing to reproduce" {
						t.Errorf("a run without releases: noise use %q", c)
					}
				case secure:
					if !strings.HasPrefix(c, "not reproducible") || !strings.Contains(c, "crypto/rand") {
						t.Errorf("--secure-noise: noise use %q", c)
					}
				default:
					if !strings.HasPrefix(c, "reproducible: every noise draw follows from the seed in this record") || !strings.Contains(c, "--secure-noise") {
						t.Errorf("seeded noise: noise use %q", c)
					}
				}
			})
		}
	}
	for _, name := range methods.Names() {
		m, err := methods.New(name)
		if err != nil {
			t.Fatal(err)
		}
		if (methods.Supports(m, methods.Edge) || methods.Supports(m, methods.Node)) && !seen[name] {
			t.Errorf("method %s has a private level but no case here", name)
		}
	}
}

// TestGCNHasNoPrivateLevel: GCN is the non-private baseline, so it has no
// privacy report to check; a private level is refused.
func TestGCNHasNoPrivateLevel(t *testing.T) {
	for _, l := range []methods.Level{methods.Edge, methods.Node} {
		_, err := run.Train(newMethod(t, "gcn", "--epochs", "1"), run.TrainOptions{Level: l, Epsilon: 1, Delta: 1e-5, Runs: 1, Seed: 1})
		if err == nil || !strings.Contains(err.Error(), "does not support") {
			t.Errorf("gcn at %s level: %v", l, err)
		}
	}
}

// TestInductiveSplitKeepsEdgeNeighbours proves splitUses' edge-level claim
// on a graph: the inductive split's membership reads labels and the seed
// only, so for every edge e the training graph of G − e is that of G
// without e (both entries of an undirected edge).
func TestInductiveSplitKeepsEdgeNeighbours(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 60, Classes: 3, Features: 4, AvgDegree: 5, Homophily: 0.7, Signal: 1}, 2)
	spec, err := graphs.ParseSplit("inductive:0.6")
	if err != nil {
		t.Fatal(err)
	}
	base, err := graphs.ApplySplit(g, spec, 5)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i := 0; i < g.Adj.Rows; i++ {
		cols, _ := g.Adj.Row(i)
		for _, j := range cols {
			if i > j {
				continue
			}
			nb, err := graphs.ApplySplit(g.WithAdj(graphs.RemoveEntry(g.Adj, i, j, true)), spec, 5)
			if err != nil {
				t.Fatal(err)
			}
			want := base.Adj
			if want.HasEntry(i, j) {
				want = graphs.RemoveEntry(want, i, j, true)
			}
			if !slices.Equal(nb.Adj.Indptr, want.Indptr) || !slices.Equal(nb.Adj.Indices, want.Indices) ||
				!slices.Equal(nb.Split.Train, base.Split.Train) || !slices.Equal(nb.Split.Test, base.Split.Test) {
				t.Fatalf("edge {%d,%d}: the split of G − e is not G's split minus e", i, j)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d edges checked", checked)
	}
}
