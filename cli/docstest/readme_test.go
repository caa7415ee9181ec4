package docstest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/cli"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
	_ "github.com/dpgnn/dpgnn/methods/all" // the built-in methods the docs run
)

// docCommand is one command a Markdown file shows: a line of a ```sh block
// (continuation lines joined, the comment dropped) or an inline code span
// of the prose that reads as a whole command (see inlineCommand). The
// words are the command's own, after any NAME=VALUE environment prefix
// (env) and a /usr/bin/time prefix; stdout is the file its standard output
// is redirected to ("": none) and then what follows `&&`.
type docCommand struct {
	text, stdout, then string
	env, words         []string
	line               int // the line of the file where it starts
}

// docCommands returns the dpgnn, go and Python-script commands of the
// Markdown file at path, in the order they appear: the commands of its
// ```sh blocks, and the inline code spans of its prose that are whole
// commands. Lines of other programs (sbatch, python3 -c) are not
// collected.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	block, sh := false, false
	cur, start := "", 0
	var para strings.Builder // the prose paragraph being read, for inline spans
	paraStart := 0
	flushPara := func() {
		out = append(out, inlineCommands(t, path, para.String(), paraStart)...)
		para.Reset()
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if !block {
				flushPara()
			}
			block = !block
			sh = block && strings.TrimSpace(line) == "```sh"
			continue
		}
		if !block {
			if strings.TrimSpace(line) == "" {
				flushPara()
				continue
			}
			if para.Len() == 0 {
				paraStart = n
			}
			para.WriteString(line + "\n")
			continue
		}
		if !sh {
			continue
		}
		s := strings.TrimSpace(line)
		if cur == "" {
			start = n
		}
		cur += " " + s
		if strings.HasSuffix(cur, `\`) {
			cur = strings.TrimSuffix(cur, `\`)
			continue
		}
		c, err := parseShell(cur)
		if err != nil {
			t.Fatalf("%s:%d: command %q: %v", path, start, cur, err)
		}
		cur = ""
		c.line = start
		if c.isOurs() {
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flushPara()
	return out
}

// codeSpan is an inline code span of Markdown prose (it may cross a line
// break).
var codeSpan = regexp.MustCompile("`([^`]+)`")

// inlineCommands returns the code spans of a prose paragraph that are
// whole commands: a span that starts with "dpgnn " or "go ", has a flag, and
// holds no placeholder (an upper-case word such as METHOD or FILE) and no
// alternatives (a|b). `dpgnn audit METHOD --attack linkteller|mia` is a
// synopsis; `dpgnn account caribou --level node ...` is a command.
func inlineCommands(t *testing.T, path, para string, line int) []docCommand {
	t.Helper()
	var out []docCommand
	for _, m := range codeSpan.FindAllStringSubmatchIndex(para, -1) {
		s := strings.Join(strings.Fields(para[m[2]:m[3]]), " ")
		if !strings.HasPrefix(s, "dpgnn ") && !strings.HasPrefix(s, "go ") || !strings.Contains(s, " -") || strings.Contains(s, "|") {
			continue
		}
		c, err := parseShell(s)
		if err != nil {
			t.Fatalf("%s:%d: inline command %q: %v", path, line, s, err)
		}
		if slices.ContainsFunc(c.words, isPlaceholder) {
			continue
		}
		c.line = line + strings.Count(para[:m[0]], "\n")
		out = append(out, c)
	}
	return out
}

// isPlaceholder reports whether w is a placeholder word of a synopsis
// (METHOD, FILE, E, N): upper-case letters only.
func isPlaceholder(w string) bool {
	return w != "" && strings.ToUpper(w) == w && strings.ToLower(w) != w && !strings.ContainsAny(w, "-=./0123456789")
}

// isOurs reports whether c runs dpgnn, the go tool or a Python script of
// the repository (the PyTorch references), and not, say, sbatch or
// `python3 -c`.
func (c docCommand) isOurs() bool {
	return len(c.words) > 0 && (c.words[0] == "dpgnn" || c.words[0] == "go" || isPythonScript(c.words))
}

// isPythonScript reports whether words run a Python script file.
func isPythonScript(words []string) bool {
	return len(words) > 1 && (words[0] == "python3" || words[0] == "/usr/bin/python3") && strings.HasSuffix(words[1], ".py")
}

// parseShell splits a command line as a POSIX shell would for the forms
// the docs use: words with '…' and "…" quoting, a # comment, "> FILE",
// "&& COMMAND", NAME=VALUE prefixes (the environment of the command) and
// a /usr/bin/time prefix with its -f FORMAT (dropped: it only measures).
func parseShell(line string) (docCommand, error) {
	var c docCommand
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
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		c.env, words = append(c.env, words[0]), words[1:]
	}
	if len(words) > 0 && (words[0] == "/usr/bin/time" || words[0] == "time") {
		words = words[1:]
		if len(words) > 1 && words[0] == "-f" {
			words = words[2:]
		}
	}
	c.words = words
	c.text = strings.Join(strings.Fields(string(rs[:i])), " ")
	return c, nil
}

// envAssignment is a NAME=VALUE word before a command.
var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// docRun says how a docs test runs one command: skip (with the reason),
// or the flags it appends to shorten a long command (the last value of a
// flag wins, so --runs 1 after --runs 5 runs once), and the error it must
// end with when the doc shows a command that fails by design.
type docRun struct {
	skip    string
	extra   []string
	wantErr string
	// parseOnly, when set, says where the command's work is run instead:
	// the command is parsed as the CLI would (checkParses), not run.
	parseOnly string
	// wantOut is text the standard output must hold: a figure the doc's
	// prose gives for a deterministic command.
	wantOut string
}

// readmeRuns are, per file, the tour commands TestREADMECommands does not
// run exactly as printed or whose output it checks, keyed by their text (continuation lines joined,
// comment dropped). Every other command runs as printed, so a new one is
// tested as soon as it is written; a key that matches no command of its
// file fails the test, so the table follows the docs.
var readmeRuns = map[string]map[string]docRun{
	"README.md": {
		"go run ./cmd/dpgnn train gcn": {extra: []string{"--epochs", "5"}},
		"dpgnn train gcn --dataset cora_ml --data-dir ../shared/datasets --runs 5 --json": {
			extra: []string{"--runs", "1", "--epochs", "5"}},
		"dpgnn train progap --dataset cora --data-dir ../shared/datasets --split ratio:0.7:0.2 --privacy edge --epsilon 1 --runs 5": {
			extra: []string{"--runs", "1", "--epochs", "2"}},
		"dpgnn train mlp --dataset cora_ml --data-dir ../shared/datasets --split inductive:0.8 --privacy node --epsilon 8 --delta 1e-5": {
			extra: []string{"--epochs", "1"}},
		"dpgnn sweep --methods mlp,gap,progap --epsilons 1,8,inf --privacy edge --dataset cora --data-dir ../shared/datasets --runs 5 --out cora-sweep": {
			extra: []string{"--runs", "1", "--set", "mlp:epochs=2", "--set", "gap:epochs=2,encoder-epochs=2", "--set", "progap:epochs=2"}},
		"dpgnn reproduce progap-cora --out progap-cora --data-dir ../shared/datasets": {extra: []string{"--quick"}},
	},
	"docs/cli.md": {
		"dpgnn data fetch cora_ml":       {skip: "needs the network (TestDataFetch runs fetch against a local mirror)"},
		"dpgnn inspect gap --grad-check": {extra: []string{"--grad-entries", "4"}},
		// The tour's and results.md's figure for DPAR's paper mode.
		"dpgnn account dpar --epsilon 1 --delta 2e-3 --train-nodes 2396 --accounting paper --amplification linear --node-rate 0.09 --rows 70 --ratio 0.5 --epochs 200 --batch-size 60 --lr 0.005 --dropout 0.1 --clip 1": {
			wantOut: "proven ε = 15068.5 "},
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
		"dpgnn train asgl --dataset bitcoin_otc --data-dir ../shared/datasets --privacy node --epsilon 4 --delta 1e-5 --degree-bound sample --runs 3": {
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
	},
}

// TestREADMECommands: every command of the README and of the CLI tour
// (docs/cli.md) runs as printed, the long ones shortened by flags appended
// (fewer runs, epochs or trials, a smaller graph: readmeRuns), in a
// scratch directory per file, with the docs' --data-dir
// ../shared/datasets pointed at the datasets the tests use and
// $DPGNN_DATA unset (a command that forgets --data-dir fails). Commands
// that need the network are listed and skipped with the reason; `go`
// commands are checked without running (checkGoCommand). A command exits 0
// (a failing-by-design one must fail with its message), writes what it
// says it writes, and, with --json, prints one JSON value.
func TestREADMECommands(t *testing.T) {
	root, data := docsInputs(t)
	t.Setenv("DPGNN_DATA", "")
	t.Setenv(graphs.MemoryLimitEnv, "")
	ran := map[string]string{}
	for _, file := range []string{"README.md", "docs/cli.md"} {
		cmds := docCommands(t, filepath.Join(root, file))
		if want := map[string]int{"README.md": 12, "docs/cli.md": 40}[file]; len(cmds) < want {
			t.Fatalf("found %d commands in %s, want its tour's (at least %d)", len(cmds), file, want)
		}
		checkRunKeys(t, file, cmds, readmeRuns[file])
		t.Run(file, func(t *testing.T) {
			t.Chdir(t.TempDir())
			// The dpgnn binary the tour builds, for --emit slurm's script.
			if err := os.WriteFile("dpgnn", []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i, c := range cmds {
				run := readmeRuns[file][c.text]
				t.Run(subtestName(i, c), func(t *testing.T) {
					runDocCommand(t, root, file, c, run, func(args []string) []string {
						for k, a := range args {
							if a == "../shared/datasets" {
								args[k] = data
							}
						}
						return append(args, run.extra...)
					}, ran)
				})
			}
		})
	}
}

// checkRunKeys fails the test for every key of runs that is not the text
// of one of cmds (the commands of file): the table follows the docs.
func checkRunKeys(t *testing.T, file string, cmds []docCommand, runs map[string]docRun) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.text] = true
	}
	for k := range runs {
		if !seen[k] {
			t.Errorf("the table for %s has %q, which is not a command of %s (any more): update the table", file, k, file)
		}
	}
}

// subtestName is "NN words": the command's index and its first words.
func subtestName(i int, c docCommand) string {
	return fmt.Sprintf("%02d %s", i, strings.Join(c.words[:min(3, len(c.words))], " "))
}

// runDocCommand runs one command of file as the docs tests do: skipped
// with run.skip's reason, a go command checked by checkGoCommand, a Python
// reference script by checkPythonCommand (neither is run), and a
// dpgnn command (or `go run ./cmd/dpgnn ...`) run in the current
// directory with its arguments rewritten by args (shortened), unless the
// same arguments already ran in this test (ran maps them to the first
// file and line). Its checks: exit 0, or run.wantErr's error; the file of
// "> FILE" and every --out, --trace, --samples and --plot written; one
// JSON value with --json; some output otherwise.
func runDocCommand(t *testing.T, root, file string, c docCommand, run docRun, args func([]string) []string, ran map[string]string) {
	t.Helper()
	where := fmt.Sprintf("%s:%d: %s", file, c.line, c.text)
	if run.skip != "" {
		t.Skipf("%s: %s", where, run.skip)
	}
	words := c.words
	switch {
	case len(words) > 3 && slices.Equal(words[:3], []string{"go", "run", "./cmd/dpgnn"}):
		words = words[3:]
	case words[0] == "go":
		if err := checkGoCommand(root, c.env, words); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		return
	case isPythonScript(words):
		if err := checkPythonCommand(root, words); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		return
	case words[0] == "dpgnn":
		words = words[1:]
	default:
		t.Fatalf("%s: not a dpgnn or go command", where)
	}
	if len(c.env) > 0 {
		t.Fatalf("%s: an environment prefix on a dpgnn command (%s) is not run by the test: add the command to the table with a reason", where, strings.Join(c.env, " "))
	}
	a := args(slices.Clone(words))
	if run.parseOnly != "" {
		if err := checkParses(a); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		t.Logf("%s: parsed, not run: %s", where, run.parseOnly)
		return
	}
	key := strings.Join(a, "\x00")
	if first, ok := ran[key]; ok && run.wantErr == "" {
		t.Logf("%s: ran above as %s", where, first)
		return
	}
	out, errOut, err := runCLIStreams(t, a...)
	if run.wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), run.wantErr) {
			t.Fatalf("%s: err %v, want %q (the doc shows it failing)", where, err, run.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v\nargs: %q\nstderr: %s", where, err, a, lastLines(errOut, 5))
	}
	ran[key] = fmt.Sprintf("%s:%d", file, c.line)
	if c.stdout != "" {
		if err := os.WriteFile(c.stdout, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.then != "" {
			t.Logf("%s: then %q not run: needs Slurm (.ci/slurm-test runs such a script)", where, c.then)
		}
		if strings.HasSuffix(c.stdout, ".sbatch") && !strings.HasPrefix(out, "#!") {
			t.Errorf("%s: %s is not a batch script: %q", where, c.stdout, lastLines(out, 3))
		}
	}
	if run.wantOut != "" && !strings.Contains(out, run.wantOut) {
		t.Errorf("%s: output lacks %q, which the doc states:\n%s", where, run.wantOut, lastLines(out, 10))
	}
	if slices.Contains(a, "--json") {
		if err := oneJSONValue(out); err != nil {
			t.Errorf("%s: --json: %v\n%s", where, err, lastLines(out, 5))
		}
	} else if out == "" && !slices.Contains(a, "--out") {
		t.Errorf("%s printed nothing", where)
	}
	for k, w := range a[:len(a)-1] {
		if w == "--out" || w == "--trace" || w == "--samples" || w == "--plot" {
			if st, err := os.Stat(a[k+1]); err != nil || st.Size() == 0 && !st.IsDir() {
				t.Errorf("%s: %s %s was not written (%v)", where, w, a[k+1], err)
			}
		}
	}
}

// oneJSONValue reports whether out is exactly one JSON value.
func oneJSONValue(out string) error {
	dec := json.NewDecoder(strings.NewReader(out))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more than one JSON value on stdout")
	}
	return nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestParseShell: the docs' shell forms.
func TestParseShell(t *testing.T) {
	for _, tc := range []struct {
		line        string
		env, words  []string
		stdout, and string
	}{
		{"dpgnn train gcn    # a comment", nil, []string{"dpgnn", "train", "gcn"}, "", ""},
		{"dpgnn tune mlp --grid 'lr=0.01,0.05' --grid \"hidden=16,64\"", nil, []string{"dpgnn", "tune", "mlp", "--grid", "lr=0.01,0.05", "--grid", "hidden=16,64"}, "", ""},
		{"dpgnn sweep --sbatch '--time=1:00:00' > sweep.sbatch && sbatch sweep.sbatch", nil, []string{"dpgnn", "sweep", "--sbatch", "--time=1:00:00"}, "sweep.sbatch", "sbatch sweep.sbatch"},
		{"dpgnn data fetch cora_ml   # `all` for every dataset", nil, []string{"dpgnn", "data", "fetch", "cora_ml"}, "", ""},
		{"dpgnn audit --grid a#b", nil, []string{"dpgnn", "audit", "--grid", "a#b"}, "", ""},
		{"DPGNN_BENCH_GRAPH=g.npz go test ./methods/all -bench 'EpochFile/gcn'", []string{"DPGNN_BENCH_GRAPH=g.npz"}, []string{"go", "test", "./methods/all", "-bench", "EpochFile/gcn"}, "", ""},
		{"/usr/bin/time -f '%M KB' dpgnn train gcn --epochs 3", nil, []string{"dpgnn", "train", "gcn", "--epochs", "3"}, "", ""},
		{"A=1 B=2 time dpgnn --help", []string{"A=1", "B=2"}, []string{"dpgnn", "--help"}, "", ""},
		{"dpgnn train gcn --set a=b", nil, []string{"dpgnn", "train", "gcn", "--set", "a=b"}, "", ""},
	} {
		c, err := parseShell(tc.line)
		if err != nil || !slices.Equal(c.env, tc.env) || !slices.Equal(c.words, tc.words) || c.stdout != tc.stdout || c.then != tc.and {
			t.Errorf("%q: env %q words %q > %q && %q (%v)", tc.line, c.env, c.words, c.stdout, c.then, err)
		}
	}
	if _, err := parseShell("dpgnn 'open"); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}

// TestDocCommandsExtraction: what docCommands collects from a Markdown
// file — sh blocks only (not go or text blocks), continuation lines
// joined, other programs left out, and inline spans only when they are
// whole commands.
func TestDocCommandsExtraction(t *testing.T) {
	md := "Run `dpgnn train gcn --epochs 2` or `dpgnn audit METHOD --attack a|b`;\n" +
		"`dpgnn data info` names no flag, `go test ./cmd/dpgnn -run\nTestX` crosses a line.\n\n" +
		"```sh\ndpgnn train gap \\\n    --hops 1   # one hop\n/usr/bin/python3 ref.py --runs 8\n" +
		"    # a comment line\nX=1 go test ./dp -bench Y\npython3 -c \"print(1)\"\nsbatch x.sbatch\n```\n\n```go\ndpgnn := 1\n```\n\n```\ndpgnn train mlp\n```\n"
	path := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range docCommands(t, path) {
		got = append(got, fmt.Sprintf("%d %s", c.line, c.text))
	}
	want := []string{
		"1 dpgnn train gcn --epochs 2",
		"2 go test ./cmd/dpgnn -run TestX",
		"6 dpgnn train gap --hops 1",
		"8 /usr/bin/python3 ref.py --runs 8",
		"10 X=1 go test ./dp -bench Y",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// docsInputs is the repository root and the real datasets the command
// tests run on, or a skip saying which is missing.
func docsInputs(t *testing.T) (root, data string) {
	t.Helper()
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	data, ok = testutil.SharedDatasets()
	if !ok {
		t.Skip("real datasets not found: set DPGNN_DATA or place them at ../shared/datasets beside the repository")
	}
	return root, data
}

// runCLIStreams runs the dpgnn command args in-process (cli.Command) and
// returns its standard output, its standard error and its error.
func runCLIStreams(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := cli.Command(&out, &errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}
