package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
)

// runCLIFile runs the CLI in this process with stdout a file (so that the
// checks that compare an output with stdout's file see one) and returns
// what was written to it, stderr and the error.
func runCLIFile(t *testing.T, stdout *os.File, args ...string) (string, string, error) {
	t.Helper()
	var errb bytes.Buffer
	root := newRoot(stdout, &errb)
	root.SetArgs(args)
	err := root.Execute()
	b, rerr := os.ReadFile(stdout.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(b), errb.String(), err
}

// fileState is what a test knows of a path: its bytes, or that it is
// absent.
type fileState struct {
	path   string
	absent bool
	bytes  []byte
}

// snapshotFiles records the state of paths.
func snapshotFiles(t *testing.T, paths ...string) []fileState {
	t.Helper()
	var out []fileState
	for _, p := range paths {
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			out = append(out, fileState{path: p, absent: true})
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, fileState{path: p, bytes: b})
		}
	}
	return out
}

// wantUnchanged fails the test when a path differs from its snapshot.
func wantUnchanged(t *testing.T, before []fileState) {
	t.Helper()
	for _, s := range before {
		b, err := os.ReadFile(s.path)
		switch {
		case s.absent && err == nil:
			t.Errorf("%s was created", s.path)
		case !s.absent && err != nil:
			t.Errorf("%s: %v", s.path, err)
		case !s.absent && !bytes.Equal(b, s.bytes):
			t.Errorf("%s changed: %.60q, was %.60q", s.path, b, s.bytes)
		}
	}
}

