package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
)

// TestSweepProgressLines: the plain progress of a sweep announces each run
// as it starts (method, ε, seed, run k of N), counts the runs done, names
// every run in flight with its epochs, writes at most one line per
// interval, and ignores what a finished run's abandoned training reports.
func TestSweepProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newSweepLines(&b, 3, 10*time.Second)
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	tick := func(r trainers.Recorder, advance time.Duration) {
		clock = clock.Add(advance)
		r.Epoch(trainers.EpochStats{Kind: "epoch", Loss: 0.5})
	}

	var a trainers.Recorder = p.startRun("gap at ε=1, seed 1") // what methods.TrainContext is given
	a.Plan(4)
	var c trainers.Recorder = p.startRun("gap at ε=1, seed 2")
	c.Plan(4)
	tick(a, 4*time.Second)
	tick(c, 8*time.Second) // 12 s: a line
	tick(a, 3*time.Second)
	tick(a, 1*time.Second)
	tick(a, 9*time.Second) // 25 s: a line
	a.Done()
	p.endRun(a.(*runProgress), true)
	a.Epoch(trainers.EpochStats{}) // after Done: ignored
	d := p.startRun("gap at ε=8, seed 1")
	d.Plan(4)
	tick(d, 20*time.Second)

	want := []string{
		"sweep: run 1 of 3: gap at ε=1, seed 1",
		"sweep: run 2 of 3: gap at ε=1, seed 2",
		"progress: 0 of 3 runs done; in flight: gap at ε=1, seed 1 (1/4 epochs); gap at ε=1, seed 2 (1/4 epochs); 12s elapsed, about 1m0s left",
		"progress: 0 of 3 runs done; in flight: gap at ε=1, seed 1 (4/4 epochs); gap at ε=1, seed 2 (1/4 epochs); 25s elapsed, about 35s left",
		"sweep: run 3 of 3: gap at ε=8, seed 1",
		"progress: 1 of 3 runs done; in flight: gap at ε=1, seed 2 (1/4 epochs); gap at ε=8, seed 1 (1/4 epochs); 45s elapsed, about 45s left",
	}
	if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}
