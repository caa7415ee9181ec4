package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// sweepRun is one run of a sweep's grid: a method at one ε column with one
// seed. The grid's runs are listed method by method (in --methods order),
// then by ε (ascending, ∞ last), then by seed; k is the place in that list.
type sweepRun struct {
	k      int
	method string
	eps    float64 // the ε column's budget; +Inf for a run without privacy
	level  methods.Level
	r      int // the run index: seed = --seed + r
	seed   uint64
	// dep is k of the run whose result fills this one when it reads no
	// private data (same method and seed, the method's first finite
	// column), -1 for none.
	dep int
}

func (r sweepRun) key() runKey { return runKey{r.method, r.eps, r.seed} }

// String names the run: "gap at ε=1, seed 3".
func (r sweepRun) String() string {
	return fmt.Sprintf("%s at ε=%s, seed %d", r.method, epsLabel(r.eps), r.seed)
}

// runs lists the grid's runs (see sweepRun).
func (p *sweepPlan) runs() []sweepRun {
	var out []sweepRun
	for _, name := range p.names {
		first := -1 // k of the method's first finite column's run 0
		for _, e := range p.eps {
			level, ok := p.level(name, e)
			if !ok {
				continue
			}
			dep := -1
			if level != methods.None && !math.IsInf(e, 1) {
				if first < 0 {
					first = len(out)
				} else {
					dep = first
				}
			}
			for r := 0; r < p.opts.Runs; r++ {
				d := dep
				if d >= 0 {
					d += r
				}
				out = append(out, sweepRun{k: len(out), method: name, eps: e, level: level, r: r, seed: p.opts.Seed + uint64(r), dep: d})
			}
		}
	}
	return out
}

// sweepShard is --shard I/N: the runs k with k mod N = I.
type sweepShard struct{ i, n int }