// TestOutputsRefusedBeforeWork: flags a command would ignore or misread,
// and outputs it could not write or would overwrite without owning them,
// are refused before anything trains: exit status 1, a one-line error
// naming the flag and the path or value, nothing on stdout, and every
// file of the case as it was (no table.md or plot replaced, no
// results.jsonl, no claims, no trace or temporary file left).
func TestOutputsRefusedBeforeWork(t *testing.T) {
	// A tiny sweep grid on the embedded graph; it would train in seconds.
	sweep := []string{"sweep", "--methods", "sweepgap", "--epsilons", "1", "--privacy", "edge", "--runs", "1",
		"--set", "sweepgap:--epochs 2 --encoder-epochs 2"}
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns the arguments and the files that
		// must be left as they are (stdout is the path of stdout's file).
		setup func(t *testing.T, dir, stdout string) (args []string, files []string)
		want  []string
	}{
		{"sweep --epsilon 4 (its budgets are --epsilons)", func(t *testing.T, dir, _ string) ([]string, []string) {
			return append(slices.Clone(sweep), "--epsilon", "4", "--out", filepath.Join(dir, "sw")), []string{filepath.Join(dir, "sw")}
		}, []string{"--epsilon 4: a sweep takes its budgets from --epsilons (e.g. --epsilons 4)"}},
		{"reproduce --runs 0", func(t *testing.T, dir, _ string) ([]string, []string) {
			return []string{"reproduce", "progap-cora", "--quick", "--runs", "0", "--out", filepath.Join(dir, "r")}, []string{filepath.Join(dir, "r")}
		}, []string{"--runs must be positive, got 0 (leave it out for the preset's default, 1)"}},
		{"reproduce --runs -2", func(t *testing.T, dir, _ string) ([]string, []string) {
			return []string{"reproduce", "progap-cora", "--runs", "-2", "--out", filepath.Join(dir, "r")}, []string{filepath.Join(dir, "r")}
		}, []string{"--runs must be positive, got -2"}},
		{"sweep --out DIR holding another table.md", func(t *testing.T, dir, _ string) ([]string, []string) {
			writeTestFile(t, filepath.Join(dir, "notes", sweepTableFile), "# my notes\n")
			writeTestFile(t, filepath.Join(dir, "notes", "README"), "other files do not matter\n")
			return append(slices.Clone(sweep), "--out", filepath.Join(dir, "notes")), outFiles(filepath.Join(dir, "notes"))
		}, []string{"--out " + "DIR/notes: holds table.md but no results.jsonl", "would replace table.md", "give a new or empty directory"}},
		{"sweep --out DIR holding another plot", func(t *testing.T, dir, _ string) ([]string, []string) {
			writeTestFile(t, filepath.Join(dir, "figs", sweepPlotFile), "\x89PNG not ours")
			return append(slices.Clone(sweep), "--out", filepath.Join(dir, "figs")), outFiles(filepath.Join(dir, "figs"))
		}, []string{"DIR/figs: holds accuracy_vs_epsilon.png but no results.jsonl"}},
		{"sweep --out DIR holding another tool's sweep.json", func(t *testing.T, dir, _ string) ([]string, []string) {
			writeTestFile(t, filepath.Join(dir, "wandb", sweepManifestFile), `{"method":"bayes","metric":{"name":"acc"}}`+"\n")
			return append(slices.Clone(sweep), "--out", filepath.Join(dir, "wandb")), outFiles(filepath.Join(dir, "wandb"))
		}, []string{"DIR/wandb: holds sweep.json but no results.jsonl"}},
		{"reproduce --out DIR holding another table.md", func(t *testing.T, dir, _ string) ([]string, []string) {
			writeTestFile(t, filepath.Join(dir, "paper", sweepTableFile), "| my | table |\n")
			return []string{"reproduce", "progap-cora", "--quick", "--out", filepath.Join(dir, "paper")},
				[]string{filepath.Join(dir, "paper", sweepTableFile), filepath.Join(dir, "paper", "edge-finite")}
		}, []string{"--out DIR/paper: holds table.md but none of progap-cora's grid directories (edge-finite, edge-inf, node) with records", "give a new or empty directory"}},
		{"--trace in a directory that takes no file", func(t *testing.T, dir, _ string) ([]string, []string) {
			return []string{"train", "mlp", "--epochs", "2", "--trace", "/proc/dpgnn-trace.jsonl"}, []string{"/proc/dpgnn-trace.jsonl"}
		}, []string{"--trace /proc/dpgnn-trace.jsonl: cannot create a file in /proc"}},
		{"--trace in a directory without write permission", func(t *testing.T, dir, _ string) ([]string, []string) {
			ro := filepath.Join(dir, "ro")
			if err := os.Mkdir(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 {
				// Root writes anywhere but in sysfs, which takes no new file.
				ro = "/sys/kernel"
				if st, err := os.Stat(ro); err != nil || !st.IsDir() {
					t.Skip("running as root without /sys/kernel: no directory refuses a new file")
				}
			}
			p := filepath.Join(ro, "trace.jsonl")
			return []string{"train", "mlp", "--epochs", "2", "--trace", p}, []string{p}
		}, []string{"--trace ", "/trace.jsonl: cannot create a file in ", "permission denied"}},
		{"--trace FILE that is stdout's file, with --json", func(t *testing.T, dir, stdout string) ([]string, []string) {
			return []string{"train", "mlp", "--epochs", "2", "--json", "--trace", stdout}, nil
		}, []string{"--trace STDOUT with --json: the trace would go to standard output, which --json keeps to one JSON object"}},
		{"--trace FILE that is stdout's file", func(t *testing.T, dir, stdout string) ([]string, []string) {
			return []string{"train", "mlp", "--epochs", "2", "--trace", stdout}, nil
		}, []string{"--trace STDOUT is the file standard output writes to, and the trace would replace it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
			if err != nil {
				t.Fatal(err)
			}
			defer stdout.Close()
			args, files := tc.setup(t, dir, stdout.Name())
			before := snapshotFiles(t, files...)
			entries := dirNames(t, dir)
			armSweepCalls(t, 0)
			out, _, err := runCLIFile(t, stdout, args...)
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = strings.NewReplacer("DIR", dir, "STDOUT", stdout.Name()).Replace(w)
			}
			wantCLIErr(t, err, want...)
			if exitStatus(err) != 1 {
				t.Errorf("exit status %d, want 1", exitStatus(err))
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
			if n := sweepCalls.n.Load(); n != 0 {
				t.Errorf("%d runs trained before the refusal", n)
			}
			wantUnchanged(t, before)
			if got := dirNames(t, dir); !slices.Equal(got, entries) {
				t.Errorf("the case's directory holds %v, was %v", got, entries)
			}
		})
	}
}

