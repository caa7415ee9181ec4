package docstest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/cli"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// referenceDocs are the reference pages whose commands TestDocsCommands
// runs shortened: each number of results.md and performance.md comes with
// the command that measured it, and privacy.md and extending.md show
// commands in their arguments.
var referenceDocs = []string{"docs/results.md", "docs/performance.md", "docs/privacy.md", "docs/extending.md"}

// docsRuns are the commands of the reference pages that TestDocsCommands
// does not run with shortFlags alone, per file, keyed by their text: a
// reason to skip, flags appended after shortFlags', the error of a
// command the page shows failing by design, or a figure of the page's
// prose its output must hold. A key that matches no command
// of its file fails the test.
var docsRuns = map[string]map[string]docRun{
	"docs/privacy.md": {
		// Prose that names the flag, not a command.
		"dpgnn audit --remove-node": {skip: "names a flag in prose; not a command"},
		// "10.38 (pld) for the paper's ε = 8" (Theorem 9 as printed, node level).
		"dpgnn account caribou --level node --epsilon 8 --delta 1e-5 --train-nodes 1895 --max-degree 168 --alpha1 0.9 --beta 2 --sensitivity paper": {
			wantOut: "proven ε = 10.3752 "},
	},
}

// The values shortFlags gives: every epoch and step count of the method's
// config, the runs, the audit's releases per side (at most) and a
// generated graph's nodes (at most).
const (
	docsEpochs = "1"
	docsRuns1  = "1"
	docsTrials = 50 // the audit's smallest: 10 releases to choose the test, 40 to evaluate it
	docsNodes  = 2000
)

// TestDocsCommands: every dpgnn command of the reference pages
// (referenceDocs: the 5-run real-dataset trainings behind results.md, the
// scale runs of performance.md, the audits and account calls of
// privacy.md, the method of extending.md) runs as printed with flags
// appended by shortFlags — one run, every epoch and step count of the
// method's config at 1, at most 50 releases per audit side, at most 2,000
// generated nodes — so every flag name, value, dataset name and method
// name is parsed and validated and the whole path trained once: a renamed
// flag or an invalid value fails here. A `reproduce` command is parsed
// (checkParses: its flags and its preset), not run: every preset runs end
// to end with --quick in TestReproduceQuickEveryPreset. Commands run in a
// scratch
// directory per page, in order (a later command reads what an earlier one
// wrote), with $DPGNN_DATA pointing at the real datasets, as the pages
// say. `go` commands and the Python references are checked without
// running (checkGoCommand, checkPythonCommand).
func TestDocsCommands(t *testing.T) {
	root, data := docsInputs(t)
	t.Setenv("DPGNN_DATA", data)
	t.Setenv(graphs.MemoryLimitEnv, "")
	ran := map[string]string{}
	for _, file := range referenceDocs {
		cmds := docCommands(t, filepath.Join(root, file))
		checkRunKeys(t, file, cmds, docsRuns[file])
		t.Run(file, func(t *testing.T) {
			t.Chdir(t.TempDir())
			for i, c := range cmds {
				run := docsRuns[file][c.text]
				if len(c.words) > 1 && c.words[0] == "dpgnn" && c.words[1] == "reproduce" && run.skip == "" {
					run.parseOnly = "the preset runs end to end with --quick in TestReproduceQuickEveryPreset"
				}
				t.Run(subtestName(i, c), func(t *testing.T) {
					runDocCommand(t, root, file, c, run, func(args []string) []string {
						extra, err := shortFlags(args)
						if err != nil {
							t.Fatalf("%s:%d: %s: %v", file, c.line, c.text, err)
						}
						return append(append(args, extra...), run.extra...)
					}, ran)
				})
			}
		})
	}
}