// parseShard reads --shard I/N ("" : the whole grid, 0/1).
func parseShard(s string) (sweepShard, error) {
	if s == "" {
		return sweepShard{0, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return sweepShard{}, fmt.Errorf("--shard %q: want I/N with 0 ≤ I < N, e.g. 0/4", s)
	}
	return sweepShard{i, n}, nil
}

func (s sweepShard) owns(r sweepRun) bool { return r.k%s.n == s.i }

func (s sweepShard) whole() bool { return s.n == 1 }

func (s sweepShard) String() string { return fmt.Sprintf("%d/%d", s.i, s.n) }

// oneRun is a method trained as one run of a sweep: run.TrainContext
// with Runs 1 and the sweep's seed S trains it once as run r of a
// TrainContext of several runs does: on the dataset loaded with seed S
// (a generated graph depends on it), with run r's split (mask r of a
// dataset's masks; a random split drawn from seed S+r) and the run's
// seed S+r. Its task hands TrainContext the unsplit graph; Run draws
// run r's graph from it, and the task's metrics are taken on that graph.
type oneRun struct {
	methods.Method
	task  mrun.Task // the method's own
	split string    // --split ("" : the method's default for the dataset)
	run   int
	seed  uint64
	graph *graphs.Graph // run r's graph, set by Run
}

func (o *oneRun) Task() mrun.Task { return oneRunTask{o} }

func (o *oneRun) Run(c *methods.Context) (*methods.Outcome, error) {
	g := c.Graph
	text := o.split
	if text == "" {
		text = o.DefaultSplit(c.Dataset)
	}
	spec, err := graphs.ParseSplit(text)
	if err != nil {
		return nil, err
	}
	gs := g
	if o.task.NodeSplit(g) {
		if gs, err = graphs.ApplySplit(g, spec.ForRun(o.run, len(g.MaskSplits)), o.seed); err != nil {
			return nil, err
		}
	}
	if gs, err = o.task.Prepare(gs, o.seed); err != nil {
		return nil, err
	}
	o.graph = gs
	c.Graph, c.Seed, c.Run = gs, o.seed, o.run
	return o.Method.Run(c)
}

// oneRunTask is the task of a oneRun: the method's own, except that it
// leaves the graph whole for Run to split and measures on Run's graph.
type oneRunTask struct{ o *oneRun }

func (t oneRunTask) Name() string                                             { return t.o.task.Name() }
func (t oneRunTask) Check(g *graphs.Graph) error                              { return t.o.task.Check(g) }
func (t oneRunTask) NodeSplit(*graphs.Graph) bool                             { return false }
func (t oneRunTask) Prepare(g *graphs.Graph, _ uint64) (*graphs.Graph, error) { return g, nil }
func (t oneRunTask) Evaluation() string                                       { return t.o.task.Evaluation() }

// SplitRecord is the method's own task's, so a run's record names the
// split run.Check named for the sweep.
func (t oneRunTask) SplitRecord(g *graphs.Graph, given string, spec graphs.SplitSpec) (string, error) {
	return mrun.SplitRecord(t.o.task, g, given, spec)
}
func (t oneRunTask) Metrics(_ *graphs.Graph, out *methods.Outcome) (map[string]float64, error) {
	return t.o.task.Metrics(t.o.graph, out)
}

// trainRun trains one run of the grid and returns its record.
func (p *sweepPlan) trainRun(ctx context.Context, run sweepRun, rec trainers.Recorder) (*runRecord, error) {
	m, err := p.method(run.method)
	if err != nil {
		return nil, err
	}
	o := p.opts
	o.Epsilon, o.Level, o.Recorder, o.Runs = run.eps, run.level, rec, 1
	one := &oneRun{Method: m, task: mrun.TaskOf(m), split: o.Split, run: run.r, seed: run.seed}
	r, err := mrun.TrainContext(ctx, one, o)
	if err != nil {
		return nil, err
	}
	r.Method, r.Seed, r.Seeds = run.method, run.seed, []uint64{run.seed}
	idx, base := run.r, p.opts.Seed
	f := p.config()
	f.Run, f.SweepSeed = &idx, &base
	return &runRecord{Record: r, runFields: f}, nil
}

// config is what a per-run record of the method states besides its
// hyperparameters (runFields without the run).
func (p *sweepPlan) config() runFields {
	sel := p.opts.Selection
	if sel == "" {
		sel = "auto"
	}
	return runFields{DeltaSetting: deltaSetting(p.opts), Selection: sel, SelectionEpsilon: p.opts.SelectionEpsilon}
}

// deltaSetting is --delta as given: auto, paper or the number.
func deltaSetting(o mrun.TrainOptions) string {
	switch {
	case o.DeltaRule == methods.DeltaGiven || o.DeltaRule == "" && o.Delta > 0:
		return strconv.FormatFloat(o.Delta, 'g', -1, 64)
	case o.DeltaRule == "":
		return string(methods.DeltaAuto)
	}
	return string(o.DeltaRule)
}

// expected is the record a run of the method would have, as far as it is
// known before training, to check the records already in --out against:
// its table (dataset, data, split, level) and its configuration.
func (p *sweepPlan) expected(name string, col int) (*sweepRecord, error) {
	m, err := p.method(name)
	if err != nil {
		return nil, err
	}
	e := p.eps[col]
	level, _ := p.level(name, e)
	if level == methods.None {
		e = math.Inf(1)
	}
	r := &trainers.Record{Method: name, Dataset: p.dataset, Split: p.split, Privacy: string(level),
		Runs: 1, Seed: p.opts.Seed, DatasetFingerprint: p.fingerprint, SecureNoise: p.opts.SecureNoise,
		Hyperparameters: jsonValues(mrun.Hyperparameters(m, p.opts.Features))}
	if !math.IsInf(e, 1) {
		r.Epsilon = &e
	}
	return &sweepRecord{Record: r, runFields: p.config(), where: fmt.Sprintf("this sweep's %s at ε=%s", name, epsLabel(p.eps[col]))}, nil
}

// sweepExec trains a share of a grid's runs with a pool of workers,
// appends each finished run's record to the results file and adds it to
// the set the table is built from. With a results file, every run is
// claimed before it trains (runClaims), so that another sweep on the same
// file never trains it too.
type sweepExec struct {
	plan     *sweepPlan
	workers  int
	results  *resultsFile   // nil without --out
	claims   *runClaims     // nil without --out
	progress *sweepProgress // nil: no progress (--quiet, or stderr is no file)

	mu       sync.Mutex
	cond     *sync.Cond
	set      *recordSet
	pending  []sweepRun
	inFlight map[int]bool
	// held are the runs whose claim another sweep holds: this sweep waits
	// for them once it has nothing else to train.
	held    []sweepRun
	trained int        // runs trained and recorded
	stopped []sweepRun // runs an interruption stopped
	// elsewhere are the runs another sweep was training when this one was
	// interrupted (not waited for).
	elsewhere []sweepRun
	err       error // the first failure
	cancel    func()
}

// run trains the runs of todo (in the grid's order) and returns the first
// failure; when ctx ends it stops (x.stopped lists the runs it stopped,
// x.elsewhere those another sweep was training) and returns nil. A run
// whose twin (dep) trains in this process waits for it, unless the method
// is known to read private data, and is filled by it when that run read
// none. A run another sweep has claimed is left to it until nothing else
// is pending, then waited for.
func (x *sweepExec) run(ctx context.Context, todo []sweepRun) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.cond = sync.NewCond(&x.mu)
	x.pending, x.inFlight, x.cancel = todo, map[int]bool{}, cancel
	// Wake the workers waiting for a twin when ctx ends.
	stop := context.AfterFunc(ctx, func() {
		x.mu.Lock()
		x.cond.Broadcast()
		x.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for range max(1, x.workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				run, wait, ok := x.next(ctx)
				if !ok {
					return
				}
				claim, ok := x.claimRun(ctx, run, wait)
				if !ok {
					continue
				}
				x.train(ctx, run, claim)
			}
		}()
	}
	wg.Wait()
	x.elsewhere = append(x.elsewhere, x.held...)
	x.held = nil
	return x.err
}