// writeTestFile creates a file (and its directory) with content.
func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// outFiles are the files a sweep on dir would write or create.
func outFiles(dir string) []string {
	return []string{filepath.Join(dir, sweepTableFile), filepath.Join(dir, sweepPlotFile), filepath.Join(dir, sweepManifestFile),
		filepath.Join(dir, sweepResultsFile), claimsDir(filepath.Join(dir, sweepResultsFile))}
}

// TestSweepOutOwnDirectory: a sweep writes into an existing directory
// that is a sweep's (results.jsonl or its sweep.json) or holds none of the
// files it writes (Slurm's logs, say), and refreshes its own table there.
func TestSweepOutOwnDirectory(t *testing.T) {
	args := []string{"sweep", "--methods", "sweepgap", "--epsilons", "1", "--privacy", "edge", "--runs", "1",
		"--set", "sweepgap:--epochs 2 --encoder-epochs 2"}
	dir := filepath.Join(t.TempDir(), "sw")
	writeTestFile(t, filepath.Join(dir, "slurm-7_0.out"), "a task's log\n")
	if _, err := runCLI(t, append(args, "--out", dir)...); err != nil {
		t.Fatal(err)
	}
	// Interrupted before its first record: sweep.json marks it as a sweep's.
	if err := os.Remove(filepath.Join(dir, sweepResultsFile)); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, sweepTableFile), "stale\n")
	out, err := runCLI(t, append(args, "--out", dir)...)
	if err != nil {
		t.Fatal(err)
	}
	if got := readText(t, filepath.Join(dir, sweepTableFile)); got != out || !strings.Contains(got, "| sweepgap | 0.") {
		t.Errorf("table.md\n%s\nstdout\n%s", got, out)
	}
	if readText(t, filepath.Join(dir, "slurm-7_0.out")) != "a task's log\n" {
		t.Error("the log beside the sweep changed")
	}
}

// TestTraceFailureKeepsResults: a --trace whose writes fail during
// training (a full device here; a full disk alike) does not discard the
// runs: the record is printed, then a one-line error says the trace failed
// and the results were printed (exit status 1, as a failed CPU profile
// gives). A regular file whose writes failed is left as it was, with no
// temporary file beside it.
func TestTraceFailureKeepsResults(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	out, err := runCLI(t, "train", "mlp", "--epochs", "3", "--runs", "2", "--json", "--trace", "/dev/full")
	wantCLIErr(t, err, "--trace /dev/full: writing failed: no space left on device", "(the results were printed)")
	if exitStatus(err) != 1 {
		t.Errorf("exit status %d, want 1", exitStatus(err))
	}
	var r trainers.Record
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil || r.Runs != 2 || len(r.Metrics["test_acc"].Values) != 2 {
		t.Errorf("the record of the 2 runs (%v):\n%s", jerr, out)
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "trace.jsonl")
	writeTestFile(t, p, "old\n")
	s, err := createStream(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("line 1\n")); err != nil {
		t.Fatal(err)
	}
	err = s.Finish(func() error { return syscall.ENOSPC })
	if err == nil || !strings.Contains(err.Error(), "writing failed: no space left on device; the file was left as it was") {
		t.Errorf("Finish after a failed write: %v", err)
	}
	if readText(t, p) != "old\n" || len(dirNames(t, dir)) != 1 {
		t.Errorf("after a failed trace: %q, files %v", readText(t, p), dirNames(t, dir))
	}
	// A write after the end (a run abandoned at an interruption) is no
	// failure: the trace is kept.
	s, err = createStream(p)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("line 1\n"))
	if err := s.Finish(func() error { return os.ErrClosed }); err != nil || readText(t, p) != "line 1\n" {
		t.Errorf("Finish with late writes refused: %v, %q", err, readText(t, p))
	}
}

// TestMainHelperProcess is the dpgnn process the tests below start: it
// runs the whole program (run: signals, exit status) with the arguments
// in $DPGNN_MAIN_HELPER (a JSON list), and skips otherwise.
func TestMainHelperProcess(t *testing.T) {
	env := os.Getenv("DPGNN_MAIN_HELPER")
	if env == "" {
		t.Skip("the dpgnn process of the tests that signal it")
	}
	var args []string
	if err := json.Unmarshal([]byte(env), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(run(append([]string{"dpgnn"}, args...), os.Stdout, os.Stderr))
}

// dpgnnProcess is a dpgnn process started by a test (TestMainHelperProcess
// in this test binary, which has the test methods registered).
type dpgnnProcess struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{} // closed when the process has ended
}