// shortFlags returns the flags that shorten the dpgnn command args (its
// words after "dpgnn") without changing what it checks: for train, audit
// and tune, --runs 1, every integer flag of the method's config counting
// epochs or steps (--epochs, --encoder-epochs, --disc-steps, ...) at 1
// and at most 50 --trials; for sweep, --runs 1 and the same config flags
// by --set for each of its methods; --quick for reproduce; at most 2,000
// --nodes for data generate. Only flags the command has are given, so a
// command without them runs as printed. An error is a command the CLI
// does not know.
func shortFlags(args []string) ([]string, error) {
	cmd, _, err := findCommand(args)
	if err != nil {
		return nil, err
	}
	path := strings.Fields(cmd.CommandPath())[1:]
	if len(path) == 0 {
		return nil, nil
	}
	var extra []string
	set := func(name, value string) {
		if cmd.Flags().Lookup(name) != nil {
			extra = append(extra, "--"+name+"="+value)
		}
	}
	switch path[0] {
	case "train", "audit", "tune":
		if path[0] == "audit" && len(path) == 1 {
			break
		}
		if _, attack := lastFlag(args, "attack"); attack || path[0] != "audit" {
			set("runs", docsRuns1) // audit's --runs is for an attack only
		}
		for _, name := range countFlags(cmd.Flags()) {
			set(name, docsEpochs)
		}
		if v, ok := lastFlag(args, "trials"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > docsTrials {
				set("trials", strconv.Itoa(docsTrials))
			}
		}
	case "sweep":
		methodList, ok := lastFlag(args, "methods")
		if !ok {
			if _, from := lastFlag(args, "from"); from {
				break // a redraw: nothing trains
			}
			methodList = cmd.Flags().Lookup("methods").DefValue
		}
		set("runs", docsRuns1)
		for _, label := range strings.Split(methodList, ",") {
			name, _, _ := strings.Cut(label, "@")
			mc, _, err := findCommand([]string{"train", name})
			if err != nil {
				return nil, fmt.Errorf("sweep --methods %s: %w", label, err)
			}
			var kv []string
			for _, f := range countFlags(mc.Flags()) {
				kv = append(kv, f+"="+docsEpochs)
			}
			if len(kv) > 0 {
				extra = append(extra, "--set", label+":"+strings.Join(kv, ","))
			}
		}
	case "reproduce":
		set("quick", "true")
	case "data":
		if len(path) > 1 && path[1] == "generate" {
			v, ok := lastFlag(args, "nodes")
			if n, err := strconv.ParseFloat(v, 64); !ok || err != nil || n > docsNodes {
				set("nodes", strconv.Itoa(docsNodes))
			}
		}
	}
	return extra, nil
}

// countRe matches the flag names of epoch and step counts.
var countRe = regexp.MustCompile(`(^|-)(epochs|steps)$`)

// countFlags lists the integer flags of fs that count epochs or steps. On
// train, audit and tune every one of them is a key of the method's config
// (TestShortFlags checks it for every method); account commands, whose
// --steps is an input of the calculation, are not shortened.
func countFlags(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "int" && countRe.MatchString(f.Name) {
			out = append(out, f.Name)
		}
	})
	return out
}

// findCommand is the command of a fresh CLI that args (the words after
// "dpgnn") run, and the arguments left for it, refusing words that name
// no command (cobra's Find returns the deepest command it knows and
// leaves unknown words as arguments).
func findCommand(args []string) (*cobra.Command, []string, error) {
	root := cli.Command(io.Discard, io.Discard)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, nil, err
	}
	if cmd.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return nil, nil, fmt.Errorf("%q: unknown command of %q", rest[0], cmd.CommandPath())
	}
	return cmd, rest, nil
}

