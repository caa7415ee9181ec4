package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// countedMethod is a registered method under another name whose Run calls
// are counted across every instance (sweepCalls), so a test sees which runs
// a sweep trains; the context sweepCalls.arm returns is cancelled as call
// cancelAt starts (standing for a Ctrl-C or a kill while that run trains).
type countedMethod struct {
	methods.Method
	name string
}

var sweepCalls struct {
	n        atomic.Int64
	cancelAt atomic.Int64
	mu       sync.Mutex
	cancel   context.CancelFunc
}

// armSweepCalls resets the count; the returned context is cancelled when
// call cancelAt starts (0: never).
func armSweepCalls(t *testing.T, cancelAt int64) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sweepCalls.mu.Lock()
	sweepCalls.cancel = cancel
	sweepCalls.mu.Unlock()
	sweepCalls.n.Store(0)
	sweepCalls.cancelAt.Store(cancelAt)
	return ctx
}

func (c countedMethod) Name() string { return c.name }

func (c countedMethod) Run(ctx *methods.Context) (*methods.Outcome, error) {
	if n := sweepCalls.n.Add(1); n == sweepCalls.cancelAt.Load() {
		sweepCalls.mu.Lock()
		sweepCalls.cancel()
		sweepCalls.mu.Unlock()
	}
	return c.Method.Run(ctx)
}

func init() {
	for _, base := range []string{"gap", "mlp"} {
		methods.Register(func() methods.Method {
			m, err := methods.New(base)
			if err != nil {
				panic(err)
			}
			return countedMethod{m, "sweep" + base}
		})
	}
}

// resumeGrid is a small grid on the embedded csbm graph: sweepmlp (at edge
// level it reads no private data: its ε = 1 runs fill ε = 8) and sweepgap,
// at ε = 1, 8 and ∞, 2 seeds: 12 runs, of which 10 train.
var resumeGrid = []string{"sweep", "--methods", "sweepmlp,sweepgap", "--epsilons", "8,1,inf", "--privacy", "edge", "--runs", "2",
	"--set", "sweepmlp:--epochs 3", "--set", "sweepgap:--epochs 3 --encoder-epochs 3"}

// results reads a sweep's results file: each record's test accuracy by
// run ("method ε seed"), failing on a repeated run.
func results(t *testing.T, file string) map[string]float64 {
	t.Helper()
	recs, err := readResults(file, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range recs {
		k := fmt.Sprintf("%s %s %d", r.Method, fmtEps(r.Epsilon), r.Seed)
		if _, ok := out[k]; ok {
			t.Fatalf("%s: run %s recorded twice", file, k)
		}
		out[k] = r.Metrics["test_acc"].Mean
	}
	return out
}

// testWriter writes warnings to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func readText(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSweepResumesAfterInterruption: a sweep stopped midway (its context
// cancelled as its 4th run starts) keeps the runs that finished; the same
// command then trains exactly the runs not recorded, and ends with the
// records and the table of a sweep that was never stopped — with 1 worker
// or 2 (whose records are those of 1 worker: every run is seeded on its
// own).
func TestSweepResumesAfterInterruption(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref")
	armSweepCalls(t, 0)
	refOut, err := runCLI(t, append(resumeGrid, "--out", ref)...)
	if err != nil {
		t.Fatal(err)
	}
	if n := sweepCalls.n.Load(); n != 10 {
		t.Fatalf("an uninterrupted sweep trained %d runs, want 10 (12 in the grid, 2 filled by mlp's ε = 0 runs)", n)
	}
	want := results(t, filepath.Join(ref, sweepResultsFile))
	wantTable := readText(t, filepath.Join(ref, sweepTableFile))
	if refOut != wantTable || !strings.Contains(wantTable, "| sweepgap | 0.") || strings.Contains(wantTable, "runs)") {
		t.Fatalf("table.md\n%s\nstdout\n%s", wantTable, refOut)
	}
	if _, err := os.Stat(filepath.Join(ref, sweepPlotFile)); err != nil {
		t.Errorf("no plot: %v", err)
	}
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sweep")
			args := append(resumeGrid, "--out", dir, "--workers", workers)
			ctx := armSweepCalls(t, 4)
			_, _, err := runCLIContext(t, ctx, args...)
			wantInterrupted(t, err, "runs of the grid are recorded in", "stopped while training and not recorded: sweep", "the same command resumes")
			first := results(t, filepath.Join(dir, sweepResultsFile))
			if len(first) < 2 || len(first) > 3 {
				t.Fatalf("%d runs recorded before the interruption, want 3 (2 or 3 with 2 workers)", len(first))
			}
			if _, err := os.Stat(filepath.Join(dir, sweepTableFile)); err == nil {
				t.Error("an interrupted sweep wrote table.md")
			}
			armSweepCalls(t, 0)
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if n := sweepCalls.n.Load(); n != int64(10-len(first)) {
				t.Errorf("the resumed sweep trained %d runs, want the %d not recorded", n, 10-len(first))
			}
			if got := results(t, filepath.Join(dir, sweepResultsFile)); !reflect.DeepEqual(got, want) {
				t.Errorf("records after resuming\n%v\nwant (uninterrupted, 1 worker)\n%v", got, want)
			}
			if got := readText(t, filepath.Join(dir, sweepTableFile)); got != wantTable || out != wantTable {
				t.Errorf("table after resuming\n%s\nwant\n%s", got, wantTable)
			}
			// Once more: nothing to train, the same table.
			armSweepCalls(t, 0)
			if out, err := runCLI(t, args...); err != nil || out != wantTable || sweepCalls.n.Load() != 0 {
				t.Errorf("a rerun of a complete sweep trained %d runs (%v):\n%s", sweepCalls.n.Load(), err, out)
			}
		})
	}
}