// startDpgnn starts dpgnn with args.
func startDpgnn(t *testing.T, args ...string) *dpgnnProcess {
	t.Helper()
	env, _ := json.Marshal(args)
	p := &dpgnnProcess{cmd: exec.Command(os.Args[0], "-test.run=^TestMainHelperProcess$", "-test.count=1"), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "DPGNN_MAIN_HELPER="+string(env))
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process (at most limit) and returns its exit status.
func (p *dpgnnProcess) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("dpgnn did not end within %v; stderr:\n%s", limit, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitFor polls until cond holds or the process ends (false) or limit
// passes (fatal).
func (p *dpgnnProcess) waitFor(t *testing.T, limit time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case <-p.done:
			return false
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting after %v", limit)
		}
	}
	return true
}

// fileLines counts the lines of a file (0 when it does not exist).
func fileLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// TestSignalsStopLikeCtrlC: SIGTERM, which a batch system sends at a
// job's time limit, stops train and sweep as Ctrl-C (SIGINT) does, in a
// real process: the one-line interruption message on stderr, the results
// of the finished runs on stdout (train's record, sweep's table), the
// finished runs' records kept whole in --out and no table.md, and exit
// status 128 + the signal (130, 143). The sweep then resumes to the table
// of a sweep never stopped.
func TestSignalsStopLikeCtrlC(t *testing.T) {
	sweepArgs := []string{"sweep", "--methods", "gcn", "--epsilons", "inf", "--privacy", "edge", "--runs", "3", "--set", "gcn:epochs=800"}
	for _, tc := range []struct {
		cmd    string
		sig    syscall.Signal
		status int
	}{
		{"train", syscall.SIGINT, 130},
		{"train", syscall.SIGTERM, 143},
		{"sweep", syscall.SIGINT, 130},
		{"sweep", syscall.SIGTERM, 143},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.cmd, tc.sig), func(t *testing.T) {
			dir := t.TempDir()
			var p *dpgnnProcess
			if tc.cmd == "train" {
				// Signalled once the second run traces its first epoch.
				trace := filepath.Join(dir, "trace.jsonl")
				p = startDpgnn(t, "train", "gcn", "--epochs", "800", "--runs", "3", "--json", "--trace", trace)
				tmp := func() bool {
					m, _ := filepath.Glob(filepath.Join(dir, ".trace.jsonl.tmp*"))
					for _, f := range m {
						if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(`"run":1,`)) {
							return true
						}
					}
					return false
				}
				if !p.waitFor(t, time.Minute, tmp) {
					t.Skipf("train ended before the second run traced (stderr %s)", p.stderr.String())
				}
			} else {
				p = startDpgnn(t, append(slices.Clone(sweepArgs), "--out", dir)...)
				if !p.waitFor(t, time.Minute, func() bool { return fileLines(filepath.Join(dir, sweepResultsFile)) >= 1 }) {
					t.Skipf("the sweep ended before its first record (stderr %s)", p.stderr.String())
				}
			}
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			status := p.wait(t, time.Minute)
			if status != tc.status {
				t.Errorf("exit status %d, want %d; stderr:\n%s", status, tc.status, p.stderr.String())
			}
			stderr := p.stderr.String()
			last := strings.TrimSpace(stderr[strings.LastIndex(strings.TrimRight(stderr, "\n"), "\n")+1:])
			if tc.cmd == "train" {
				if !strings.HasPrefix(last, "dpgnn: interrupted: run 2 of 3 was stopped; 1 of 3 runs finished") {
					t.Errorf("last stderr line %q", last)
				}
				var r trainers.Record
				if err := json.Unmarshal(p.stdout.Bytes(), &r); err != nil || r.Runs != 1 {
					t.Errorf("stdout is not the record of the finished run (%v):\n%s", err, p.stdout.String())
				}
				if b := readText(t, filepath.Join(dir, "trace.jsonl")); !strings.Contains(b, `"run":0,"epoch":800,`) || !strings.Contains(b, `"run":1,`) {
					t.Errorf("the trace lacks the finished run:\n%.300s", b)
				}
				return
			}
			// The signal lands in the second run, or between two runs.
			if !strings.HasPrefix(last, "dpgnn: interrupted: ") || !strings.Contains(last, "runs of the grid are recorded in "+filepath.Join(dir, sweepResultsFile)) ||
				!strings.Contains(last, "; stopped while training and not recorded: gcn at ε=inf, seed ") && !strings.Contains(last, "; none was in progress;") ||
				!strings.HasSuffix(last, "the same command resumes") {
				t.Errorf("last stderr line %q", last)
			}
			if !strings.HasPrefix(p.stdout.String(), "| method | ε=inf |\n|---|---|\n| gcn | 0.") || !strings.Contains(p.stdout.String(), "of 3 runs)") {
				t.Errorf("stdout is not the table of the finished runs:\n%s", p.stdout.String())
			}
			recs := results(t, filepath.Join(dir, sweepResultsFile))
			if len(recs) < 1 || len(recs) > 2 {
				t.Errorf("%d records after the signal, want 1 or 2", len(recs))
			}
			if _, err := os.Stat(filepath.Join(dir, sweepTableFile)); err == nil {
				t.Error("a stopped sweep wrote table.md")
			}
			if tc.sig == syscall.SIGTERM {
				out, err := runCLI(t, append(slices.Clone(sweepArgs), "--out", dir)...)
				if err != nil || !strings.Contains(out, "| gcn | 0.") || strings.Contains(out, "runs)") || len(results(t, filepath.Join(dir, sweepResultsFile))) != 3 {
					t.Errorf("the resumed sweep (%v):\n%s", err, out)
				}
			}
		})
	}
}

