package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressRecorder is the progress of a long command on stderr
// (trainers.NewBar: a bar on a terminal, a plain line every 10 s
// otherwise), or none (trainers.Nop) when quiet or when stderr is not a
// file (a test's buffer).
func progressRecorder(stderr io.Writer, quiet bool) trainers.Recorder {
	if f, ok := stderr.(*os.File); ok && !quiet {
		return trainers.NewBar(f)
	}
	return trainers.Nop{}
}

// sweepProgress is the progress of a sweep on stderr: how many of the runs
// it trains are done, and the runs in flight (several with --workers),
// each by method, ε and seed with its epochs. On a terminal it draws one
// bar over the epochs of all its runs; otherwise (a log file, a batch job)
// it writes a line when a run starts and then a line at most once per
// interval:
//
//	sweep: run 3 of 8: gap at ε=1, seed 2
//	progress: 2 of 8 runs done; in flight: gap at ε=1, seed 2 (40/100 epochs); gap at ε=1, seed 3 (12/100 epochs); 12s elapsed, about 30s left
//
// Every run gets its own trainers.Recorder (startRun); what a run reports
// after its Done (an abandoned run) is ignored.
type sweepProgress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      bool // draw a bar (a terminal)
	interval time.Duration
	now      func() time.Time

	runs              int // runs to train
	started, finished int
	flight            []*runProgress // in flight, in start order
	planned, done     int            // epochs planned by the runs started, and reported
	start, last       time.Time
	pb                *progressbar.ProgressBar
}

// runProgress is the trainers.Recorder of one run of a sweep.
type runProgress struct {
	p             *sweepProgress
	label         string // "gap at ε=1, seed 2"
	planned, done int
	active        bool
}

// newSweepProgress returns the progress of a sweep that trains runs runs
// on w: a bar when w is a terminal, lines every 10 seconds otherwise.
func newSweepProgress(w *os.File, runs int) *sweepProgress {
	p := newSweepLines(w, runs, 10*time.Second)
	p.bar = term.IsTerminal(int(w.Fd()))
	return p
}

// newSweepLines returns the plain-line progress of a sweep that trains
// runs runs on w, a line at most once per interval.
func newSweepLines(w io.Writer, runs int, interval time.Duration) *sweepProgress {
	return &sweepProgress{w: w, runs: runs, interval: interval, now: time.Now}
}

// startRun announces a run that starts training and returns its recorder.
func (p *sweepProgress) startRun(label string) *runProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started == 0 {
		p.start = p.now()
		p.last = p.start
	}
	p.started++
	r := &runProgress{p: p, label: label, active: true}
	p.flight = append(p.flight, r)
	if p.bar {
		p.describe()
	} else {
		fmt.Fprintf(p.w, "sweep: run %d of %d: %s\n", p.started, p.runs, label)
	}
	return r
}

// endRun takes a run out of flight; ok counts it as done.
func (p *sweepProgress) endRun(r *runProgress, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.active = false
	for i, f := range p.flight {
		if f == r {
			p.flight = append(p.flight[:i:i], p.flight[i+1:]...)
			break
		}
	}
	if ok {
		p.finished++
	}
	if p.bar && p.pb != nil {
		if p.finished == p.runs {
			_ = p.pb.Finish()
			p.pb = nil
			return
		}
		p.describe()
	}
}

// skipRun takes a run out of the count of runs to train (another run's
// result fills it). A nil progress ignores it.
func (p *sweepProgress) skipRun() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs--
	if p.bar && p.pb != nil {
		p.pb.ChangeMax(p.estimate())
		p.describe()
	}
}

// note writes a line about the sweep's runs (another sweep trains one);
// a nil progress writes nothing.
func (p *sweepProgress) note(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pb != nil {
		_ = p.pb.Clear()
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// flightText lists the runs in flight with their epochs.
func (p *sweepProgress) flightText() string {
	parts := make([]string, len(p.flight))
	for i, r := range p.flight {
		parts[i] = fmt.Sprintf("%s (%d/%d epochs)", r.label, r.done, r.planned)
	}
	return strings.Join(parts, "; ")
}

// describe sets the bar's description: runs done and in flight.
func (p *sweepProgress) describe() {
	if p.pb == nil {
		return
	}
	labels := make([]string, len(p.flight))
	for i, r := range p.flight {
		labels[i] = r.label
	}
	p.pb.Describe(fmt.Sprintf("%d/%d runs; %s", p.finished, p.runs, strings.Join(labels, "; ")))
}

func (r *runProgress) Plan(n int) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.active {
		return
	}
	r.planned += n
	p.planned += n
	if !p.bar {
		return
	}
	if p.pb == nil {
		p.pb = progressbar.NewOptions(p.estimate(), progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
		p.describe()
		return
	}
	p.pb.ChangeMax(p.estimate())
}

// estimate is the epochs the whole sweep will report: those planned by the
// runs started, and as many per run for the runs to come.
func (p *sweepProgress) estimate() int {
	if p.started == 0 {
		return p.planned
	}
	return p.planned + (p.runs-p.started)*p.planned/p.started
}

// KeepsStats: progress counts epochs, it keeps none of their statistics.
func (r *runProgress) KeepsStats() bool { return false }

func (r *runProgress) Epoch(trainers.EpochStats) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.active {
		return
	}
	r.done++
	p.done++
	if p.bar {
		if p.pb != nil {
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
	line := fmt.Sprintf("progress: %d of %d runs done", p.finished, p.runs)
	if len(p.flight) > 0 {
		line += "; in flight: " + p.flightText()
	}
	line += fmt.Sprintf("; %s elapsed", el.Round(time.Second))
	if total := p.estimate(); p.done > 0 && total > p.done {
		left := time.Duration(float64(el) * float64(total-p.done) / float64(p.done))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	fmt.Fprintln(p.w, line)
}

func (r *runProgress) Step(trainers.EpochStats) {}

// Done ends the run's reports (an abandoned run may report more: ignored).
func (r *runProgress) Done() {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.active = false
}