// next picks the next run to train: the first pending one whose twin is
// not in flight (or whose method is known to read private data). Runs
// already covered (by a record, or by a twin that read no private data)
// are dropped; so is a run whose twin is another shard's or another
// sweep's when the method is known to read no private data (that sweep
// trains the twin). When no run is pending, it hands out a run another
// sweep holds, to wait for (wait true).
func (x *sweepExec) next(ctx context.Context) (run sweepRun, wait, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		if ctx.Err() != nil || x.err != nil || len(x.pending) == 0 && len(x.held) == 0 {
			return sweepRun{}, false, false
		}
		for i := 0; i < len(x.pending); i++ {
			run := x.pending[i]
			if run.dep >= 0 && x.inFlight[run.dep] && !x.set.paid[run.method] {
				continue
			}
			x.pending = append(x.pending[:i:i], x.pending[i+1:]...)
			i--
			if x.set.covers(run.method, run.eps, run.seed) != nil {
				x.progress.skipRun()
				continue
			}
			if run.dep >= 0 && len(x.set.free[run.method]) > 0 && !x.pendingRun(run.dep) {
				x.progress.skipRun() // the twin is another shard's or sweep's, and it reads no private data
				continue
			}
			x.inFlight[run.k] = true
			return run, false, true
		}
		if len(x.pending) == 0 && len(x.held) > 0 {
			run := x.held[0]
			x.held = x.held[1:]
			x.inFlight[run.k] = true
			return run, true, true
		}
		if len(x.pending) == 0 {
			return sweepRun{}, false, false
		}
		x.cond.Wait()
	}
}

// pendingRun reports whether run k is still to train in this process.
func (x *sweepExec) pendingRun(k int) bool {
	if x.inFlight[k] {
		return true
	}
	for _, r := range x.pending {
		if r.k == k {
			return true
		}
	}
	return false
}