// TestConcurrentSweepsClaimRuns: two ordinary sweeps started on one --out
// (two real processes, the second once the first has recorded a run)
// share the grid: every run is trained once, by one of them, the results
// file holds each run's record exactly once and whole, and both end with
// the complete table, the same as table.md.
func TestConcurrentSweepsClaimRuns(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--methods", "gcn,sweepmlp", "--epsilons", "1,inf", "--privacy", "node", "--delta", "1e-5", "--runs", "5",
		"--set", "gcn:epochs=400", "--set", "sweepmlp:--epochs 150 --batch-size 20", "--out", dir}
	// 5 gcn runs (∞ only) and 10 sweepmlp runs (ε = 1 and ∞).
	const grid = 15
	first := startDpgnn(t, args...)
	if !first.waitFor(t, time.Minute, func() bool { return fileLines(filepath.Join(dir, sweepResultsFile)) >= 1 }) {
		t.Fatalf("the first sweep ended before its first record (stderr %s)", first.stderr.String())
	}
	second := startDpgnn(t, args...)
	for i, p := range []*dpgnnProcess{first, second} {
		if status := p.wait(t, 3*time.Minute); status != 0 {
			t.Fatalf("sweep %d: exit status %d; stderr:\n%s", i+1, status, p.stderr.String())
		}
	}
	recs := results(t, filepath.Join(dir, sweepResultsFile)) // fails on a run recorded twice
	if len(recs) != grid {
		t.Errorf("%d records, want the grid's %d: %v", len(recs), grid, recs)
	}
	if n := fileLines(filepath.Join(dir, sweepResultsFile)); n != grid {
		t.Errorf("results.jsonl has %d lines, want %d", n, grid)
	}
	trained := make([]int, 2)
	for i, p := range []*dpgnnProcess{first, second} {
		trained[i] = strings.Count(p.stderr.String(), "\nsweep: run ")
	}
	t.Logf("runs trained: %d by the first sweep, %d by the second", trained[0], trained[1])
	if trained[0]+trained[1] != grid {
		t.Errorf("%d + %d runs trained, want each of the %d once", trained[0], trained[1], grid)
	}
	if trained[1] == 0 {
		t.Errorf("the second sweep trained nothing: it did not share the grid\n%s", second.stderr.String())
	}
	table := readText(t, filepath.Join(dir, sweepTableFile))
	if first.stdout.String() != table || second.stdout.String() != table || strings.Contains(table, "runs)") ||
		!strings.Contains(table, "\n| gcn | – | 0.") || !strings.Contains(table, "\n| sweepmlp | 0.") {
		t.Errorf("tables:\nfirst\n%s\nsecond\n%s\ntable.md\n%s", first.stdout.String(), second.stdout.String(), table)
	}
	// A rerun trains nothing and reads the file without complaint.
	armSweepCalls(t, 0)
	if out, err := runCLI(t, args...); err != nil || out != table || sweepCalls.n.Load() != 0 {
		t.Errorf("rerun: %v, %d runs trained\n%s", err, sweepCalls.n.Load(), out)
	}
}

