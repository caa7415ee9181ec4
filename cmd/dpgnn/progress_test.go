package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
)

// TestSweepProgressLines: the plain progress of a sweep names the cell
// (method, ε, cell k of N) and the run (r of R) on every line, counts the
// cell's epochs, writes at most one line per interval, and ignores what a
// finished cell's abandoned run reports.
func TestSweepProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newSweepLines(&b, 6, 10*time.Second)
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	var rec trainers.Recorder = p // what methods.Train is given

	p.startCell(2, "gap", "1", 2)
	rec.Plan(4) // 2 runs of 2 epochs
	for _, e := range []struct {
		run     int
		advance time.Duration
	}{{0, 4 * time.Second}, {0, 8 * time.Second}, {1, 3 * time.Second}, {1, 9 * time.Second}} {
		clock = clock.Add(e.advance)
		rec.Epoch(trainers.EpochStats{Kind: "epoch", Run: e.run, Loss: 0.5})
	}
	rec.Done()
	rec.Epoch(trainers.EpochStats{Run: 1}) // after Done: ignored
	p.startCell(3, "gap", "inf", 2)
	rec.Plan(4)
	clock = clock.Add(20 * time.Second)
	rec.Epoch(trainers.EpochStats{Run: 0})

	want := []string{
		"sweep: cell 2 of 6: gap at ε=1, 2 run(s)",
		"progress: cell 2 of 6 (gap at ε=1), run 1 of 2: 2/4 epochs (50%), 12s elapsed, about 12s left",
		"progress: cell 2 of 6 (gap at ε=1), run 2 of 2: 4/4 epochs (100%), 24s elapsed",
		"sweep: cell 3 of 6: gap at ε=inf, 2 run(s)",
		"progress: cell 3 of 6 (gap at ε=inf), run 1 of 2: 1/4 epochs (25%), 20s elapsed, about 1m0s left",
	}
	if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}
