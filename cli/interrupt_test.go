package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
)

// stopMLP is the mlp method under another name that acts on the calls of
// its Run, counted across every instance (runs of a train, cells of a
// sweep): stopHook.cancel is called as call cancelAt starts (standing for a
// Ctrl-C while that run trains), and call failAt fails after training.
type stopMLP struct{ methods.Method }

var stopHook struct {
	calls           atomic.Int64
	cancelAt        int64
	failAt          int64
	cancel          context.CancelFunc
	cancelledDuring atomic.Int64 // the call during which cancel was called
}

// armStopHook resets the hook: the returned context is cancelled when call
// cancelAt of stopmlp's Run starts (0: never), and call failAt fails (0:
// never).
func armStopHook(t *testing.T, cancelAt, failAt int64) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stopHook.calls.Store(0)
	stopHook.cancelledDuring.Store(0)
	stopHook.cancelAt, stopHook.failAt, stopHook.cancel = cancelAt, failAt, cancel
	return ctx
}

func (stopMLP) Name() string { return "stopmlp" }

func (s stopMLP) Run(c *methods.Context) (*methods.Outcome, error) {
	n := stopHook.calls.Add(1)
	if n == stopHook.cancelAt {
		stopHook.cancelledDuring.Store(n)
		stopHook.cancel()
	}
	out, err := s.Method.Run(c)
	if n == stopHook.failAt {
		return nil, fmt.Errorf("failing as the test asked")
	}
	return out, err
}

func init() {
	methods.Register(func() methods.Method {
		m, err := methods.New("mlp")
		if err != nil {
			panic(err)
		}
		return stopMLP{m}
	})
}

// runCLIContext runs the CLI with ctx (what main gives it: cancelled on
// Ctrl-C) and returns its stdout and stderr.
func runCLIContext(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// TestTrainInterruptedPrintsFinishedRuns: a train of 3 runs interrupted
// while the second trains prints the summary (or the JSON record) of the
// one run that finished, and its error says the second run was stopped and
// 1 of 3 finished, wraps context.Canceled and gives exit status 130. The
// trace keeps what was recorded.
func TestTrainInterruptedPrintsFinishedRuns(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	args := []string{"train", "stopmlp", "--epochs", "3", "--runs", "3", "--trace", trace}
	ctx := armStopHook(t, 2, 0)
	out, _, err := runCLIContext(t, ctx, args...)
	wantInterrupted(t, err, "interrupted: run 2 of 3 was stopped; 1 of 3 runs finished")
	if !strings.Contains(out, "stopmlp on csbm") || !strings.Contains(out, "1 run(s)") || !strings.Contains(out, "test_acc") {
		t.Errorf("summary of the finished run:\n%s", out)
	}
	b, err := os.ReadFile(trace)
	if err != nil || !bytes.Contains(b, []byte(`"run":0,"epoch":3,`)) {
		t.Errorf("trace of the interrupted command (%v):\n%s", err, b)
	}

	ctx = armStopHook(t, 2, 0)
	out, _, err = runCLIContext(t, ctx, append(args, "--json")...)
	wantInterrupted(t, err, "1 of 3 runs finished")
	var r struct {
		Runs    int      `json:"runs"`
		Seeds   []uint64 `json:"seeds"`
		Metrics map[string]struct {
			Values []float64 `json:"values"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not one JSON record: %v\n%s", err, out)
	}
	if r.Runs != 1 || len(r.Seeds) != 1 || len(r.Metrics["test_acc"].Values) != 1 {
		t.Errorf("JSON record of the finished run: %+v", r)
	}

	// Interrupted before any run finished: no output, and the message says so.
	ctx = armStopHook(t, 1, 0)
	out, _, err = runCLIContext(t, ctx, args...)
	wantInterrupted(t, err, "interrupted: run 1 of 3 was stopped; no run finished")
	if out != "" {
		t.Errorf("output without a finished run: %q", out)
	}
}

// TestSweepInterruptedKeepsFinishedCells: a sweep interrupted in its second
// run keeps the first run's record in --out, prints the table with that
// cell filled, and says how many runs are recorded and which one was
// stopped.
func TestSweepInterruptedKeepsFinishedCells(t *testing.T) {
	outFile := filepath.Join(t.TempDir(), "sweep.jsonl")
	ctx := armStopHook(t, 2, 0)
	out, _, err := runCLIContext(t, ctx, "sweep", "--methods", "stopmlp,gcn", "--epsilons", "1,inf", "--privacy", "node", "--delta", "1e-5",
		"--runs", "1", "--set", "stopmlp:--epochs 2 --batch-size 50", "--set", "gcn:--epochs 2", "--out", outFile)
	wantInterrupted(t, err, "interrupted: 1 of 3 runs of the grid are recorded in "+outFile+" (1 trained now)",
		"stopped while training and not recorded: stopmlp at ε=inf, seed 1; the same command resumes")
	b, rerr := os.ReadFile(outFile)
	if rerr != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), `"method":"stopmlp"`) {
		t.Fatalf("--out after the interruption (%v):\n%s", rerr, b)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "| stopmlp | 0.") || !strings.HasSuffix(lines[2], " | – |") || lines[3] != "| gcn | – | – |" {
		t.Errorf("table of the finished cells:\n%s", out)
	}
}

// wantInterrupted checks that err is a one-line interruption (wrapping
// context.Canceled, exit status 130) containing each of subs.
func wantInterrupted(t *testing.T, err error, subs ...string) {
	t.Helper()
	if !errors.Is(err, context.Canceled) || exitStatus(err) != 130 {
		t.Fatalf("error %v (exit status %d), want an interruption (130)", err, exitStatus(err))
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans several lines: %q", err)
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("bad flag"), 1},
		{&mrun.InterruptedError{Finished: 1, Runs: 3, Err: context.Canceled}, 130},
		{&interruptedError{msg: "x", cause: context.Canceled}, 130},
		{fmt.Errorf("wrapped: %w", context.Canceled), 130},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
