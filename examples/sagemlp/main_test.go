package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/internal/testutil"
)

// buildBinary builds this package as its own program, as a researcher
// would (go build), into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example's binary")
	}
	bin := filepath.Join(t.TempDir(), "sagemlp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// exe runs the binary and returns its standard output, standard error and
// exit status.
func exe(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

// report is the part of a train --json record the test reads.
type report struct {
	Method  string `json:"method"`
	Metrics map[string]struct {
		Values []float64 `json:"values"`
	} `json:"metrics"`
	Privacy *struct {
		Level      string             `json:"level"`
		Accountant string             `json:"accountant"`
		Epsilon    float64            `json:"epsilon"`
		Delta      float64            `json:"delta"`
		Noise      map[string]float64 `json:"noise"`
		Ledger     []string           `json:"ledger"`
		Uses       []struct {
			Kind, What, Covered string
			Epsilon             *float64 `json:"epsilon"`
		} `json:"uses"`
	} `json:"privacy_report"`
}

// TestOutOfTreeMethod builds the example as its own binary and checks
// what issue 38 asks of a method outside the framework: it trains on cora
// at node level (ε = 8, δ = 1e-5, one epoch) with a complete privacy report
// — its DP-SGD release over rooted subgraphs accounted within ε, the
// occurrence bound R = 1 + D in the noise and the ledger, the degree bound, the counts, the split and the
// noise source stated, every use saying what covers it — refuses an input
// above its public degree bound with a one-line error, shows its DP nodes
// in inspect with the noise std account computes for the same counts,
// account reproduces the train run's calibrated multiplier, and audit
// replays one step on G and G − v comparing every value; without privacy
// it learns (test accuracy above 0.7); it refuses a private selection; the
// built-in methods are in the binary beside it, and a Slurm job script
// sweep emits runs this binary.
func TestOutOfTreeMethod(t *testing.T) {
	bin := buildBinary(t)
	help, _, status := exe(t, bin, "train", "--help")
	for _, name := range []string{"sagemlp", "gcn", "mlp", "gap"} {
		if status != 0 || !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("train --help (status %d) does not list %s:\n%s", status, name, help)
		}
	}

	// sweep --emit slurm names this binary, not a dpgnn, in the job script.
	dir := t.TempDir()
	script := filepath.Join(dir, "sweep.sbatch")
	_, stderr, status := exe(t, bin, "sweep", "--methods", "sagemlp", "--privacy", "node", "--epsilons", "8", "--delta", "1e-5",
		"--runs", "1", "--out", filepath.Join(dir, "s"), "--emit", "slurm", "--shards", "1", "--emit-out", script)
	if b, err := os.ReadFile(script); status != 0 || err != nil || !strings.Contains(string(b), bin+" sweep") {
		t.Errorf("sweep --emit slurm: status %d (%v), script does not run %s sweep:\n%s%s", status, err, bin, b, stderr)
	}

	data, ok := testutil.SharedDatasets()
	if !ok {
		t.Skip("the real datasets are not at ../shared/datasets or $DPGNN_DATA (the cora runs need them)")
	}
	cora := []string{"--dataset", "cora", "--data-dir", data, "--privacy", "node", "--epsilon", "8", "--delta", "1e-5", "--epochs", "1"}
	out, stderr, status := exe(t, bin, append([]string{"train", "sagemlp", "--max-degree", "168", "--json"}, cora...)...)
	if status != 0 {
		t.Fatalf("train sagemlp on cora: status %d\n%s", status, stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("train --json: %v\n%s", err, out)
	}
	p := r.Privacy
	if r.Method != "sagemlp" || len(r.Metrics["test_acc"].Values) != 1 || p == nil {
		t.Fatalf("record: method %q, metrics %v, report %v", r.Method, r.Metrics, p)
	}
	if p.Level != "node" || p.Accountant == "" || !(p.Epsilon <= 8 && p.Epsilon > 7.99) || p.Delta != 1e-5 {
		t.Errorf("report: level %q, accountant %q, ε %v, δ %v; want node, an accountant, ε calibrated to 8, δ 1e-5", p.Level, p.Accountant, p.Epsilon, p.Delta)
	}
	z, n := p.Noise["multiplier"], p.Noise
	if n["occurrences"] != 169 || !(z > 0) || math.Abs(n["std"]-z*169*2*n["clip"]) > 1e-9*n["std"] || n["steps"] != 5 {
		t.Errorf("noise %v: want R = 169 and std = multiplier·R·2·C over 5 steps (q = 64/271)", n)
	}
	if len(p.Ledger) != 1 || !strings.HasPrefix(p.Ledger[0], "Composed(count=5, Occurrences(R=169, change=2, Poisson(") {
		t.Errorf("ledger %q: want the 5 recorded steps of the group event with R = 169", p.Ledger)
	}
	covered := map[string]string{}
	for _, u := range p.Uses {
		if u.What == "" || u.Covered == "" {
			t.Errorf("use %+v does not say what it is and what covers it", u)
		}
		if _, seen := covered[u.Kind]; !seen {
			covered[u.Kind] = u.Covered
		}
		if u.Kind == "dp-sgd" && (u.Epsilon == nil || *u.Epsilon != p.Epsilon || !strings.Contains(u.What, "R=169")) {
			t.Errorf("dp-sgd use %+v: want the whole ε and R=169", u)
		}
	}
	for kind, want := range map[string]string{"dp-sgd": "accounted", "degree-bound": "public bound: the guarantee covers every graph within D=168",
		"count": "treated as public", "selection": "no private data read", "noise": "reproducible", "split": "treated as public"} {
		if !strings.HasPrefix(covered[kind], want) {
			t.Errorf("use %q covered %q, want %q…", kind, covered[kind], want)
		}
	}

	out, stderr, status = exe(t, bin, append([]string{"train", "sagemlp", "--max-degree", "10"}, cora...)...)
	if want := "dpgnn: sagemlp run 1: node level, --max-degree 10 (--degree-bound public) on cora: "; status != 1 || out != "" ||
		!strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("cora above --max-degree 10: status %d, stdout %q, stderr %q; want status 1 and one line with %q", status, out, stderr, want)
	}

	// Without privacy the same pipeline (clipped, no noise) learns cora;
	// --selection private is refused before anything is released (a node's
	// removal changes up to R = 1 + D predictions, the selection is
	// accounted for 1).
	out, stderr, status = exe(t, bin, "train", "sagemlp", "--dataset", "cora", "--data-dir", data, "--json")
	if err := json.Unmarshal([]byte(out), &r); status != 0 || err != nil || r.Privacy != nil || !(r.Metrics["test_acc"].Values[0] > 0.7) {
		t.Errorf("train sagemlp on cora without privacy: status %d (%v), test accuracy %v (want > 0.7), report %v\n%s", status, err, r.Metrics["test_acc"], r.Privacy, stderr)
	}
	out, stderr, status = exe(t, bin, "train", "sagemlp", "--privacy", "node", "--epsilon", "8", "--delta", "1e-5", "--selection", "private", "--selection-epsilon", "1")
	if want := "dpgnn: sagemlp run 1: --selection private is not supported"; status != 1 || out != "" || !strings.HasPrefix(stderr, want) {
		t.Errorf("--selection private: status %d, stdout %q, stderr %q; want status 1 and %q", status, out, stderr, want)
	}

	account := func(args ...string) map[string]any {
		out, stderr, status := exe(t, bin, append([]string{"account", "sagemlp", "--level", "node", "--epsilon", "8", "--delta", "1e-5", "--json"}, args...)...)
		var a map[string]any
		if err := json.Unmarshal([]byte(out), &a); status != 0 || err != nil {
			t.Fatalf("account sagemlp %v: status %d, %v\n%s%s", args, status, err, out, stderr)
		}
		return a
	}
	if a := account("--train-nodes", "271", "--max-degree", "168", "--epochs", "1"); a["noise"] != z || a["occurrences"] != 169.0 {
		t.Errorf("account for the cora run's counts: noise %v, occurrences %v; want the run's multiplier %v and 169", a["noise"], a["occurrences"], z)
	}

	// audit on the embedded csbm graph (200 training nodes, D = 40): one
	// DP-SGD step replayed on G and on G − v from the method's own plan and
	// examples (no audit code in the method), every gradient value
	// compared, the claim the ε of one step of the group event with R = 41.
	out, stderr, status = exe(t, bin, "audit", "sagemlp", "--privacy", "node", "--epsilon", "8", "--delta", "1e-5", "--remove-node", "0", "--trials", "60", "--json")
	var au struct {
		Release  string  `json:"release"`
		Compared int     `json:"compared_values"`
		Values   int     `json:"values"`
		Claimed  float64 `json:"claimed_epsilon"`
		LB       float64 `json:"epsilon_lb"`
		Exceeds  bool    `json:"exceeds_claim"`
		Examples int     `json:"examples"`
		Changed  int     `json:"changed_examples"`
		Covered  int     `json:"covered_examples"`
	}
	if err := json.Unmarshal([]byte(out), &au); status != 0 || err != nil {
		t.Fatalf("audit sagemlp: status %d (%v)\n%s%s", status, err, out, stderr)
	}
	if au.Examples != 200 || au.Changed < 1 || au.Changed > au.Covered || au.Covered != 41 {
		t.Errorf("audit sagemlp: the neighbour changed %d of %d examples, covering %d: want 1 … 41 of the 200, covering R = 41", au.Changed, au.Examples, au.Covered)
	}
	if !strings.Contains(au.Release, "R=41") || au.Compared == 0 || au.Compared != au.Values || !(au.Claimed > 0 && au.Claimed < 8) || au.LB > au.Claimed || au.Exceeds {
		t.Errorf("audit sagemlp: release %q, compared %d of %d values, claimed ε %v, ε_lb %v: want R=41, every value compared, one step's ε below the run's 8, ε_lb within it",
			au.Release, au.Compared, au.Values, au.Claimed, au.LB)
	}

	// inspect on the embedded csbm graph (200 training nodes, the default
	// 20 epochs and D = 40): the DP-SGD nodes, with account's noise std.
	std := account("--train-nodes", "200")["std"].(float64)
	out, stderr, status = exe(t, bin, "inspect", "sagemlp", "--privacy", "node", "--epsilon", "8", "--delta", "1e-5")
	for _, want := range []string{"GhostNormSq(conv.l.W)", "GhostNormSq(enc.0.W)", "ClipFactor(C=1)", fmt.Sprintf("GaussianNoise(enc.0.W, std=%.4g)", std)} {
		if status != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect sagemlp (status %d) lacks %q:\n%s%s", status, want, out, stderr)
		}
	}
}

// TestExampleSize holds the example to issue 38's bound: at most 150 lines
// of Go that carry code (comments and blank lines not counted).
func TestExampleSize(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	f := fs.AddFile("main.go", -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, 0) // comments skipped
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // an inserted semicolon, not code
		}
		lines[fs.Position(pos).Line] = true
	}
	if len(lines) > 150 || len(lines) < 50 {
		t.Errorf("main.go has %d lines of code, want at most 150 (and a real method: at least 50)", len(lines))
	}
	t.Logf("main.go: %d lines of code", len(lines))
}