// TestTraceToStandardOutput: in a real process whose stdout is a pipe,
// --trace /dev/stdout with --json is refused before training (nothing on
// stdout, exit status 1, one line); without --json the trace lines and
// the summary share stdout as asked.
func TestTraceToStandardOutput(t *testing.T) {
	if _, err := os.Stat("/dev/stdout"); err != nil {
		t.Skip("no /dev/stdout:", err)
	}
	p := startDpgnn(t, "train", "mlp", "--epochs", "2", "--json", "--trace", "/dev/stdout")
	if status := p.wait(t, time.Minute); status != 1 || p.stdout.Len() != 0 ||
		strings.TrimSpace(p.stderr.String()) != "dpgnn: --trace /dev/stdout with --json: the trace would go to standard output, which --json keeps to one JSON object; write the trace to a file" {
		t.Errorf("exit status %d, stdout %q, stderr %q", status, p.stdout.String(), p.stderr.String())
	}
	p = startDpgnn(t, "train", "mlp", "--epochs", "2", "--trace", "/dev/stdout")
	if status := p.wait(t, time.Minute); status != 0 || strings.Count(p.stdout.String(), `{"kind":"epoch"`) != 2 || !strings.Contains(p.stdout.String(), "mlp on csbm") {
		t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s", status, p.stdout.String(), p.stderr.String())
	}
}

// TestRunClaims: a run's claim is exclusive (a second claim, as another
// sweep's, finds it held and names the holder), and free again once
// released or once its holder is gone (its file closed, as a dead
// process's are).
func TestRunClaims(t *testing.T) {
	results := filepath.Join(t.TempDir(), sweepResultsFile)
	a, err := openClaims(results)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openClaims(results)
	if err != nil {
		t.Fatal(err)
	}
	k := runKey{"dpar@em1/paper", 0.5, 3}
	c, _, err := a.try(k)
	if err != nil || c == nil {
		t.Fatalf("first claim: %v %v", c, err)
	}
	if got := filepath.Base(a.file(k)); got != "dpar@em1%2Fpaper_eps0.5_seed3.lock" {
		t.Errorf("claim file %q", got)
	}
	held, holder, err := b.try(k)
	if err != nil || held != nil || !strings.HasPrefix(holder, fmt.Sprintf("pid %d on ", os.Getpid())) {
		t.Fatalf("a held claim: %v, %q, %v", held, holder, err)
	}
	if other, _, err := b.try(runKey{"dpar@em1/paper", 0.5, 4}); err != nil || other == nil {
		t.Errorf("another run's claim: %v %v", other, err)
	} else {
		other.release()
	}
	c.release()
	c, _, err = b.try(k)
	if err != nil || c == nil {
		t.Fatalf("a released claim: %v %v", c, err)
	}
	c.f.Close() // the holder dies: the system drops its lock
	if c, _, err = a.try(k); err != nil || c == nil {
		t.Fatalf("the claim of a dead holder: %v %v", c, err)
	}
	c.release()
}