// checkParses parses args (the words after "dpgnn") as the CLI would
// before running them: the command exists, every flag is one of its
// flags with a value of the flag's type, the positional arguments are
// what it accepts, and a reproduce preset exists.
func checkParses(args []string) error {
	cmd, rest, err := findCommand(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	pos := cmd.Flags().Args()
	if err := cmd.ValidateArgs(pos); err != nil {
		return err
	}
	if cmd.Name() == "reproduce" && len(pos) > 0 {
		names, err := presetNames()
		if err != nil {
			return err
		}
		for _, p := range pos {
			if !slices.Contains(names, p) {
				return fmt.Errorf("reproduce: no preset %q (presets: %s)", p, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// presetNames are the presets `dpgnn reproduce --list` lists: the first
// word of each line after its header.
func presetNames() ([]string, error) {
	var out bytes.Buffer
	root := cli.Command(&out, io.Discard)
	root.SetArgs([]string{"reproduce", "--list"})
	if err := root.Execute(); err != nil {
		return nil, fmt.Errorf("reproduce --list: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "NAME") {
		return nil, fmt.Errorf("reproduce --list printed no table of presets: %q", out.String())
	}
	var names []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// lastFlag is the value of the last --name VALUE or --name=VALUE of
// args, as the CLI would read it.
func lastFlag(args []string, name string) (string, bool) {
	v, ok := "", false
	for k, a := range args {
		switch {
		case a == "--"+name && k+1 < len(args):
			v, ok = args[k+1], true
		case strings.HasPrefix(a, "--"+name+"="):
			v, ok = strings.TrimPrefix(a, "--"+name+"="), true
		}
	}
	return v, ok
}

// goFlagsWithValue are the go test and go build flags the docs use that
// take a value.
var goFlagsWithValue = map[string]bool{"-run": true, "-bench": true, "-fuzz": true, "-benchtime": true, "-fuzztime": true,
	"-count": true, "-timeout": true, "-o": true, "-ldflags": true, "-tags": true, "-cpu": true, "-p": true}

// checkGoCommand checks a `go build|test|vet` command of the docs without
// running it (a benchmark or a fuzz target takes minutes): every package
// exists; for go test, -run (alone), -bench and -fuzz match a test,
// benchmark or fuzz target of those packages (-fuzz exactly one, in one
// package, as go test requires), the names matched level by level as go
// test does; every NAME= of the environment prefix is read by one of the
// packages.
func checkGoCommand(root string, env, words []string) error {
	if len(words) < 2 {
		return fmt.Errorf("a go command without a subcommand")
	}
	sub := words[1]
	switch sub {
	case "build", "test", "vet", "run":
	default:
		return fmt.Errorf("go %s: not a command the docs test checks", sub)
	}
	flags := map[string]string{}
	var pkgs []string
	for k := 2; k < len(words); k++ {
		w := words[k]
		name, value, hasValue := strings.Cut(w, "=")
		switch {
		case goFlagsWithValue[name] && hasValue:
			flags[name] = value
		case goFlagsWithValue[w]:
			if k+1 >= len(words) {
				return fmt.Errorf("%s without a value", w)
			}
			flags[w] = words[k+1]
			k++
		case strings.HasPrefix(w, "-"):
			// a boolean flag (-benchmem, -short, -v, -race)
		default:
			pkgs = append(pkgs, w)
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	var dirs []string
	for _, p := range pkgs {
		if !strings.HasPrefix(p, ".") {
			return fmt.Errorf("package %q: the docs name packages by their path from the repository root (./...)", p)
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok || p == "./..." {
			if p == "./..." {
				base = "."
			}
			if st, err := os.Stat(filepath.Join(root, base)); err != nil || !st.IsDir() {
				return fmt.Errorf("package pattern %s: no directory %s", p, base)
			}
			continue
		}
		dir := filepath.Join(root, p)
		if goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(goFiles) == 0 {
			return fmt.Errorf("package %s: no Go files in %s", p, dir)
		}
		dirs = append(dirs, dir)
	}
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !moduleMentions(root, `"`+name+`"`) {
			return fmt.Errorf("%s: no Go file of the module names it (as a string literal)", name)
		}
	}
	if sub != "test" {
		return nil
	}
	funcs := map[string][]string{} // kind → names, over dirs
	perDir := map[string]map[string][]string{}
	for _, d := range dirs {
		perDir[d] = testFuncs(d)
		for k, v := range perDir[d] {
			funcs[k] = append(funcs[k], v...)
		}
	}
	if len(dirs) == 0 {
		return nil // ./...: every package exists by construction
	}
	if pat, ok := flags["-fuzz"]; ok {
		if len(dirs) != 1 {
			return fmt.Errorf("-fuzz %s: go test fuzzes one package, got %d", pat, len(dirs))
		}
		if n := countMatches(pat, funcs["Fuzz"]); n != 1 {
			return fmt.Errorf("-fuzz %s matches %d fuzz targets of %s, want exactly 1", pat, n, pkgs[0])
		}
	}
	if pat, ok := flags["-bench"]; ok {
		if countMatches(pat, funcs["Benchmark"]) == 0 {
			return fmt.Errorf("-bench %s matches no benchmark of %s", pat, strings.Join(pkgs, " "))
		}
	}
	_, bench := flags["-bench"]
	_, fuzz := flags["-fuzz"]
	if pat, ok := flags["-run"]; ok && !bench && !fuzz {
		if countMatches(pat, append(append(funcs["Test"], funcs["Example"]...), funcs["Fuzz"]...)) == 0 {
			return fmt.Errorf("-run %s matches no test of %s", pat, strings.Join(pkgs, " "))
		}
	}
	return nil
}

// checkPythonCommand checks a command that runs one of the repository's
// Python reference scripts without running it (they need PyTorch and take
// minutes): the script exists and declares every --flag the command
// gives (argparse's add_argument('--flag', ...)).
func checkPythonCommand(root string, words []string) error {
	script := filepath.Join(root, words[1])
	b, err := os.ReadFile(script)
	if err != nil {
		return err
	}
	for _, w := range words[2:] {
		name, _, _ := strings.Cut(w, "=")
		if strings.HasPrefix(name, "--") && !strings.Contains(string(b), "add_argument('"+name+"'") && !strings.Contains(string(b), `add_argument("`+name+`"`) {
			return fmt.Errorf("%s declares no %s", words[1], name)
		}
	}
	return nil
}

// testFuncDecl is a top-level test, benchmark, fuzz target or example.
var testFuncDecl = regexp.MustCompile(`(?m)^func (Test|Benchmark|Fuzz|Example)(\w*)\(`)

// testFuncs returns the tests, benchmarks, fuzz targets and examples
// declared in the _test.go files of dir, by kind.
func testFuncs(dir string) map[string][]string {
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, m := range testFuncDecl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = append(out[m[1]], m[1]+m[2])
		}
	}
	return out
}

// countMatches counts the names the go test pattern pat selects at the
// top level (the part before the first '/', or each alternative of a
// top-level '|'... as go test splits a pattern by '/' into levels).
func countMatches(pat string, names []string) int {
	top, _, _ := strings.Cut(pat, "/")
	re, err := regexp.Compile(top)
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		if re.MatchString(name) {
			n++
		}
	}
	return n
}

// moduleMentions reports whether a Go file under root, other than the
// docs tests' own, contains s.
func moduleMentions(root, s string) bool {
	found := false
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case found:
			return filepath.SkipAll
		case err != nil:
			return nil
		case d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root:
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		case slices.Contains([]string{"docs_test.go", "readme_test.go"}, d.Name()) && filepath.Base(filepath.Dir(path)) == "dpgnn":
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), s) {
			found = true
		}
		return nil
	})
	return found
}

// TestCheckGoCommand: the static check of the docs' go commands refuses a
// missing package, a benchmark or fuzz target that is not there, and an
// environment variable the package does not read.
func TestCheckGoCommand(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"go test ./...", true},
		{"go build -o dpgnn ./cmd/dpgnn", true},
		{"go test ./cli/docstest -run TestREADMECommands", true},
		{"go test ./cli -run TestREADMECommands", false}, // moved out of cli
		{"go test ./cli -run TestTrainRecordProvenance", true},
		{"go test ./cli -run TestNoSuchTest", false},
		{"go test ./nosuchpackage -run X", false},
		{"go test ./dp -run '^$' -bench 'RDPEpsilon|NoSuch'", true},
		{"go test ./dp -run '^$' -bench NoSuchBenchmark", false},
		{"go test ./cli -run '^$' -fuzz '^FuzzCLIFlags$' -fuzztime 60s", true},
		{"go test ./cli -run '^$' -fuzz '^FuzzNoSuch$'", false},
		{"go test ./cli ./dp -fuzz FuzzCLIFlags", false},
		{"DPGNN_BENCH_GRAPH=g.npz go test ./methods/all -run '^$' -bench 'EpochFile/gcn' -benchtime 1x", true},
		{"DPGNN_NO_SUCH=g.npz go test ./methods/all -run '^$' -bench EpochFile", false},
	} {
		c, err := parseShell(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkGoCommand(root, c.env, c.words); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.line, err, tc.ok)
		}
	}
}

