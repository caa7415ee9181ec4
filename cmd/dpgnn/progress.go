package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// sweepProgress is the progress of a sweep on stderr, naming the cell that
// trains: its method, its ε, "cell k of N" and "run r of R". On a terminal
// it draws a bar per cell; otherwise (a log file, a batch job) it writes a
// line when a cell starts and then a line at most once per interval:
//
//	sweep: cell 2 of 6: gap at ε=1, 5 runs
//	progress: cell 2 of 6 (gap at ε=1), run 3 of 5: 120/300 epochs (40%), 12s elapsed, about 18s left
//
// It is the trainers.Recorder of every methods.Train call of the sweep;
// between Done and the next startCell it ignores what it is told.
type sweepProgress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      bool // draw a bar (a terminal)
	interval time.Duration
	now      func() time.Time
	cells    int // N

	active      bool
	cell, runs  int // k (from 1) and R
	method, eps string
	run         int // the run of the last epoch reported (from 0)
	total, done int // epochs of the cell planned and reported
	start, last time.Time
	pb          *progressbar.ProgressBar
}

// newSweepProgress returns the progress of a sweep of cells cells on w: a
// bar when w is a terminal, lines every 10 seconds otherwise.
func newSweepProgress(w *os.File, cells int) *sweepProgress {
	p := newSweepLines(w, cells, 10*time.Second)
	p.bar = term.IsTerminal(int(w.Fd()))
	return p
}

// newSweepLines returns the plain-line progress of a sweep of cells cells
// on w, a line at most once per interval.
func newSweepLines(w io.Writer, cells int, interval time.Duration) *sweepProgress {
	return &sweepProgress{w: w, cells: cells, interval: interval, now: time.Now}
}

// startCell announces the next cell to train: the k-th of the sweep (from
// 1), method at ε = eps with runs runs.
func (p *sweepProgress) startCell(k int, method, eps string, runs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishBar()
	p.active, p.cell, p.method, p.eps, p.runs = true, k, method, eps, runs
	p.run, p.total, p.done = 0, 0, 0
	p.start = p.now()
	p.last = p.start
	if !p.bar {
		fmt.Fprintf(p.w, "sweep: cell %d of %d: %s at ε=%s, %d run(s)\n", k, p.cells, method, eps, runs)
	}
}

// label names the cell and the run: "cell 2 of 6 (gap at ε=1), run 3 of 5".
func (p *sweepProgress) label() string {
	return fmt.Sprintf("cell %d of %d (%s at ε=%s), run %d of %d", p.cell, p.cells, p.method, p.eps, p.run+1, p.runs)
}

func (p *sweepProgress) Plan(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active {
		return
	}
	p.total += n
	if !p.bar {
		return
	}
	if p.pb == nil {
		p.pb = progressbar.NewOptions(n, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetDescription(p.label()))
		return
	}
	p.pb.AddMax(n)
}

func (p *sweepProgress) Epoch(s trainers.EpochStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active {
		return
	}
	p.done++
	p.run = s.Run
	if p.bar {
		if p.pb != nil {
			p.pb.Describe(fmt.Sprintf("%s, loss %.3f", p.label(), s.Loss))
			_ = p.pb.Add(1)
		}
		return
	}
	if t := p.now(); t.Sub(p.last) >= p.interval {
		p.last = t
		p.printLine(t)
	}
}

// printLine writes the plain progress line at time t.
func (p *sweepProgress) printLine(t time.Time) {
	el := t.Sub(p.start)
	line := fmt.Sprintf("progress: %s: %d/%d epochs", p.label(), p.done, p.total)
	if p.total > 0 {
		line += fmt.Sprintf(" (%.0f%%)", 100*float64(p.done)/float64(p.total))
	}
	line += fmt.Sprintf(", %s elapsed", el.Round(time.Second))
	if p.done > 0 && p.total > p.done {
		left := time.Duration(float64(el) * float64(p.total-p.done) / float64(p.done))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	fmt.Fprintln(p.w, line)
}

func (p *sweepProgress) Step(trainers.EpochStats) {}

// Done ends the cell.
func (p *sweepProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishBar()
	p.active = false
}

func (p *sweepProgress) finishBar() {
	if p.pb != nil {
		_ = p.pb.Finish()
		p.pb = nil
	}
}
