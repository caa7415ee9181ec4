package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/trainers"
)

// writeSigned writes a signed dataset directory dir/name (whole_edge.txt,
// and name.train/name.test when split) of n nodes with m random edges,
// negative with probability neg, and returns its path. The test edges are
// every fifth edge, so both signs fall on both sides when neg is ½.
func writeSigned(t *testing.T, dir, name string, n, m int, neg float64, split bool) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(n), uint64(m)))
	seen := map[[2]int]bool{}
	var whole, train, test strings.Builder
	for k := 0; len(seen) < m; k++ {
		u, v := r.IntN(n)+1, r.IntN(n)+1
		if u == v || seen[[2]int{u, v}] || seen[[2]int{v, u}] {
			continue
		}
		seen[[2]int{u, v}] = true
		s := 1
		if r.Float64() < neg {
			s = -1
		}
		line := fmt.Sprintf("%d\t%d\t%d\n", u, v, s)
		whole.WriteString(line)
		if len(seen)%5 == 0 {
			test.WriteString(line)
		} else {
			train.WriteString(line)
		}
	}
	files := map[string]string{"whole_edge.txt": whole.String()}
	if split {
		files[name+".train"], files[name+".test"] = train.String(), test.String()
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(path, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// cliCase is one command of a table-driven CLI test: it fails with exit
// status 1, a one-line error holding every string of wantErr and nothing
// on stdout, or (wantErr nil) succeeds and check inspects its stdout.
type cliCase struct {
	name    string
	args    []string
	wantErr []string
	check   func(t *testing.T, stdout, stderr string)
}

func (tc cliCase) run(t *testing.T) {
	t.Helper()
	out, errOut, err := runCLIStreams(t, tc.args...)
	if tc.wantErr == nil {
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if tc.check != nil {
			tc.check(t, out, errOut)
		}
		return
	}
	wantCLIErr(t, err, tc.wantErr...)
	if s := exitStatus(err); s != 1 {
		t.Errorf("exit status %d, want 1", s)
	}
	if out != "" {
		t.Errorf("stdout on failure: %q", out)
	}
}

// record decodes one train --json record.
func record(t *testing.T, out string) trainers.Record {
	t.Helper()
	var r trainers.Record
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("not a JSON record: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", out)
	}
	return r
}

// uses returns the report's uses of the given kind, "what — covered".
func uses(r trainers.Record, kind string) []string {
	var out []string
	if r.PrivacyReport == nil {
		return nil
	}
	for _, u := range r.PrivacyReport.Uses {
		if u.Kind == kind {
			out = append(out, u.What+" — "+u.Covered)
		}
	}
	return out
}

// TestRecordsStateWhatRan (issue 40, item 7): a record names the split,
// the features and the model selection that ran. ASGL's task holds out
// edges, not nodes: --split is refused (but fixed, where the dataset has
// its published edge split), and the record says "fixed" only for that
// published split and "edges:random:0.2" for a hold-out; GCN's own
// --normalize-features (l1 applied, "raw" recorded) is gone, --features l1
// is the one switch; best-validation selection on a split without
// validation nodes keeps the last epoch and the report says so.
func TestRecordsStateWhatRan(t *testing.T) {
	dir := t.TempDir()
	noSplit := writeSigned(t, dir, "toy", 60, 240, 0.5, false)
	split := writeSigned(t, filepath.Join(dir, "published"), "toy", 60, 240, 0.5, true)
	asgl := []string{"--epochs", "1", "--disc-steps", "1", "--gen-steps", "1", "--disc-batch", "8", "--gen-batch", "8", "--embedding-dim", "8", "--json"}
	trainASGL := func(dataset string, extra ...string) []string {
		return append(append([]string{"train", "asgl", "--dataset", dataset}, asgl...), extra...)
	}
	wantSplit := func(want string) func(*testing.T, string, string) {
		return func(t *testing.T, out, _ string) {
			if r := record(t, out); r.Split != want {
				t.Errorf("record split %q, want %q", r.Split, want)
			}
		}
	}
	for _, tc := range []cliCase{
		{name: "asgl --split ratio on a hold-out", args: trainASGL(noSplit, "--split", "ratio:0.5:0.2"),
			wantErr: []string{"--split ratio:0.5:0.2", "draws no node split", "holds out a fraction 0.2 of the edges at random", "leave --split out"}},
		{name: "asgl --split ratio on a published split", args: trainASGL(split, "--split", "ratio:0.5:0.2"),
			wantErr: []string{"--split ratio:0.5:0.2", "draws no node split", "edge split dataset toy comes with", "--split fixed"}},
		{name: "asgl --split fixed without a published split", args: trainASGL(noSplit, "--split", "fixed"),
			wantErr: []string{"--split fixed", "no published edge split", "at random"}},
		{name: "asgl hold-out recorded as such", args: trainASGL(noSplit), check: wantSplit("edges:random:0.2")},
		{name: "asgl published split recorded as fixed", args: trainASGL(split), check: wantSplit("fixed")},
		{name: "asgl --split fixed on a published split", args: trainASGL(split, "--split", "fixed"), check: wantSplit("fixed")},
		{name: "gcn has no --normalize-features", args: []string{"train", "gcn", "--features", "raw", "--normalize-features", "--epochs", "1"},
			wantErr: []string{"unknown flag: --normalize-features"}},
		{name: "gcn --features l1 recorded", args: []string{"train", "gcn", "--features", "l1", "--epochs", "2", "--json"},
			check: func(t *testing.T, out, _ string) {
				r := record(t, out)
				if r.Hyperparameters["features"] != "l1" {
					t.Errorf("features %v, want l1", r.Hyperparameters["features"])
				}
				if _, ok := r.Hyperparameters["normalize-features"]; ok {
					t.Errorf("the record still has normalize-features: %v", r.Hyperparameters)
				}
			}},
		{name: "no validation nodes: the last epoch is reported", args: []string{"train", "gap", "--privacy", "edge", "--epsilon", "1",
			"--split", "inductive:0.8", "--epochs", "2", "--encoder-epochs", "2", "--json"},
			check: func(t *testing.T, out, _ string) {
				sel := uses(record(t, out), "selection")
				if len(sel) != 1 || !strings.Contains(sel[0], "the last epoch") || !strings.Contains(sel[0], "no validation nodes") ||
					strings.Contains(sel[0], "best validation") {
					t.Errorf("selection uses %q: want the last epoch, because the split has no validation nodes", sel)
				}
			}},
		{name: "validation nodes: best validation accuracy", args: []string{"train", "gap", "--privacy", "edge", "--epsilon", "1",
			"--split", "ratio:0.5:0.2", "--epochs", "2", "--encoder-epochs", "2", "--json"},
			check: func(t *testing.T, out, _ string) {
				if sel := uses(record(t, out), "selection"); len(sel) != 1 || !strings.Contains(sel[0], "best validation accuracy") {
					t.Errorf("selection uses %q: want best validation accuracy", sel)
				}
			}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestBudgetRules (issue 40, item 8): one rule for ε and δ everywhere. ε
// below 1e-6 is refused by train, sweep and account alike; δ above 0.01
// (a claim that allows publishing the data outright) by train, sweep,
// inspect and account; --delta paper above it too; and without privacy a
// δ is refused like an ε.
func TestBudgetRules(t *testing.T) {
	node := []string{"train", "mlp", "--privacy", "node", "--epochs", "1"}
	sgm := []string{"account", "sgm", "--rate", "0.01", "--steps", "100"}
	sweep := []string{"sweep", "--methods", "gap", "--privacy", "edge", "--runs", "1"}
	for _, tc := range []cliCase{
		{name: "train δ 0.5", args: append(node, "--epsilon", "1", "--delta", "0.5"), wantErr: []string{"--delta 0.5", "above 0.01", "e.g. 1e-5"}},
		{name: "train δ 0.011", args: append(node, "--epsilon", "1", "--delta", "0.011"), wantErr: []string{"--delta 0.011", "above 0.01"}},
		{name: "sweep δ 0.5", args: append(sweep, "--epsilons", "1", "--delta", "0.5"), wantErr: []string{"--delta 0.5", "above 0.01"}},
		{name: "inspect δ 0.5", args: []string{"inspect", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "0.5"}, wantErr: []string{"--delta 0.5", "above 0.01"}},
		{name: "account δ 0.5", args: append(sgm, "--noise", "1", "--delta", "0.5"), wantErr: []string{"--delta 0.5", "above 0.01"}},
		{name: "δ 1", args: append(node, "--epsilon", "1", "--delta", "1"), wantErr: []string{"--delta", "(0, 0.01]"}},
		{name: "--delta paper above the ceiling", args: append(node, "--epsilon", "1", "--delta", "paper", "--dataset", "star-9"),
			wantErr: []string{"--delta paper gives δ = 0.1", "above 0.01", "pass --delta"}},
		{name: "train ε 1e-300", args: append(node, "--epsilon", "1e-300", "--delta", "1e-5"), wantErr: []string{"--epsilon 1e-300", "implausibly small", "below 1e-06"}},
		{name: "sweep ε 1e-300", args: append(sweep, "--epsilons", "1,1e-300"), wantErr: []string{"--epsilon 1e-300", "implausibly small"}},
		{name: "account ε 1e-300", args: append(sgm, "--epsilon", "1e-300", "--delta", "1e-5"), wantErr: []string{"--epsilon 1e-300", "implausibly small"}},
		{name: "selection ε 1e-300", args: append(node, "--epsilon", "1", "--delta", "1e-5", "--selection", "private", "--selection-epsilon", "1e-300"),
			wantErr: []string{"--selection-epsilon 1e-300", "implausibly small"}},
		{name: "no privacy with ε", args: []string{"train", "mlp", "--privacy", "none", "--epsilon", "1"}, wantErr: []string{"--epsilon 1", "--privacy none"}},
		{name: "no privacy with δ", args: []string{"train", "mlp", "--privacy", "none", "--delta", "1e-5"}, wantErr: []string{"--delta 1e-5", "--privacy none"}},
		{name: "no privacy with δ paper", args: []string{"train", "mlp", "--privacy", "none", "--delta", "paper"}, wantErr: []string{"--delta paper", "--privacy none"}},
		{name: "sweep without privacy with δ", args: []string{"sweep", "--methods", "gcn", "--epsilons", "inf", "--privacy", "none", "--delta", "1e-5"},
			wantErr: []string{"--delta 1e-5", "--privacy none"}},
		{name: "δ at the ceiling", args: append(node, "--epsilon", "1", "--delta", "0.01", "--json"),
			check: func(t *testing.T, out, _ string) {
				if r := record(t, out); r.Delta == nil || *r.Delta != 0.01 {
					t.Errorf("δ %v, want 0.01", r.Delta)
				}
			}},
		{name: "ε at the floor", args: append(sgm, "--epsilon", "1e-6", "--delta", "1e-5")},
		{name: "no privacy, δ auto", args: []string{"train", "mlp", "--privacy", "none", "--delta", "auto", "--epochs", "1"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestAccountHeadlineStatesProvenEpsilon (issue 40, item 9): where a paper
// mode calibrates the noise for a target its rules do not prove, the
// headline and the JSON's epsilon state the proven ε, and the target
// apart, not met; DPAR's note names the target (it said "claim ε = 0") and
// the rule used. A strict calibration meets its target and says so.
func TestAccountHeadlineStatesProvenEpsilon(t *testing.T) {
	type accountJSON struct {
		Epsilon  float64 `json:"epsilon"`
		Achieved float64 `json:"achieved_epsilon"`
		Target   float64 `json:"target_epsilon"`
		Met      *bool   `json:"target_met"`
	}
	for _, tc := range []struct {
		name   string
		args   []string
		target float64
		met    bool
	}{
		// the paper's node subsampling (DPAR's defaults train on the whole
		// training side, where linear and exact amplification coincide)
		{"dpar linear amplification", []string{"dpar", "--epsilon", "1", "--delta", "2e-3", "--train-nodes", "2396", "--amplification", "linear", "--node-rate", "0.09"}, 1, false},
		{"caribou paper sensitivity, node level", []string{"caribou", "--level", "node", "--sensitivity", "paper", "--epsilon", "8", "--delta", "1e-5", "--train-nodes", "2000"}, 8, false},
		{"gap strict", []string{"gap", "--level", "edge", "--hops", "2", "--epsilon", "1", "--delta", "1e-7"}, 1, true},
		{"dpar exact amplification", []string{"dpar", "--epsilon", "1", "--delta", "2e-3", "--train-nodes", "2396", "--node-rate", "0.09"}, 1, true},
		{"dpar defaults", []string{"dpar", "--epsilon", "1", "--delta", "2e-3", "--train-nodes", "2396"}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := runCLI(t, append([]string{"account"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, append(append([]string{"account"}, tc.args...), "--json")...)
			if err != nil {
				t.Fatal(err)
			}
			var r accountJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if r.Met == nil || *r.Met != tc.met || r.Target != tc.target {
				t.Fatalf("target_met %v, target_epsilon %v: want %v, %v", r.Met, r.Target, tc.met, tc.target)
			}
			head, _, _ := strings.Cut(text, "\n")
			if tc.met {
				if r.Epsilon != tc.target || r.Achieved > tc.target {
					t.Errorf("epsilon %v, achieved %v: want the target %v met", r.Epsilon, r.Achieved, tc.target)
				}
				if !strings.Contains(head, fmt.Sprintf("for ε ≤ %g", tc.target)) || strings.Contains(head, "NOT met") {
					t.Errorf("headline %q", head)
				}
				return
			}
			if !(r.Achieved > tc.target) || r.Epsilon != r.Achieved {
				t.Errorf("epsilon %v, achieved %v: want the proven ε (above the target %v) as epsilon", r.Epsilon, r.Achieved, tc.target)
			}
			if !strings.HasPrefix(head, "proven ε = ") || !strings.Contains(head, fmt.Sprintf("the target ε ≤ %g is NOT met", tc.target)) ||
				strings.Contains(head, "achieved") {
				t.Errorf("headline %q: want the proven ε first and the target apart, not met", head)
			}
			if strings.Contains(text, "claim ε = 0") {
				t.Errorf("output says the rules claim ε = 0:\n%s", text)
			}
		})
	}
}

// TestTuneWorkLimits (issue 40, item 11): work beyond tune's limits is
// refused before anything is built or trained: a million-point grid, an
// expected K of 10⁹ candidates (Poisson or negative binomial), --random or
// a grid times --runs over the run limit.
func TestTuneWorkLimits(t *testing.T) {
	many := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprint(i + 1)
		}
		return strings.Join(vs, ",")
	}
	node := []string{"tune", "mlp", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5"}
	for _, tc := range []cliCase{
		{name: "1000 × 1000 grid", args: []string{"tune", "mlp", "--grid", "hidden=" + many(1000), "--grid", "epochs=" + many(1000)},
			wantErr: []string{"--grid: 1000 × 1000 = 1000000 points", "limit of 10000"}},
		{name: "poisson:1e9", args: append(node, "--grid", "lr=0.01,0.05", "--candidates", "poisson:1e9"),
			wantErr: []string{"--candidates poisson:1e+09", "E[K] = 1e+09", "limit of 10000"}},
		{name: "negbin with a huge mean", args: append(node, "--grid", "lr=0.01,0.05", "--candidates", "negbin:0.5,1e-9"),
			wantErr: []string{"--candidates negbin:0.5,1e-09", "limit of 10000"}},
		{name: "default K of a big grid times runs", args: append(node, "--grid", "hidden="+many(100), "--grid", "epochs="+many(50), "--runs", "3"),
			wantErr: []string{"the default --candidates poisson:5000", "--runs 3", "about 1.5e+04 runs", "limit of 10000"}},
		{name: "--random", args: []string{"tune", "mlp", "--grid", "lr=0.01,0.05", "--random", "20000"}, wantErr: []string{"--random 20000", "limit of 10000"}},
		{name: "whole grid times runs", args: []string{"tune", "mlp", "--grid", "hidden=" + many(100), "--grid", "epochs=" + many(50), "--runs", "3"},
			wantErr: []string{"a grid of 5000 points with --runs 3", "limit of 10000"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestTuneProgress (issue 40, item 11): where K is released (selection
// privacy none, or --show-trials) the progress names each candidate's run,
// "candidate i of K"; where the tuned ε keeps K hidden it is one line with
// no count, and the progress prints the same whatever K is (the runs of K
// candidates through it, for several K); --quiet prints nothing.
func TestTuneProgress(t *testing.T) {
	tune := []string{"tune", "mlp", "--grid", "lr=0.01,0.05", "--epochs", "2"}
	private := append(append([]string{}, tune...), "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--candidates", "poisson:2", "--json")
	counted := regexp.MustCompile(`(?m)^tune: candidate (\d+) of (\d+) \(lr=0\.0[15]\), run 1 of 1$`)
	for _, tc := range []struct {
		name   string
		args   []string
		counts bool
	}{
		{"selection privacy none", tune, true},
		{"rdp, K hidden", private, false},
		{"rdp --show-trials, K printed", append(private, "--show-trials"), true},
		{"--quiet", append(tune, "--quiet"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runCLIStreams(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.counts:
				var r struct {
					Drawn *int `json:"candidates_drawn"`
				}
				if strings.HasPrefix(out, "{") {
					if err := json.Unmarshal([]byte(out), &r); err != nil || r.Drawn == nil {
						t.Fatalf("no candidates_drawn (%v): %s", err, out)
					}
				}
				m := counted.FindAllStringSubmatch(errOut, -1)
				if r.Drawn != nil && len(m) != *r.Drawn || r.Drawn == nil && len(m) != 2 {
					t.Errorf("%d candidate lines for K = %v: %q", len(m), r.Drawn, errOut)
				}
				for i, l := range m {
					if l[1] != fmt.Sprint(i+1) || l[2] != fmt.Sprint(len(m)) {
						t.Errorf("line %d: %q", i, l[0])
					}
				}
			case slices.Contains(tc.args, "--quiet"):
				if errOut != "" {
					t.Errorf("--quiet: stderr %q", errOut)
				}
			default:
				if strings.Contains(out, "candidates_drawn") {
					t.Fatalf("K is released: %s", out)
				}
				if !strings.HasPrefix(errOut, "tune: training the candidates") || strings.Count(errOut, "\n") != 1 ||
					regexp.MustCompile(`candidate \d|\d+ of \d+|progress|elapsed`).MatchString(errOut) {
					t.Errorf("progress %q: want the one line without a count", errOut)
				}
			}
		})
	}
	// The hidden progress itself: K runs of candidates through it print the
	// same as any other K (a log file sees no count, line or time more).
	var first string
	for _, k := range []int{0, 1, 7} {
		var b strings.Builder
		p := newTuneProgress(&b, false)
		for i := range k {
			rec := p.run(i, k, "lr=0.01", 0, 1, 3)
			for range 3 {
				rec.Epoch(trainers.EpochStats{})
			}
			rec.Done()
		}
		p.done()
		if k == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Errorf("K = %d prints %q, K = 0 %q", k, b.String(), first)
		}
	}
}

// TestRefusedBeforeWork (issue 40, item 12): configurations that cannot
// run are refused before anything is trained, with a message that says
// why: CARIBOU layers that read nothing of the privacy unit (sensitivity 0:
// the run used to fail after training on the ledger, "released pcmp 0
// time(s), its plan declares 1"), and a signed graph of one sign without
// privacy (a private run trains and reports NaN metrics instead: refusing
// G − v where G runs would be a release).
func TestRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	positive := writeSigned(t, dir, "positive", 60, 240, 0, false)
	caribou := []string{"train", "caribou", "--privacy", "edge", "--epsilon", "1", "--epochs", "2", "--encoder-epochs", "2"}
	for _, tc := range []cliCase{
		{name: "caribou C_L = 0 at edge level", args: append(caribou, "--lipschitz", "0"),
			wantErr: []string{"--lipschitz 0", "reads no edge", "sensitivity 0", "use --lipschitz in (0, 1)"}},
		{name: "caribou α₁ = 0 at edge level", args: append(caribou, "--alpha1", "0"),
			wantErr: []string{"--alpha1 0", "reads no edge", "sensitivity 0"}},
		{name: "caribou C_L = β = 0 at node level", args: []string{"train", "caribou", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5",
			"--lipschitz", "0", "--beta", "0"}, wantErr: []string{"--lipschitz 0 with --beta 0", "at node level", "sensitivity 0"}},
		{name: "account caribou C_L = 0", args: []string{"account", "caribou", "--lipschitz", "0", "--epsilon", "1", "--delta", "1e-5"},
			wantErr: []string{"--lipschitz 0", "sensitivity 0"}},
		{name: "caribou C_L = 0 at node level with β > 0 runs", args: []string{"train", "caribou", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5",
			"--lipschitz", "0", "--epochs", "2", "--encoder-epochs", "2"}},
		{name: "caribou C_L = 0 without privacy runs", args: append(caribou, "--lipschitz", "0", "--epsilon", "inf")},
		{name: "all-positive signed graph, no privacy", args: []string{"train", "asgl", "--dataset", positive, "--epochs", "1", "--disc-batch", "8", "--gen-batch", "8"},
			wantErr: []string{"dataset positive has edges of one sign only", "0 negative", "needs both"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestHelpAndVersionArguments (issue 40, item 12): help on a topic that
// names no command, and --version with an argument, fail with exit 1 and a
// one-line error (both exited 0); help on a command prints its help.
func TestHelpAndVersionArguments(t *testing.T) {
	for _, tc := range []cliCase{
		{name: "help bogus", args: []string{"help", "bogus"}, wantErr: []string{"help bogus", `dpgnn has no command "bogus"`, "train"}},
		{name: "help train bogus", args: []string{"help", "train", "bogus"}, wantErr: []string{`dpgnn train has no command "bogus"`, "gcn"}},
		{name: "--version extra", args: []string{"--version", "extra"}, wantErr: []string{`unknown command "extra"`}},
		{name: "-v extra", args: []string{"-v", "extra"}, wantErr: []string{`unknown command "extra"`}},
		{name: "--ver", args: []string{"--ver"}, wantErr: []string{"unknown flag: --ver"}},
		{name: "help train gcn", args: []string{"help", "train", "gcn"}, check: func(t *testing.T, out, _ string) {
			if !strings.Contains(out, "2-layer GCN") || !strings.Contains(out, "--epochs") {
				t.Errorf("help train gcn printed %q", out)
			}
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestMasksAndMemoryFlags (issue 40, item 13): --split masks with more runs
// than the dataset has masks is refused (run r uses mask r: the runs
// beyond repeated masks silently); data generate honours --max-memory, as
// the README says every generated graph does, and writes nothing when it
// refuses.
func TestMasksAndMemoryFlags(t *testing.T) {
	t.Setenv(graphs.MemoryLimitEnv, "") // --max-memory sets it; restored after the test
	dir := t.TempDir()
	out := filepath.Join(dir, "big.npz")
	cases := []cliCase{
		{name: "data generate --max-memory", args: []string{"data", "generate", "--nodes", "100000", "--out", out, "--max-memory", "10MB"},
			wantErr: []string{"100000 nodes", "limit 10 MB"}},
		{name: "data generate --max-memory bad", args: []string{"data", "generate", "--nodes", "100", "--out", out, "--max-memory", "lots"},
			wantErr: []string{`--max-memory "lots"`, "16GB"}},
		{name: "data generate within --max-memory", args: []string{"data", "generate", "--nodes", "200", "--out", filepath.Join(dir, "small.npz"), "--max-memory", "10MB"}},
	}
	if data, ok := testutil.SharedDatasets(); ok {
		cases = append(cases,
			cliCase{name: "masks beyond the published ones", args: []string{"train", "gcn", "--dataset", "actor", "--data-dir", data, "--split", "masks", "--runs", "11", "--epochs", "1"},
				wantErr: []string{"--split masks with --runs 11", "dataset actor has 10 published masks", "--runs 10 or fewer", "--split masks:K"}},
			cliCase{name: "sweep: masks beyond the published ones", args: []string{"sweep", "--methods", "gcn", "--epsilons", "inf", "--privacy", "edge", "--dataset", "actor", "--data-dir", data,
				"--split", "masks", "--runs", "12"}, wantErr: []string{"--split masks with --runs 12", "10 published masks"}},
			cliCase{name: "attack: masks beyond the published ones", args: []string{"audit", "gcn", "--attack", "linkteller", "--dataset", "actor", "--data-dir", data,
				"--split", "masks", "--runs", "11"}, wantErr: []string{"--split masks with --runs 11", "10 published masks"}},
			cliCase{name: "masks within the published ones", args: []string{"train", "gcn", "--dataset", "actor", "--data-dir", data, "--split", "masks", "--runs", "2", "--epochs", "1", "--json"},
				check: func(t *testing.T, out, _ string) {
					if r := record(t, out); r.Split != "masks" || r.Runs != 2 {
						t.Errorf("split %q, runs %d", r.Split, r.Runs)
					}
				}})
	} else {
		t.Log("real datasets not found: the --split masks cases (actor) are skipped")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(graphs.MemoryLimitEnv, "") // what --max-memory set, undone after each case
			tc.run(t)
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused graph was written")
	}
}