// TestCheckPythonCommand: a reference script's flags are checked against
// its argparse declarations.
func TestCheckPythonCommand(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	for _, tc := range []struct {
		words []string
		ok    bool
	}{
		{[]string{"/usr/bin/python3", "docs/reference/gap_cora.py", "--sigma", "5.28", "--runs", "8"}, true},
		{[]string{"python3", "docs/reference/gap_cora.py", "--mode", "caribou", "--no-such", "1"}, false},
		{[]string{"python3", "docs/reference/no_such.py"}, false},
	} {
		if err := checkPythonCommand(root, tc.words); (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.words, err, tc.ok)
		}
	}
}

// TestShortFlags: the flags TestDocsCommands appends, derived from the
// command's own flags and the method's config.
func TestShortFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string // flags that must be among them, prefixes that must not
	}{
		{[]string{"train", "gap", "--epochs", "400"}, []string{"--runs=1", "--epochs=1", "--encoder-epochs=1"}, []string{"--trials", "--steps"}},
		{[]string{"train", "asgl"}, []string{"--disc-steps=1", "--gen-steps=1", "--epochs=1"}, nil},
		{[]string{"train", "gcon", "--steps", "0,1"}, []string{"--encoder-epochs=1", "--adam-epochs=1"}, []string{"--steps"}},
		{[]string{"audit", "gap", "--trials", "2000"}, []string{"--trials=50", "--epochs=1"}, []string{"--runs"}},
		{[]string{"audit", "gap", "--attack", "mia", "--runs", "3"}, []string{"--runs=1", "--epochs=1"}, []string{"--trials"}},
		{[]string{"audit", "gcon", "--trials", "10"}, nil, []string{"--trials"}},
		{[]string{"audit", "gaussian", "--trials", "10000"}, []string{"--trials=50"}, []string{"--epochs"}},
		{[]string{"tune", "mlp", "--grid", "lr=0.1,0.2"}, []string{"--runs=1", "--epochs=1"}, nil},
		{[]string{"sweep", "--methods", "gcn,gap@x"}, []string{"--runs=1", "--set", "gcn:epochs=1", "gap@x:encoder-epochs=1,epochs=1"}, nil},
		{[]string{"sweep", "--from", "d"}, nil, []string{"--runs", "--set"}},
		{[]string{"reproduce", "progap-cora"}, []string{"--quick=true"}, nil},
		{[]string{"data", "generate", "--nodes", "1e6"}, []string{"--nodes=2000"}, nil},
		{[]string{"data", "generate", "--nodes", "500"}, nil, []string{"--nodes"}},
		{[]string{"account", "sgm", "--steps", "1000"}, nil, []string{"--steps", "--runs"}},
	} {
		got, err := shortFlags(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: flags %q lack %s", tc.args, got, w)
			}
		}
		for _, p := range tc.not {
			if slices.ContainsFunc(got, func(f string) bool { return strings.HasPrefix(f, p) }) {
				t.Errorf("%q: flags %q have %s", tc.args, got, p)
			}
		}
	}
	if _, err := shortFlags([]string{"train", "nosuchmethod"}); err == nil {
		t.Error("an unknown method was accepted")
	}
	// The flags shortened are the method config's epoch and step counts:
	// for every method, train's are config keys, and so are audit's and
	// tune's where the method has those commands.
	for _, name := range methods.Names() {
		m, err := methods.New(name)
		if err != nil {
			t.Fatal(err)
		}
		keys := methods.ConfigKeys(m.Config())
		for _, sub := range []string{"train", "audit", "tune"} {
			cmd, _, err := findCommand([]string{sub, name})
			if err != nil || cmd.Name() != name {
				continue
			}
			for _, f := range countFlags(cmd.Flags()) {
				if !slices.Contains(keys, f) {
					t.Errorf("%s %s: --%s is shortened but is not a key of the method's config %v", sub, name, f, keys)
				}
			}
		}
	}
	if train, _, _ := findCommand([]string{"train", "asgl"}); len(countFlags(train.Flags())) < 3 {
		t.Errorf("train asgl: count flags %v, want epochs, disc-steps and gen-steps at least", countFlags(train.Flags()))
	}
}