// TestQuietSilencesProgress: --quiet leaves a sweep's stderr without the
// progress lines it otherwise writes when stderr is a file (the grid, each
// run as it starts), and gives audit (and train) no progress recorder.
func TestQuietSilencesProgress(t *testing.T) {
	args := []string{"sweep", "--methods", "sweepgap", "--epsilons", "1", "--privacy", "edge", "--runs", "2",
		"--set", "sweepgap:--epochs 2 --encoder-epochs 2"}
	for _, quiet := range []bool{false, true} {
		stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		root := newRoot(&out, stderr)
		a := slices.Clone(args)
		if quiet {
			a = append(a, "--quiet")
		}
		root.SetArgs(a)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		stderr.Close()
		got := readText(t, stderr.Name())
		progress := strings.Contains(got, "sweep: 2 runs in the grid") && strings.Contains(got, "sweep: run 2 of 2: sweepgap at ε=1, seed 2")
		if progress == quiet || quiet && got != "" {
			t.Errorf("--quiet=%v: stderr\n%s", quiet, got)
		}
		if !strings.Contains(out.String(), "| sweepgap | 0.") {
			t.Errorf("--quiet=%v: table\n%s", quiet, out.String())
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := progressRecorder(f, true).(trainers.Nop); !ok {
		t.Error("a quiet command has a progress recorder")
	}
	if _, ok := progressRecorder(f, false).(trainers.Nop); ok {
		t.Error("a command on a file stderr has no progress")
	}
	if _, ok := progressRecorder(io.Discard, false).(trainers.Nop); !ok {
		t.Error("progress on a stderr that is no file")
	}
	for _, cmd := range [][]string{{"audit", "gaussian"}, {"audit", "gap"}, {"sweep"}, {"reproduce"}} {
		c, _, err := newRoot(io.Discard, io.Discard).Find(cmd)
		if err != nil || c.Flags().Lookup("quiet") == nil {
			t.Errorf("%v has no --quiet (%v)", cmd, err)
		}
	}
}

// TestSweepWaitsForHeldRuns: a run whose claim another sweep holds is
// left to it while this sweep trains the rest; then this sweep waits for
// the claim and, once it is released, trains the run only if no record
// of it appeared (the holder stopped without one) — never twice.
func TestSweepWaitsForHeldRuns(t *testing.T) {
	args := []string{"sweep", "--methods", "sweepgap", "--epsilons", "1", "--privacy", "edge", "--runs", "2",
		"--set", "sweepgap:--epochs 2 --encoder-epochs 2"}
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := runCLI(t, append(slices.Clone(args), "--out", ref)...); err != nil {
		t.Fatal(err)
	}
	refTable := readText(t, filepath.Join(ref, sweepTableFile))
	seed1 := strings.SplitAfter(readText(t, filepath.Join(ref, sweepResultsFile)), "\n")[0]
	if !strings.Contains(seed1, `"seed":1,`) {
		t.Fatalf("the reference's first record is not seed 1's: %.200s", seed1)
	}
	for _, recorded := range []bool{true, false} {
		t.Run(fmt.Sprintf("recorded by the holder %v", recorded), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sw")
			file := filepath.Join(dir, sweepResultsFile)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			other, err := openClaims(file)
			if err != nil {
				t.Fatal(err)
			}
			held, _, err := other.try(runKey{"sweepgap", 1, 1})
			if err != nil || held == nil {
				t.Fatalf("holding seed 1: %v %v", held, err)
			}
			armSweepCalls(t, 0)
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := runCLI(t, append(slices.Clone(args), "--out", dir)...)
				done <- result{out, err}
			}()
			deadline := time.Now().Add(time.Minute)
			for fileLines(file) < 1 {
				if time.Now().After(deadline) {
					t.Fatal("seed 2 was not recorded within a minute")
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(3 * claimPoll) // the sweep now waits for seed 1
			if n := sweepCalls.n.Load(); n != 1 {
				t.Errorf("%d runs trained while seed 1 was held, want seed 2's alone", n)
			}
			if recorded {
				f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(seed1); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			held.release()
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := int64(2)
			if recorded {
				want = 1
			}
			if n := sweepCalls.n.Load(); n != want {
				t.Errorf("%d runs trained, want %d", n, want)
			}
			if got := results(t, file); len(got) != 2 {
				t.Errorf("records %v", got)
			}
			if r.out != refTable || readText(t, filepath.Join(dir, sweepTableFile)) != refTable {
				t.Errorf("table\n%s\nwant\n%s", r.out, refTable)
			}
		})
	}
}
