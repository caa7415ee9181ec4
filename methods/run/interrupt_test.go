package run_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// cancelAtRun cancels a context at the first epoch that run reports.
type cancelAtRun struct {
	trainers.Nop
	run    int
	cancel context.CancelFunc
}

func (c cancelAtRun) Epoch(s trainers.EpochStats) {
	if s.Run == c.run {
		c.cancel()
	}
}

// TestTrainContextStopsBetweenRuns: cancelling the context while the second
// of three runs trains returns the record of the first run alone, with an
// InterruptedError that wraps context.Canceled; a context cancelled before
// the first run returns no record.
func TestTrainContextStopsBetweenRuns(t *testing.T) {
	m := newMethod(t, "mlp", "--epochs", "3")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := run.TrainOptions{Split: "ratio:0.3:0.3", Runs: 3, Seed: 5,
		Recorder: cancelAtRun{run: 1, cancel: cancel}}
	r, err := run.TrainContext(ctx, m, opts)
	var ie *run.InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want an InterruptedError wrapping context.Canceled", err)
	}
	if ie.Finished != 1 || ie.Runs != 3 {
		t.Errorf("InterruptedError %+v, want 1 of 3 finished", ie)
	}
	if want := "interrupted: run 2 of 3 was stopped; 1 of 3 runs finished"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if r == nil || r.Runs != 1 || len(r.Seeds) != 1 || r.Seeds[0] != 5 || len(r.Metrics["test_acc"].Values) != 1 {
		t.Fatalf("record of the finished runs: %+v", r)
	}
	// The finished run is the one an uninterrupted training makes.
	full, err := run.Train(m, run.TrainOptions{Split: "ratio:0.3:0.3", Runs: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Metrics["test_acc"].Values[0], full.Metrics["test_acc"].Values[0]; got != want {
		t.Errorf("test accuracy of the finished run %v, want %v", got, want)
	}

	r, err = run.TrainContext(ctx, m, opts) // already cancelled
	if r != nil || !errors.As(err, &ie) || ie.Finished != 0 {
		t.Fatalf("cancelled before the first run: %+v, %v", r, err)
	}
	if want := "interrupted: run 1 of 3 was stopped; no run finished"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