// TestCheckParses: what a parse-only check refuses.
func TestCheckParses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"reproduce", "progap-cora", "--out", "d", "--workers", "2"}, true},
		{[]string{"reproduce", "no-such-preset", "--out", "d"}, false},
		{[]string{"reproduce", "progap-cora", "--no-such-flag"}, false},
		{[]string{"reproduce", "progap-cora", "--workers", "two"}, false},
		{[]string{"train", "gap", "--hops", "2"}, true},
		{[]string{"train", "gap", "--hop", "2"}, false},
		{[]string{"train", "nosuch"}, false},
	} {
		if err := checkParses(tc.args); (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.args, err, tc.ok)
		}
	}
}

// extendingBlocks are the files the ```go blocks of docs/extending.md come
// from, keyed by each block's first line (runs of white space as one
// space): every block is an excerpt of a
// file go test runs (an Example with its output, or a test), so it cannot
// drift from code that compiles and works.
var extendingBlocks = map[string]string{
	"m.StartRecording() // layers record what per-sample norms need": "dp/dpnn/example_test.go",
	"type Config struct {": "cli/extending_example_test.go",
	"func main() { cli.Main(func() methods.Method { return run.SGDMethod(&SageMLP{cfg: defaults}) }) }": "examples/sagemlp/main.go",
}

