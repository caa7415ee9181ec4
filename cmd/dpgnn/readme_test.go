package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
)

// readmeCommand is one command of the README's shell blocks: its text
// (continuation lines joined, the comment dropped), its words, and the
// file its standard output is redirected to ("" : none), and what follows
// `&&` (a second command).
type readmeCommand struct {
	text, stdout, then string
	words              []string
}

// readmeCommands returns the commands of the ```sh blocks of the README
// at path: the lines that start with dpgnn or go, with their
// continuation lines.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	in, cur := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			in = !in && strings.TrimSpace(line) == "```sh"
			continue
		}
		s := strings.TrimSpace(line)
		if !in || cur == "" && !strings.HasPrefix(s, "dpgnn ") && !strings.HasPrefix(s, "go ") {
			continue
		}
		cur += " " + s
		if strings.HasSuffix(cur, `\`) {
			cur = strings.TrimSuffix(cur, `\`)
			continue
		}
		c, err := parseShell(cur)
		if err != nil {
			t.Fatalf("README command %q: %v", cur, err)
		}
		out = append(out, c)
		cur = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseShell splits a README command line as a POSIX shell would for the
// forms the README uses: words with '…' and "…" quoting, a # comment,
// "> FILE" and "&& COMMAND".
func parseShell(line string) (readmeCommand, error) {
	var c readmeCommand
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	rs := []rune(line)
	i := 0
loop:
	for ; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			end()
		case r == '#' && !inWord:
			break loop
		case r == '&' && i+1 < len(rs) && rs[i+1] == '&':
			end()
			c.then = strings.TrimSpace(string(rs[i+2:]))
			break loop
		case r == '>' && !inWord:
			end()
			words = append(words, ">")
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return c, fmt.Errorf("unterminated %c", quote)
	}
	end()
	if k := slices.Index(words, ">"); k >= 0 {
		if k != len(words)-2 {
			return c, fmt.Errorf("want > FILE at the end")
		}
		c.stdout, words = words[k+1], words[:k]
	}
	c.words = words
	c.text = strings.Join(strings.Fields(string(rs[:i])), " ")
	return c, nil
}

// readmeRun says how the README test runs one command: skip (with the
// reason), or the flags it appends to shorten a long command (the last
// value of a flag wins, so --runs 1 after --runs 5 runs once), and the
// error it must end with when the README shows a command that fails by
// design.
type readmeRun struct {
	skip    string
	extra   []string
	wantErr string
}

// readmeRuns are the README commands the test does not run exactly as
// printed, keyed by their text (continuation lines joined, comment
// dropped). Every other README command runs as printed, so a new one is
// tested as soon as it is written; a key that matches no command fails
// the test, so the table follows the README.
var readmeRuns = map[string]readmeRun{
	"go test ./...":                  {skip: "the test suite itself"},
	"dpgnn data fetch cora_ml":       {skip: "needs the network (TestDataFetch runs fetch against a local mirror)"},
	"go run ./cmd/dpgnn train gcn":   {extra: []string{"--epochs", "5"}},
	"dpgnn inspect gap --grad-check": {extra: []string{"--grad-entries", "4"}},
	"dpgnn train gcn --dataset cora_ml --data-dir ../shared/datasets --split per-class:20:500:1000 --runs 5 --json": {
		extra: []string{"--runs", "1", "--epochs", "5"}},
	"dpgnn train mlp --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2": {extra: []string{"--epochs", "5"}},
	"dpgnn train mlp --dataset cora_ml --data-dir ../shared/datasets --split inductive:0.8 --privacy node --epsilon 8 --delta 1e-5 --trace steps.jsonl": {
		extra: []string{"--epochs", "1"}},
	"dpgnn train progap --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --privacy edge --epsilon 1 --runs 5": {
		extra: []string{"--runs", "1", "--epochs", "2"}},
	"dpgnn train gap --dataset cora --data-dir ../shared/datasets --split ratio:0.6:0.2 --privacy node --epsilon 8 --delta 1e-4 --max-degree 170": {
		extra: []string{"--epochs", "1", "--encoder-epochs", "1"}},
	"dpgnn train progap --dataset cora --data-dir ../shared/datasets --split ratio:0.7:0.2 --privacy edge --epsilon 1 --runs 5": {
		extra: []string{"--runs", "1", "--epochs", "2"}},
	"dpgnn train gap --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --privacy edge --epsilon 8 --encoder-folds 5 --dropout 0.5 --hops 1 --runs 5": {
		extra: []string{"--runs", "1", "--epochs", "2", "--encoder-epochs", "2"}},
	"dpgnn train caribou --dataset cora --data-dir ../shared/datasets --split ratio:0.7:0.2 --privacy edge --epsilon 1 --hops 10 --lipschitz 0.9 --runs 5": {
		extra: []string{"--runs", "1", "--epochs", "2", "--encoder-epochs", "2"}},
	"dpgnn train dpar --dataset cora_ml --data-dir ../shared/datasets --privacy node --epsilon 8 --delta 2e-3 --variant em1 --runs 5": {
		extra: []string{"--runs", "1", "--epochs", "1"}},
	"dpgnn audit dpar --dataset cora_ml --data-dir ../shared/datasets --privacy node --epsilon 8 --delta 2e-3 --remove-node 1 --release sgd --trials 200": {
		extra: []string{"--trials", "50"}},
	"dpgnn train asgl --dataset bitcoin_otc --data-dir ../shared/datasets --runs 3": {
		extra: []string{"--runs", "1", "--epochs", "1", "--disc-steps", "1", "--gen-steps", "1"}},
	"dpgnn train asgl --dataset bitcoin_otc --data-dir ../shared/datasets --privacy node --epsilon 4 --delta 1e-5 --degree-bound cap --runs 3": {
		extra: []string{"--runs", "1", "--epochs", "1", "--disc-steps", "1", "--gen-steps", "1"}},
	"dpgnn train gcon --dataset cora_ml --data-dir ../shared/datasets --privacy edge --epsilon 1 --runs 5": {extra: []string{"--runs", "1"}},
	"dpgnn train gcon --dataset actor --data-dir ../shared/datasets --split masks --steps 0,1 --privacy edge --epsilon 1 --runs 5": {
		extra: []string{"--runs", "1"}},
	"dpgnn sweep --methods mlp,gap,progap,gcn --epsilons 1,8,inf --privacy edge --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --runs 5 --out cora-sweep --workers 2": {
		extra: []string{"--runs", "1", "--set", "mlp:epochs=2", "--set", "gap:epochs=2,encoder-epochs=2", "--set", "progap:epochs=2", "--set", "gcn:epochs=2"}},
	"dpgnn sweep --methods mlp,gap,progap,gcn --epsilons 1,8,inf --privacy edge --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --runs 5 --out cora-sweep --emit slurm --shards 10 --sbatch '--time=1:00:00' > sweep.sbatch": {
		// The script runs the built binary: ./dpgnn stands in for it (the
		// test binary, a temporary build, is refused).
		extra: []string{"--runs", "1", "--set", "mlp:epochs=2", "--set", "gap:epochs=2,encoder-epochs=2", "--set", "progap:epochs=2", "--set", "gcn:epochs=2",
			"--dpgnn", "dpgnn"}},
	"dpgnn reproduce progap-cora --out progap-cora --data-dir ../shared/datasets":                                    {extra: []string{"--quick"}},
	"dpgnn audit progap --privacy node --epsilon 8 --delta 1e-5 --dataset star --remove-node 0 --trials 2000 --json": {extra: []string{"--trials", "200"}},
	// Fails by design: the papers' sampling on an input above the bound.
	"dpgnn audit gap --privacy node --epsilon 8 --delta 1e-5 --dataset spread-1000 --remove-node 0 --degree-bound sample --max-degree 100 --width 1 --multiplier 1.0424 --trials 2000 --fail-above": {
		extra: []string{"--trials", "60"}, wantErr: "exceeds the claimed ε 4.172"},
	"dpgnn audit gcon --privacy edge --epsilon 1 --dataset cora --data-dir ../shared/datasets --remove-edge 0,1184": {extra: []string{"--trials", "20"}},
	"dpgnn audit dpar --dataset star-9 --split ratio:0.9:0.05 --privacy node --epsilon 4 --delta 1e-5 --remove-node 3 --trials 2000 --samples star9.npz": {
		extra: []string{"--trials", "200"}},
	"dpgnn audit caribou --attack linkteller --dataset cora --data-dir ../shared/datasets --split ratio:0.7:0.2 --privacy edge --epsilon 1 --runs 3": {
		extra: []string{"--runs", "1", "--epochs", "2", "--encoder-epochs", "2"}},
	"dpgnn audit gap --attack mia --dataset cora --data-dir ../shared/datasets --privacy edge --epsilon 8": {
		extra: []string{"--epochs", "2", "--encoder-epochs", "2"}},
	"dpgnn data generate --nodes 1e6 --avg-degree 10 --float32 --out 1m.npz": {extra: []string{"--nodes", "2000"}},
	"dpgnn data generate --kind csbm --nodes 100000 --out big.npz":           {extra: []string{"--nodes", "2000"}},
}

// TestREADMECommands: every command in the README runs as printed, the
// long ones shortened by flags appended (fewer runs, epochs or trials, a
// smaller graph: readmeRuns), in a scratch directory, with the README's
// --data-dir ../shared/datasets pointed at the datasets the tests use.
// Commands that need the network or Slurm are listed and skipped with the
// reason. A command exits 0 (the README's one failing-by-design audit
// must fail with its message), writes what it says it writes, and, with
// --json, prints one JSON value.
func TestREADMECommands(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	data, ok := testutil.SharedDatasets()
	if !ok {
		t.Skip("real datasets not found: set DPGNN_DATA or place them at ../shared/datasets beside the repository")
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 30 {
		t.Fatalf("found %d commands in README.md, want the tour's (at least 30)", len(cmds))
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.text] = true
	}
	for k := range readmeRuns {
		if !seen[k] {
			t.Errorf("readmeRuns has %q, which is not a README command (any more): update the table", k)
		}
	}
	t.Chdir(t.TempDir())
	t.Setenv(graphs.MemoryLimitEnv, "")
	// The dpgnn binary the README builds, for --emit slurm's script.
	if err := os.WriteFile("dpgnn", []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		t.Run(fmt.Sprintf("%02d %s", i, strings.Join(c.words[:min(3, len(c.words))], " ")), func(t *testing.T) {
			run := readmeRuns[c.text]
			if run.skip != "" {
				t.Skipf("%s: %s", c.text, run.skip)
			}
			args := c.words
			switch {
			case len(args) > 3 && slices.Equal(args[:3], []string{"go", "run", "./cmd/dpgnn"}):
				args = args[3:]
			case len(args) > 0 && args[0] == "dpgnn":
				args = args[1:]
			default:
				t.Fatalf("%q: not a dpgnn command (add it to readmeRuns with a reason to skip)", c.text)
			}
			args = slices.Clone(args)
			for k, a := range args {
				if a == "../shared/datasets" {
					args[k] = data
				}
			}
			args = append(args, run.extra...)
			out, errOut, err := runCLIStreams(t, args...)
			if run.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), run.wantErr) {
					t.Fatalf("%s: err %v, want %q (the README shows it failing)", c.text, err, run.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v\nstderr: %s", c.text, err, lastLines(errOut, 5))
			}
			if c.stdout != "" {
				if err := os.WriteFile(c.stdout, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				if c.then != "" {
					t.Logf("%s: then %q skipped: needs Slurm", c.text, c.then)
				}
				if strings.HasSuffix(c.stdout, ".sbatch") && !strings.HasPrefix(out, "#!") {
					t.Errorf("%s: %s is not a batch script: %q", c.text, c.stdout, lastLines(out, 3))
				}
			}
			if slices.Contains(args, "--json") {
				record(t, out)
			} else if out == "" && !slices.Contains(args, "--out") {
				t.Errorf("%s printed nothing", c.text)
			}
			for k, a := range args[:len(args)-1] {
				if a == "--out" || a == "--trace" || a == "--samples" || a == "--plot" {
					if st, err := os.Stat(args[k+1]); err != nil || st.Size() == 0 && !st.IsDir() {
						t.Errorf("%s: %s %s was not written (%v)", c.text, a, args[k+1], err)
					}
				}
			}
		})
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestParseShell: the README's shell forms.
func TestParseShell(t *testing.T) {
	for _, tc := range []struct {
		line        string
		words       []string
		stdout, and string
	}{
		{"dpgnn train gcn    # a comment", []string{"dpgnn", "train", "gcn"}, "", ""},
		{"dpgnn tune mlp --grid 'lr=0.01,0.05' --grid \"hidden=16,64\"", []string{"dpgnn", "tune", "mlp", "--grid", "lr=0.01,0.05", "--grid", "hidden=16,64"}, "", ""},
		{"dpgnn sweep --sbatch '--time=1:00:00' > sweep.sbatch && sbatch sweep.sbatch", []string{"dpgnn", "sweep", "--sbatch", "--time=1:00:00"}, "sweep.sbatch", "sbatch sweep.sbatch"},
		{"dpgnn data fetch cora_ml   # `all` for every dataset", []string{"dpgnn", "data", "fetch", "cora_ml"}, "", ""},
		{"dpgnn audit --grid a#b", []string{"dpgnn", "audit", "--grid", "a#b"}, "", ""},
	} {
		c, err := parseShell(tc.line)
		if err != nil || !slices.Equal(c.words, tc.words) || c.stdout != tc.stdout || c.then != tc.and {
			t.Errorf("%q: %q > %q && %q (%v)", tc.line, c.words, c.stdout, c.then, err)
		}
	}
	if _, err := parseShell("dpgnn 'open"); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}