// claimRun claims run for this sweep (nothing to claim without a results
// file) and reports whether to train it. A run another sweep holds is
// moved to x.held (wait false), or waited for (wait true) until the claim
// is free or ctx ends. Once the claim is taken, the records other sweeps
// appended meanwhile are read: a run they recorded is not trained again.
// When it returns false the run is out of flight.
func (x *sweepExec) claimRun(ctx context.Context, run sweepRun, wait bool) (*runClaim, bool) {
	if x.claims == nil {
		return nil, true
	}
	for tries := 0; ; tries++ {
		c, holder, err := x.claims.try(run.key())
		if err != nil {
			x.end(run, fmt.Errorf("--out %s: %w", x.results.name, err))
			return nil, false
		}
		if c != nil {
			if err := x.refresh(); err != nil {
				c.release()
				x.end(run, fmt.Errorf("--out %w", err))
				return nil, false
			}
			x.mu.Lock()
			covered := x.set.covers(run.method, run.eps, run.seed) != nil
			x.mu.Unlock()
			if covered {
				c.release()
				x.progress.skipRun()
				x.end(run, nil)
				return nil, false
			}
			if wait {
				x.progress.note("sweep: %s was not recorded by the sweep that held it; training it here", run)
			}
			return c, true
		}
		if !wait {
			x.progress.note("sweep: %s is being trained by another sweep on this --out (%s): left to it for now", run, holder)
			x.mu.Lock()
			delete(x.inFlight, run.k)
			x.held = append(x.held, run)
			x.cond.Broadcast()
			x.mu.Unlock()
			return nil, false
		}
		if tries == 0 {
			x.progress.note("sweep: waiting for %s, which another sweep is training (%s); Ctrl-C leaves it to that sweep", run, holder)
		}
		select {
		case <-ctx.Done():
			x.mu.Lock()
			delete(x.inFlight, run.k)
			x.elsewhere = append(x.elsewhere, run)
			x.cond.Broadcast()
			x.mu.Unlock()
			return nil, false
		case <-time.After(claimPoll):
		}
	}
}

// refresh adds to the set the records other sweeps appended since the
// last read (this sweep's own, read back, are in it already).
func (x *sweepExec) refresh() error {
	recs, err := x.results.readNew()
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range recs {
		if r.isRun() {
			if o := x.set.runs[r.runKey()]; o != nil && bytes.Equal(o.raw, r.raw) {
				continue
			}
		}
		if _, err := x.set.add(r); err != nil {
			return err
		}
	}
	return nil
}

// end takes a run out of flight without training it, with the failure
// err (nil: none).
func (x *sweepExec) end(run sweepRun, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.cond.Broadcast()
	delete(x.inFlight, run.k)
	if err != nil && x.err == nil {
		x.err = fmt.Errorf("%s: %w", run, err)
		x.cancel()
	}
}

// train trains one run and records it, then gives up its claim.
func (x *sweepExec) train(ctx context.Context, run sweepRun, claim *runClaim) {
	var rec trainers.Recorder = trainers.Nop{}
	var rp *runProgress
	if x.progress != nil {
		rp = x.progress.startRun(run.String())
		rec = rp
	}
	r, err := x.plan.trainRun(ctx, run, rec)
	if err == nil && x.results != nil {
		if werr := x.results.append(r); werr != nil {
			err = fmt.Errorf("--out %s: %w", x.results.name, werr)
		}
	}
	claim.release()
	if rp != nil {
		x.progress.endRun(rp, err == nil)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.cond.Broadcast()
	delete(x.inFlight, run.k)
	var stopped *mrun.InterruptedError
	switch {
	case errors.As(err, &stopped):
		x.stopped = append(x.stopped, run)
		return
	case err != nil:
		if x.err == nil {
			x.err = fmt.Errorf("%s: %w", run, err)
			x.cancel()
		}
		return
	}
	sr, err := recordOf(r, fmt.Sprintf("this sweep's %s", run))
	if err == nil {
		// A refresh by another worker may have read it back already.
		if o := x.set.runs[sr.runKey()]; o == nil || !bytes.Equal(o.raw, sr.raw) {
			_, err = x.set.add(sr)
		}
	}
	if err != nil && x.err == nil {
		x.err = fmt.Errorf("sweep: %w", err)
		x.cancel()
		return
	}
	x.trained++
}

// recordOf is a sweep's run record as the set holds it: read back from
// the bytes it is written as, as a later sweep reads it.
func recordOf(r *runRecord, where string) (*sweepRecord, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return parseRecord(b, where)
}
