package trainers

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// EpochStats is what a training loop reports after each epoch (or stage
// epoch). Fields that do not apply are zero; NaN accuracies are omitted.
type EpochStats struct {
	Kind     string  `json:"kind"` // "epoch" or "step"
	Run      int     `json:"run"`
	Stage    int     `json:"stage,omitempty"`
	Epoch    int     `json:"epoch"`
	Step     int     `json:"step,omitempty"`
	Loss     float64 `json:"loss"`
	TrainAcc float64 `json:"train_acc,omitempty"`
	ValAcc   float64 `json:"val_acc,omitempty"`
	// DP-SGD diagnostics (per step): gradient norms per parameter before
	// clipping, the fraction of clipped samples and the noise norm.
	GradNorms   map[string]float64 `json:"grad_norms,omitempty"`
	ClippedFrac float64            `json:"clipped_frac,omitempty"`
	NoiseNorm   float64            `json:"noise_norm,omitempty"`
	BatchSize   int                `json:"batch_size,omitempty"`
}

// Recorder receives training progress. The algorithm never prints: a
// progress bar and a JSON-lines trace are Recorders.
type Recorder interface {
	// Plan announces how many epochs a whole command will report (for a
	// progress bar); it may be called again to add more.
	Plan(epochs int)
	// Epoch reports a finished epoch (one progress tick).
	Epoch(s EpochStats)
	// Step reports one optimiser step inside an epoch (DP-SGD steps; for
	// traces, not progress).
	Step(s EpochStats)
	Done()
}

// KeepsStats reports whether r keeps the statistics of the epochs it is
// given (a Trace does; a progress display only counts them), so that a loop
// must compute every field. A recorder says so with a KeepsStats() bool
// method; one without it is assumed to keep them.
func KeepsStats(r Recorder) bool {
	switch v := r.(type) {
	case nil:
		return false
	case Multi:
		for _, x := range v {
			if KeepsStats(x) {
				return true
			}
		}
		return false
	case interface{ KeepsStats() bool }:
		return v.KeepsStats()
	}
	return true
}

// Nop is a Recorder that ignores everything.
type Nop struct{}

func (Nop) KeepsStats() bool { return false }

func (Nop) Plan(int)         {}
func (Nop) Epoch(EpochStats) {}
func (Nop) Step(EpochStats)  {}
func (Nop) Done()            {}

// Multi fans progress out to several recorders.
type Multi []Recorder

func (m Multi) Plan(n int) {
	for _, r := range m {
		r.Plan(n)
	}
}
func (m Multi) Epoch(s EpochStats) {
	for _, r := range m {
		r.Epoch(s)
	}
}
func (m Multi) Step(s EpochStats) {
	for _, r := range m {
		r.Step(s)
	}
}
func (m Multi) Done() {
	for _, r := range m {
		r.Done()
	}
}

// Bar shows a progress bar on a terminal.
type Bar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	w   io.Writer
}

// NewBar returns a progress bar on w when it is a terminal, and plain
// progress lines every 10 seconds otherwise (a log file, a batch job).
func NewBar(w *os.File) Recorder {
	if !term.IsTerminal(int(w.Fd())) {
		return NewLines(w, 10*time.Second)
	}
	return &Bar{w: w}
}

// Lines writes a plain progress line to w at most once per Interval:
// "progress: 120/300 epochs (40%), 12s elapsed, about 18s left".
type Lines struct {
	mu          sync.Mutex
	w           io.Writer
	Interval    time.Duration
	total, done int
	start, last time.Time
	now         func() time.Time
}

// NewLines returns a Lines recorder on w.
func NewLines(w io.Writer, interval time.Duration) *Lines {
	return &Lines{w: w, Interval: interval, now: time.Now}
}

func (l *Lines) Plan(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total == 0 {
		l.start = l.now()
		l.last = l.start
	}
	l.total += n
}

func (l *Lines) Epoch(EpochStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	if t := l.now(); t.Sub(l.last) >= l.Interval {
		l.last = t
		l.print(t)
	}
}

func (l *Lines) print(t time.Time) {
	el := t.Sub(l.start)
	line := fmt.Sprintf("progress: %d/%d epochs", l.done, l.total)
	if l.total > 0 {
		line += fmt.Sprintf(" (%.0f%%)", 100*float64(l.done)/float64(l.total))
	}
	line += fmt.Sprintf(", %s elapsed", el.Round(time.Second))
	if l.done > 0 && l.total > l.done {
		left := time.Duration(float64(el) * float64(l.total-l.done) / float64(l.done))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	fmt.Fprintln(l.w, line)
}

func (l *Lines) Step(EpochStats)  {}
func (l *Lines) KeepsStats() bool { return false }
func (l *Lines) Done()            {}

func (b *Bar) Plan(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		b.bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetWidth(30), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100_000_000))
		return
	}
	b.bar.AddMax(n)
}

func (b *Bar) Epoch(s EpochStats) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		return
	}
	desc := fmt.Sprintf("run %d", s.Run+1)
	if s.Stage > 0 {
		desc += fmt.Sprintf(" stage %d", s.Stage)
	}
	desc += fmt.Sprintf(" loss %.3f", s.Loss)
	if s.ValAcc > 0 {
		desc += fmt.Sprintf(" val %.3f", s.ValAcc)
	}
	b.bar.Describe(desc)
	_ = b.bar.Add(1)
}

func (b *Bar) Step(EpochStats)  {}
func (b *Bar) KeepsStats() bool { return false }

func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
		b.bar = nil
	}
}

// Trace writes one JSON object per reported epoch or step (JSON lines).
type Trace struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

// NewTrace writes JSON lines to w.
func NewTrace(w io.Writer) *Trace { return &Trace{enc: json.NewEncoder(w)} }

func (t *Trace) Plan(int)         {}
func (t *Trace) KeepsStats() bool { return true }
func (t *Trace) Epoch(s EpochStats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.enc.Encode(s)
	}
}
func (t *Trace) Done() {}

// Step writes a step record like an epoch record.
func (t *Trace) Step(s EpochStats) { t.Epoch(s) }

// Err is the first write error, if any.
func (t *Trace) Err() error { return t.err }