// extendingExamples are the example files docs/extending.md names as
// checked by go test, each as the guide names it (line breaks aside) and
// its path.
var extendingExamples = map[string]string{
	"`layers`' `example_nap_test.go`":     "layers/example_nap_test.go",
	"`dp/dpnn`'s `example_test.go`":       "dp/dpnn/example_test.go",
	"`dp`'s `example_compose_test.go`":    "dp/example_compose_test.go",
	"`cli`'s `extending_example_test.go`": "cli/extending_example_test.go",
	"`cli/docstest`'s `linktoy_test.go`":  "cli/docstest/linktoy_test.go",
	"`examples/sagemlp` is such a binary": "examples/sagemlp/main_test.go",
}

// TestExtendingGoBlocks: every ```go block of docs/extending.md is an
// excerpt of the file extendingBlocks names — each of its lines, comments
// and layout aside, appears in that file in the same order (a line
// "// ..." marks lines left out) — and every example file the guide names
// exists and is run by go test (an Example with its // Output:, or a
// Test).
func TestExtendingGoBlocks(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	b, err := os.ReadFile(filepath.Join(root, "docs/extending.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	blocks := goBlocks(guide)
	if len(blocks) == 0 {
		t.Fatal("no go blocks in docs/extending.md")
	}
	seen := map[string]bool{}
	for _, block := range blocks {
		first := strings.Join(strings.Fields(block[0]), " ")
		seen[first] = true
		file, ok := extendingBlocks[first]
		if !ok {
			t.Errorf("docs/extending.md: the go block starting %q names no tested file: add it to extendingBlocks (and a test that runs it), or point the guide to a tested file", first)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("block %q: %v", first, err)
			continue
		}
		if err := isExcerpt(block, string(src)); err != nil {
			t.Errorf("docs/extending.md: the block starting %q is not an excerpt of %s: %v", first, file, err)
		}
	}
	for k := range extendingBlocks {
		if !seen[k] {
			t.Errorf("extendingBlocks has %q, which starts no go block of docs/extending.md (any more)", k)
		}
	}
	flat := strings.Join(strings.Fields(guide), " ")
	for named, file := range extendingExamples {
		if !strings.Contains(flat, named) {
			t.Errorf("docs/extending.md no longer names %s as %q: update extendingExamples", file, named)
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("docs/extending.md names %s: %v", file, err)
			continue
		}
		s := string(src)
		example := strings.Contains(s, "\nfunc Example") && strings.Contains(s, "// Output:")
		if !example && !strings.Contains(s, "\nfunc Test") {
			t.Errorf("%s: neither an Example with // Output: nor a Test: go test would not check it", file)
		}
	}
}

// goBlocks returns the lines of every ```go block of a Markdown text.
func goBlocks(md string) [][]string {
	var out [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if in && cur != nil {
				out = append(out, cur)
			}
			in, cur = strings.TrimSpace(line) == "```go", nil
			continue
		}
		if in && strings.TrimSpace(line) != "" {
			cur = append(cur, line)
		}
	}
	return out
}

// isExcerpt reports (as an error) whether every line of block, without
// its // comment and its white space, occurs in src (likewise stripped)
// after the line before it; a line that is only "// ..." skips.
func isExcerpt(block []string, src string) error {
	norm := func(s string) string {
		if i := strings.Index(s, "//"); i >= 0 {
			s = s[:i]
		}
		return strings.Join(strings.Fields(s), "")
	}
	var body strings.Builder
	for _, l := range strings.Split(src, "\n") {
		body.WriteString(norm(l))
	}
	text, at := body.String(), 0
	for _, l := range block {
		n := norm(l)
		if n == "" {
			continue
		}
		k := strings.Index(text[at:], n)
		if k < 0 {
			return fmt.Errorf("line %q not found (after the lines before it)", strings.TrimSpace(l))
		}
		at += k + len(n)
	}
	return nil
}

// TestIsExcerpt: lines in order, comments and layout aside.
func TestIsExcerpt(t *testing.T) {
	src := "a := f(x, // why\n\ty)\nb := g()\n// c := h()\nd := 1\n"
	for _, tc := range []struct {
		block []string
		ok    bool
	}{
		{[]string{"a := f(x, y)", "// ...", "d := 1 // a comment"}, true},
		{[]string{"a := f(x,", "    y)", "b := g()"}, true},
		{[]string{"b := g()", "a := f(x, y)"}, false}, // out of order
		{[]string{"c := h()"}, false},                 // only in a comment
		{[]string{"a := f(x, z)"}, false},
	} {
		if err := isExcerpt(tc.block, src); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok %v", tc.block, err, tc.ok)
		}
	}
}

// TestDocsLengths: the pages a reader should take in at once stay as short
// as issue 37 set them (README ≤ 150 lines, results.md ≤ 300,
// performance.md ≤ 250); history goes to docs/notebook/.
func TestDocsLengths(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Skip("repository root not found")
	}
	for file, most := range map[string]int{"README.md": 150, "docs/results.md": 300, "docs/performance.md": 250} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > most {
			t.Errorf("%s has %d lines, at most %d: move history to docs/notebook/", file, n, most)
		}
	}
}