// TestSweepTornLastLine: a results file whose last line was cut short (a
// sweep killed while writing) resumes: the line is dropped with a warning,
// its run trains again, the cut-off bytes are removed before the new
// record is appended, and the table is the uninterrupted one. A broken
// line that is not the last is an error naming it.
func TestSweepTornLastLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--methods", "sweepgap", "--epsilons", "1", "--privacy", "edge", "--runs", "3",
		"--set", "sweepgap:--epochs 3 --encoder-epochs 3", "--out", dir}
	if _, err := runCLI(t, args...); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, sweepResultsFile)
	whole := readText(t, file)
	wantTable := readText(t, filepath.Join(dir, sweepTableFile))
	lines := strings.SplitAfter(whole, "\n")
	for _, cut := range []int{1, 40, len(lines[2]) - 1} {
		t.Run(fmt.Sprintf("%d bytes cut", cut), func(t *testing.T) {
			torn := lines[0] + lines[1] + lines[2][:len(lines[2])-cut]
			if err := os.WriteFile(file, []byte(torn), 0o644); err != nil {
				t.Fatal(err)
			}
			armSweepCalls(t, 0)
			out, stderr, err := runCLIStreams(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if sweepCalls.n.Load() != 1 {
				t.Errorf("trained %d runs, want the one whose line was cut", sweepCalls.n.Load())
			}
			if !strings.Contains(stderr, "results.jsonl line 3 is cut short") || !strings.Contains(stderr, "cut off before appending") {
				t.Errorf("warnings:\n%s", stderr)
			}
			got := readText(t, file)
			if strings.Count(got, "\n") != 3 || !strings.HasPrefix(got, lines[0]+lines[1]) {
				t.Fatalf("results file after resuming:\n%s", got)
			}
			if r := results(t, file); len(r) != 3 {
				t.Errorf("records %v", r)
			}
			if out != wantTable || readText(t, filepath.Join(dir, sweepTableFile)) != wantTable {
				t.Errorf("table\n%s\nwant\n%s", out, wantTable)
			}
		})
	}
	t.Run("broken line inside", func(t *testing.T) {
		if err := os.WriteFile(file, []byte(lines[0]+lines[1][:50]+"\n"+lines[2]), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "results.jsonl line 2: not a dpgnn JSON record") || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v", err)
		}
	})
}

// TestSweepShards: --shard I/N splits the grid's runs into N disjoint
// shares that together are the grid (run k to shard k mod N); shards run
// at once on one --out directory merge into the records and the table of
// the unsharded sweep, the table written once the grid is complete; a
// rerun without --shard then trains nothing.
func TestSweepShards(t *testing.T) {
	opts := mrun.TrainOptions{Level: methods.Edge, Runs: 3, Seed: 5}
	plan, err := planSweep(opts, "sweepmlp,sweepgap,gcn", "1,8,inf", nil)
	if err != nil {
		t.Fatal(err)
	}
	grid := plan.runs()
	if len(grid) != 2*3*3+3 {
		t.Fatalf("%d runs in the grid, want 21", len(grid))
	}
	for n := 1; n <= 5; n++ {
		owner := map[runKey]int{}
		for i := range n {
			s, err := parseShard(fmt.Sprintf("%d/%d", i, n))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range grid {
				if s.owns(r) {
					if o, ok := owner[r.key()]; ok {
						t.Fatalf("N=%d: %s in shards %d and %d", n, r, o, i)
					}
					owner[r.key()] = i
				}
			}
		}
		if len(owner) != len(grid) {
			t.Errorf("N=%d: the shards hold %d of the grid's %d runs", n, len(owner), len(grid))
		}
	}
	for _, bad := range []string{"2/2", "-1/2", "0/0", "1", "a/b", "1/2/3"} {
		if _, err := parseShard(bad); err == nil || !strings.Contains(err.Error(), "want I/N with 0 ≤ I < N") {
			t.Errorf("--shard %s: %v", bad, err)
		}
	}

	args := []string{"sweep", "--methods", "sweepgap,gcn", "--epsilons", "1,inf", "--privacy", "edge", "--runs", "2",
		"--set", "sweepgap:--epochs 3 --encoder-epochs 3", "--set", "gcn:--epochs 3"}
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := runCLI(t, append(args, "--out", ref)...); err != nil {
		t.Fatal(err)
	}
	want, wantTable := results(t, filepath.Join(ref, sweepResultsFile)), readText(t, filepath.Join(ref, sweepTableFile))
	dir := filepath.Join(t.TempDir(), "sharded")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = runCLIStreams(t, append(args, "--out", dir, "--shard", fmt.Sprintf("%d/3", i), "--workers", "2")...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
	}
	if got := results(t, filepath.Join(dir, sweepResultsFile)); !reflect.DeepEqual(got, want) {
		t.Errorf("merged records\n%v\nwant\n%v", got, want)
	}
	if got := readText(t, filepath.Join(dir, sweepTableFile)); got != wantTable {
		t.Errorf("merged table\n%s\nwant\n%s", got, wantTable)
	}
	armSweepCalls(t, 0)
	if out, err := runCLI(t, append(args, "--out", dir)...); err != nil || out != wantTable || sweepCalls.n.Load() != 0 {
		t.Errorf("rerun without --shard: %d runs trained (%v)\n%s", sweepCalls.n.Load(), err, out)
	}

	// One shard alone: its runs, no table yet, and a note saying who writes it.
	part := filepath.Join(t.TempDir(), "part")
	out, stderr, err := runCLIStreams(t, append(args, "--out", part, "--shard", "1/3")...)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(results(t, filepath.Join(part, sweepResultsFile))); n != 2 {
		t.Errorf("shard 1/3 of 6 runs recorded %d", n)
	}
	if _, err := os.Stat(filepath.Join(part, sweepTableFile)); err == nil {
		t.Error("an incomplete grid has a table.md")
	}
	if !strings.Contains(out, "(1 of 2 runs)") || !strings.Contains(stderr, "2 of 6 runs of the grid are recorded") {
		t.Errorf("stdout\n%s\nstderr\n%s", out, stderr)
	}
	if _, err := runCLI(t, append(args, "--shard", "0/2")...); err == nil || !strings.Contains(err.Error(), "--shard 0/2 needs --out") {
		t.Errorf("--shard without --out: %v", err)
	}
}

// TestSweepRunsMatchTrain: a sweep's per-run records hold the results of
// the runs of 'train --runs N' with the same seed, run by run, and the
// table cell their mean and bootstrap half-width.
func TestSweepRunsMatchTrain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	out, err := runCLI(t, "sweep", "--methods", "gap", "--epsilons", "2", "--privacy", "edge", "--runs", "3", "--seed", "7",
		"--set", "gap:--epochs 3 --encoder-epochs 3", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	js, err := runCLI(t, "train", "gap", "--privacy", "edge", "--epsilon", "2", "--runs", "3", "--seed", "7", "--epochs", "3", "--encoder-epochs", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var tr trainers.Record
	if err := json.Unmarshal([]byte(js), &tr); err != nil {
		t.Fatal(err)
	}
	got := results(t, filepath.Join(dir, sweepResultsFile))
	for i, v := range tr.Metrics["test_acc"].Values {
		if k := fmt.Sprintf("gap 2 %d", 7+i); got[k] != v {
			t.Errorf("%s: sweep %v, train run %d %v", k, got[k], i+1, v)
		}
	}
	s := tr.Metrics["test_acc"]
	if row := fmt.Sprintf("| gap | %.3f ± %.3f |", s.Mean, s.CI95); !strings.Contains(out, row) {
		t.Errorf("table lacks %q:\n%s", row, out)
	}
}

// TestSweepFromDirectory: 'sweep --from DIR' tabulates the directory's
// per-run records (rows in the sweep's order, from sweep.json) and writes
// DIR/table.md and the plot; per-run records that repeat a run with other
// results, or that differ in a method's configuration, are refused.
func TestSweepFromDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	out, err := runCLI(t, append(resumeGrid, "--out", dir)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sweepTableFile, sweepPlotFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	from, err := runCLI(t, "sweep", "--from", dir)
	if err != nil || from != out || readText(t, filepath.Join(dir, sweepTableFile)) != out {
		t.Fatalf("--from DIR (%v):\n%s\nwant\n%s", err, from, out)
	}
	if _, err := os.Stat(filepath.Join(dir, sweepPlotFile)); err != nil {
		t.Error(err)
	}
	lines := strings.SplitAfter(readText(t, filepath.Join(dir, sweepResultsFile)), "\n")
	other := filepath.Join(t.TempDir(), "other.jsonl")
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"repeated run", strings.Replace(lines[0], `"mean":0.`, `"mean":0.1`, 1), "duplicate records for sweepmlp at ε=1, seed 1"},
		{"other configuration", strings.Replace(lines[0], `"epochs":3`, `"epochs":4`, 1), "are runs of sweepmlp with different configurations (epochs=4 vs 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(other, []byte(tc.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := runCLI(t, "sweep", "--from", dir+","+other)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSweepConcurrentAppends: appends from many writers, each with its own
// open file (as separate processes have), leave whole lines only, for
// records above and below the 4 KiB page and the 64 KiB pipe-buffer sizes.
func TestSweepConcurrentAppends(t *testing.T) {
	file := filepath.Join(t.TempDir(), sweepResultsFile)
	const writers, each = 6, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := openResults(file, testWriter{t})
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for i := range each {
				run, base := w*each+i, uint64(0)
				pad := strings.Repeat("x", []int{100, 5000, 70000}[i%3])
				r := &runRecord{Record: &trainers.Record{Method: "m", Runs: 1, Seed: uint64(run), Command: pad,
					Metrics: map[string]trainers.Summary{"test_acc": {Mean: 0.5}}}, runFields: runFields{Run: &run, SweepSeed: &base}}
				if err := f.append(r); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	recs, err := readResults(file, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != writers*each {
		t.Fatalf("%d records, want %d", len(recs), writers*each)
	}
}

// TestSweepEmitSlurm: --emit slurm writes an sbatch job-array script: one
// task per shard (--shards N, or one per run of the grid), the dpgnn
// binary, --out and --data-dir as absolute paths, this sweep's flags
// quoted for the shell and --shard "${SLURM_ARRAY_TASK_ID}/N"; the tasks'
// commands, run one by one, make the sweep's table. Misuse is refused in
// one line.
func TestSweepEmitSlurm(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	bin := filepath.Join(tmp, "bin", "dpgnn")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	grid := []string{"sweep", "--methods", "sweepgap,gcn", "--epsilons", "1,inf", "--privacy", "edge", "--runs", "2",
		"--set", "sweepgap:--epochs 3 --encoder-epochs 3", "--set", "gcn:epochs=3"}
	script, err := runCLI(t, append(grid, "--out", "sw", "--data-dir", "data", "--emit", "slurm", "--dpgnn", "bin/dpgnn",
		"--workers", "2", "--sbatch", "--time=0:05:00", "--sbatch", "--partition=debug")...)
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(tmp, p) }
	for _, want := range []string{
		"#!/bin/bash\n",
		"\n#SBATCH --array=0-5\n", // 6 runs: 4 of sweepgap, 2 of gcn
		"\n#SBATCH --output=" + abs("sw") + "/slurm-%A_%a.out\n",
		"\n#SBATCH --cpus-per-task=2\n#SBATCH --time=0:05:00\n#SBATCH --partition=debug\n",
		"\nexec " + bin + " sweep ",
		" --set 'sweepgap:--epochs 3 --encoder-epochs 3' --set gcn:epochs=3 ",
		" --workers 2 ",
		" --data-dir " + abs("data") + " --out " + abs("sw") + ` --shard "${SLURM_ARRAY_TASK_ID}/6"` + "\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	for _, unwanted := range []string{"--emit ", "--dpgnn ", "--sbatch ", " bin/dpgnn", " sw ", " data "} {
		if strings.Contains(strings.SplitAfter(script, "\nexec ")[1], unwanted) {
			t.Errorf("the task's command has %q:\n%s", unwanted, script)
		}
	}
	if b, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v %s", err, b)
	}

	// --shards 3 to a file; each task's command, as bash expands it, run here.
	if _, stderr, err := runCLIStreams(t, append(grid, "--out", "sw", "--emit", "slurm", "--dpgnn", bin, "--shards", "3", "--emit-out", "sweep.sbatch")...); err != nil ||
		!strings.Contains(stderr, "wrote sweep.sbatch: 3 array tasks for 6 runs") {
		t.Fatalf("--emit-out: %v %s", err, stderr)
	}
	script = readText(t, "sweep.sbatch")
	if !strings.Contains(script, "\n#SBATCH --array=0-2\n") || !strings.Contains(script, `--shard "${SLURM_ARRAY_TASK_ID}/3"`) {
		t.Fatalf("script:\n%s", script)
	}
	echo := strings.Replace(script, "exec "+bin+" ", `printf '%s\0' `, 1)
	for i := range 3 {
		c := exec.Command("bash", "-c", echo)
		c.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i))
		b, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if args[len(args)-1] != fmt.Sprintf("%d/3", i) {
			t.Fatalf("task %d's arguments %q", i, args)
		}
		if _, _, err := runCLIStreams(t, args...); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	local, err := runCLI(t, append(grid, "--out", filepath.Join(tmp, "local"))...)
	if err != nil {
		t.Fatal(err)
	}
	if got := readText(t, filepath.Join("sw", sweepTableFile)); got != local {
		t.Errorf("the tasks' table\n%s\nthe local sweep's\n%s", got, local)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--emit", "slurm", "--dpgnn", bin}, "--emit slurm needs --out DIR"},
		{[]string{"--emit", "slurm", "--dpgnn", bin, "--out", "x.jsonl"}, "--emit slurm needs --out DIR (a directory, not a .jsonl file)"},
		{[]string{"--emit", "slurm", "--out", "sw"}, "this dpgnn is a temporary build"},
		{[]string{"--emit", "slurm", "--out", "sw", "--dpgnn", "nosuch"}, "--dpgnn nosuch:"},
		{[]string{"--emit", "slurm", "--out", "sw", "--dpgnn", "sweep.sbatch"}, "--dpgnn sweep.sbatch: not an executable file"},
		{[]string{"--emit", "slurm", "--out", "sw", "--dpgnn", bin, "--shards", "-1"}, "--shards must be positive, got -1"},
		{[]string{"--emit", "slurm", "--out", "sw", "--dpgnn", bin, "--shard", "0/2"}, "--shard 0/2 with --emit slurm"},
		{[]string{"--emit", "pbs"}, `--emit "pbs": the one script it writes is slurm`},
		{[]string{"--shards", "4"}, "--shards is for --emit slurm"},
		{[]string{"--workers", "0"}, "--workers must be at least 1, got 0"},
	} {
		_, err := runCLI(t, append(grid, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestSweepPlotAxis: the plot's ε axis is logarithmic, ∞ sits right of
// the largest finite budget past the break, and every budget has a label.
func TestSweepPlotAxis(t *testing.T) {
	eps := []float64{0.5, 1, 8, math.Inf(1)}
	a := newEpsAxis(eps)
	if a.x(1) != 0 || math.Abs(a.x(8)-math.Log10(8)) > 1e-12 || !(a.brk > a.x(8) && a.x(math.Inf(1)) > a.brk) {
		t.Errorf("axis %+v: x(1) %v, x(8) %v, x(∞) %v", a, a.x(1), a.x(8), a.x(math.Inf(1)))
	}
	var labels []string
	for _, tk := range a.ticks(eps) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0.5 1 8 ∞" {
		t.Errorf("labels %q", labels)
	}
	file := filepath.Join(t.TempDir(), "p.svg")
	tab := &sweepTable{names: []string{"a", "b"}, eps: eps, runs: 2, cells: map[string][]sweepCell{
		"a": {{0.5, 0.01, 2, true}, {0.6, 0.02, 2, true}, {0.7, 0, 1, true}, {}},
		"b": {{}, {}, {}, {0.9, 0.01, 2, true}},
	}}
	if err := plotSweep(file, "t", tab); err != nil {
		t.Fatal(err)
	}
	if svg := readText(t, file); !strings.Contains(svg, "∞") {
		t.Error("no ∞ label in the plot")
	}
}

// TestSweepHelperProcess is the sweep TestSweepSurvivesKill kills: it runs
// the CLI with the arguments in $DPGNN_SWEEP_HELPER (a JSON list), and
// skips otherwise.
func TestSweepHelperProcess(t *testing.T) {
	env := os.Getenv("DPGNN_SWEEP_HELPER")
	if env == "" {
		t.Skip("the subprocess of TestSweepSurvivesKill")
	}
	var args []string
	if err := json.Unmarshal([]byte(env), &args); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, args...); err != nil {
		t.Fatal(err)
	}
}

// TestSweepSurvivesKill: a sweep process killed with SIGKILL midway (once
// its results file holds 3 records) resumes: the same command trains
// exactly the runs not recorded and ends with the table of a sweep that
// was never killed.
func TestSweepSurvivesKill(t *testing.T) {
	grid := append(slices.Clone(resumeGrid), "--runs", "4") // 24 runs, 20 trained
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := runCLI(t, append(grid, "--out", ref)...); err != nil {
		t.Fatal(err)
	}
	wantTable := readText(t, filepath.Join(ref, sweepTableFile))
	dir := filepath.Join(t.TempDir(), "killed")
	args := append(grid, "--out", dir)
	env, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DPGNN_SWEEP_HELPER="+string(env))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	file := filepath.Join(dir, sweepResultsFile)
wait:
	for {
		select {
		case <-done:
			break wait
		case <-time.After(2 * time.Millisecond):
			if b, _ := os.ReadFile(file); bytes.Count(b, []byte("\n")) >= 3 {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				killed = true
				<-done
				break wait
			}
		}
	}
	recs, err := readResults(file, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if !killed || len(recs) >= 20 {
		t.Skipf("the sweep finished (%d records) before it could be killed", len(recs))
	}
	armSweepCalls(t, 0)
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n := sweepCalls.n.Load(); n != int64(20-len(recs)) {
		t.Errorf("killed after %d records, the resumed sweep trained %d runs, want %d", len(recs), n, 20-len(recs))
	}
	if out != wantTable || readText(t, filepath.Join(dir, sweepTableFile)) != wantTable {
		t.Errorf("table after the kill and resume\n%s\nwant\n%s", out, wantTable)
	}
}
