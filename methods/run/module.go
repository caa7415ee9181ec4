package run

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// Module is a node classifier over one or more row inputs, as the
// multi-module methods (GAP's encoder and classifier, ProGAP's stages)
// train it: a training path over a batch of training rows and an
// evaluation path over all nodes, sharing parameters.
type Module struct {
	Model  *nn.Model
	Inputs []*layers.Input
	// TrainLogits is computed on the batch rows; Logits on all nodes.
	TrainLogits, Logits *G.Node
	// Outputs are extra evaluation nodes (embeddings to release).
	Outputs []*G.Node
	CE      *nn.CrossEntropy

	features []*graphs.Features
	names    []string
	build    func(m *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error)
}

// ModuleTraining says how to train a Module.
type ModuleTraining struct {
	Epochs int
	LR     float64
	// WeightDecay is Adam's L2 term.
	WeightDecay float64
	// DP-SGD (node level) when Private: each training node is one sample.
	Private    bool
	Multiplier float64
	Clip       float64
	Rate       float64
	Stage      int
	// Ledger names the DP-SGD steps in the run's privacy ledger, and Plan
	// is the run's plan, which must declare them there: a noisy module
	// records every step through the recorder ctx.Mechanism(Plan, Ledger,
	// one Poisson Gaussian step at Rate and Multiplier) builds, and is
	// refused before it trains when the plan declares no such release.
	Ledger string
	Plan   *dp.Plan
	// Samples, when set, are the rows of the module's inputs it trains on,
	// and Targets their classes — a module whose rows are not the graph's
	// nodes (e.g. node pairs); by default the training nodes and their
	// labels. Such a module keeps its last epoch.
	Samples, Targets []int
}

// Capacity is the number of batch rows a module's training path needs:
// every training node for full-batch training, a Poisson capacity for
// DP-SGD.
func (t ModuleTraining) Capacity(nTrain int) int {
	if t.Private {
		return dpnn.DefaultCapacity(t.Rate, nTrain)
	}
	return nTrain
}

// SGDSteps is the number of DP-SGD steps of the training (what the
// accountant must be told).
func (t ModuleTraining) SGDSteps() int { return dpnn.Steps(t.Epochs, t.Rate) }

// BuildModule builds a module: build receives the model and the inputs'
// batch and full feature nodes and returns (train logits, logits, extra
// evaluation outputs). Recording is on while the training path is built
// when tr.Private.
func BuildModule(seed uint64, inputs []*graphs.Features, names []string, tr ModuleTraining, nTrain int,
	build func(m *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error)) (*Module, error) {
	mod := &Module{Model: nn.NewModel(seed), features: inputs, names: names, build: build}
	m := mod.Model
	capacity := tr.Capacity(nTrain)
	err := nn.Build(func() error {
		for i, x := range inputs {
			in, err := layers.NewInput(m, x, capacity, names[i])
			if err != nil {
				return err
			}
			mod.Inputs = append(mod.Inputs, in)
		}
		batch := make([]*layers.Features, len(inputs))
		all := make([]*layers.Features, len(inputs))
		for i, in := range mod.Inputs {
			batch[i], all[i] = &in.Train.Features, in.All
		}
		if tr.Private {
			m.StartRecording()
		}
		tl, _, err := build(m, batch, true)
		m.StopRecording()
		if err != nil {
			return err
		}
		l, outs, err := build(m, all, false)
		if err != nil {
			return err
		}
		mod.TrainLogits, mod.Logits, mod.Outputs = tl, l, outs
		mod.CE, err = nn.NewCrossEntropy(m, tl, "loss")
		return err
	})
	if err != nil {
		return nil, err
	}
	return mod, nil
}

// Prepare compiles the module for training on g's training nodes — the
// full-batch loss, or the DP-SGD nodes when tr.Private — and returns the
// task the training loop runs. It is also what `inspect` shows.
func (mod *Module) Prepare(ctx *methods.Context, tr ModuleTraining, src *dp.Source) (trainers.Task, error) {
	return mod.prepare(ctx, tr, src, nil)
}

// watchPath adds a third path over just the validation nodes, and the
// training nodes when withTrain (what the loop looks at after every epoch:
// the training accuracy only goes to a trace), when they are at most 90 %
// of all nodes, and returns what predicts them; nil otherwise.
// The module's evaluation is row-wise (its inputs are node rows; BatchNorm
// uses running statistics in evaluation), so these rows' logits equal
// those of the all-nodes path. The path runs on a frozen copy of the model
// (nn.Frozen), so the full-batch loop can monitor one epoch while the next
// trains. It must be built before compiling, so that its dropout nodes are
// known to be off the training path.
func (mod *Module) watchPath(split graphs.Split, n int, withTrain bool) (*Watch, error) {
	rows := WatchRows(split, n, withTrain)
	if rows == nil {
		return nil, nil
	}
	m := mod.Model
	f, outs, err := m.NewFrozen(func() ([]*G.Node, error) {
		in := make([]*layers.Features, len(mod.features))
		for i, x := range mod.features {
			b, err := layers.NewFeatureBatch(m, x, len(rows), mod.names[i]+".watch")
			if err != nil {
				return nil, err
			}
			if err := b.Fill(rows); err != nil {
				return nil, err
			}
			in[i] = &b.Features
		}
		logits, _, err := mod.build(m, in, false)
		return []*G.Node{logits}, err
	})
	if err != nil {
		return nil, err
	}
	return NewWatch(f, outs[0], rows, n), nil
}

// WatchRows returns the nodes a monitoring path evaluates after every
// epoch: the validation nodes, and the training nodes when withTrain (the
// training accuracy only goes to a trace), sorted and distinct; nil when
// there are none or they are more than 90 % of the n nodes (a path over
// all nodes is then as cheap).
func WatchRows(split graphs.Split, n int, withTrain bool) []int {
	rows := append([]int(nil), split.Val...)
	if withTrain {
		rows = append(rows, split.Train...)
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	if len(rows) == 0 || 10*len(rows) > 9*n {
		return nil
	}
	return rows
}

// Watch predicts monitored rows from the logits of a frozen path (one row
// per monitored node, in the order of rows; nil rows: every node): a
// trainers.Pipe, and in turn (Predict) a trainers.MonitorFunc.
type Watch struct {
	f         *nn.Frozen
	logits    *G.Node
	rows      []int
	n         int
	top, pred []int // reused: the loop reads a monitoring result only until the next call
}

// NewWatch returns the Watch of f's output logits over the given rows of
// an n-node graph (nil: logits has a row for every node).
func NewWatch(f *nn.Frozen, logits *G.Node, rows []int, n int) *Watch {
	return &Watch{f: f, logits: logits, rows: rows, n: n}
}

// Logits is the path's output: one row per monitored node.
func (w *Watch) Logits() *G.Node { return w.logits }

func (w *Watch) Start()    { w.f.Start() }
func (w *Watch) Keep() any { return w.f.Keep() }

// Wait returns the prediction of the run Start began: the argmax of each
// monitored row, −1 for the other nodes.
func (w *Watch) Wait() ([]int, error) {
	if err := w.f.Wait(); err != nil {
		return nil, err
	}
	c := w.logits.Shape()[1]
	if w.rows == nil {
		w.pred = trainers.ArgmaxInto(w.pred, nn.Values(w.logits), w.n, c)
		return w.pred, nil
	}
	w.top = trainers.ArgmaxInto(w.top, nn.Values(w.logits), len(w.rows), c)
	if w.pred == nil {
		w.pred = make([]int, w.n)
	}
	for i := range w.pred {
		w.pred[i] = -1
	}
	for k, r := range w.rows {
		w.pred[r] = w.top[k]
	}
	return w.pred, nil
}

// Predict monitors in turn (DP-SGD's loop).
func (w *Watch) Predict() ([]int, error) {
	w.Start()
	return w.Wait()
}

// Retire gives the path's buffers but its logits' back (nn.Frozen.Release)
// once monitoring ends, so that they do not add to those of the final
// prediction over every node: a large release is collected at once, and
// the prediction's buffers reuse that memory instead of adding to the peak
// (GCN at 10⁶ nodes: 4.3 against 5.4 GB).
func (w *Watch) Retire() {
	if w.f.Release() > 64<<20 {
		runtime.GC()
	}
}

// Evaluate runs the frozen path on the model as it is and waits: its
// logits then hold every monitored row's.
func (w *Watch) Evaluate() error {
	w.Start()
	return w.f.Wait()
}

func (mod *Module) prepare(ctx *methods.Context, tr ModuleTraining, src *dp.Source, w *Watch) (trainers.Task, error) {
	var watch trainers.MonitorFunc
	var pipe trainers.Pipe
	if w != nil {
		watch, pipe = w.Predict, w
	}
	g := ctx.Graph
	train, target := g.Split.Train, func(row int) int { return g.Labels[row] }
	if tr.Samples != nil {
		if len(tr.Targets) != len(tr.Samples) {
			return nil, fmt.Errorf("module: %d samples but %d targets", len(tr.Samples), len(tr.Targets))
		}
		pos := make(map[int]int, len(tr.Samples))
		for k, s := range tr.Samples {
			pos[s] = k
		}
		train, target = tr.Samples, func(row int) int { return tr.Targets[pos[row]] }
	}
	n := len(train)
	if n == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	m := mod.Model
	evalOut := append([]*G.Node{mod.Logits}, mod.Outputs...)
	capacity := tr.Capacity(n)
	targets := make([]int, n) // sample s's target
	for s, r := range train {
		targets[s] = target(r)
	}
	labels := make([]int, capacity)
	pos := make([]int, capacity)
	for i := range pos {
		pos[i] = i
	}
	rows := make([]int, 0, capacity)
	node := func(s int) int { return train[s] }
	if tr.Private {
		// DP-SGD gathers a batch of samples every step: from the
		// samples' rows alone (FeatureBatch.From), indexed by sample.
		for _, in := range mod.Inputs {
			in.Train.From(train)
		}
		node = func(s int) int { return s }
	}
	fill := func(samples []int) error {
		rows = rows[:0]
		for k, s := range samples {
			rows = append(rows, node(s))
			labels[k] = targets[s]
		}
		for _, in := range mod.Inputs {
			if err := in.Train.Fill(rows); err != nil {
				return err
			}
		}
		return mod.CE.SetRows(pos[:len(samples)], labels)
	}
	opt := nn.NewAdam(tr.LR, tr.WeightDecay)
	if tr.Private {
		if src == nil {
			return nil, fmt.Errorf("DP-SGD needs a noise source")
		}
		var rec *dp.Recorder
		if tr.Multiplier > 0 {
			var err error
			if rec, err = ctx.Mechanism(tr.Plan, tr.Ledger, dp.PoissonGaussianEvent{Rate: tr.Rate, Multiplier: tr.Multiplier, Steps: 1}); err != nil {
				return nil, fmt.Errorf("DP-SGD: %w", err)
			}
		}
		sgd, err := dpnn.BuildSGD(m, mod.CE.PerRow, dpnn.SGDConfig{Clip: tr.Clip, Multiplier: tr.Multiplier,
			Rate: tr.Rate, Samples: n, Capacity: capacity, Recorder: rec, OneRow: true}, src, evalOut)
		if err != nil {
			return nil, err
		}
		return &trainers.SGDTask{SGD: sgd, Model: m, Logits: mod.Logits, Opt: opt,
			Fill: func(s []int) error {
				if err := fill(s); err != nil {
					return err
				}
				sgd.Groups.Singletons(len(s))
				return nil
			},
			TotalSteps: tr.SGDSteps(), Epochs: tr.Epochs, Recorder: ctx.Recorder, Run: ctx.Run, Stage: tr.Stage, Watch: watch}, nil
	}
	if err := m.Compile(mod.CE.Mean, evalOut); err != nil {
		return nil, err
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if err := fill(all); err != nil {
		return nil, err
	}
	t := &trainers.ModelTask{Model: m, Logits: mod.Logits, Opt: opt, Watch: watch, Pipe: pipe}
	if w != nil {
		t.Eval = func() error {
			w.Retire()
			return m.Evaluate()
		}
	}
	return t, nil
}

// Train prepares the module and trains it, keeping the epoch the run's
// selection chooses (best validation accuracy, the last epoch, or a private
// choice drawn from src): full batch with Adam, or DP-SGD (DP-Adam) with
// Poisson sampling and exactly tr.SGDSteps() steps.
func (mod *Module) Train(ctx *methods.Context, tr ModuleTraining, src *dp.Source) (trainers.LoopResult, error) {
	g := ctx.Graph
	labels, split := g.Labels, g.Split
	sel := trainers.Selection{Mode: trainers.SelectLast}
	if tr.Samples != nil {
		// Rows are not nodes: no validation nodes to select on.
		labels, split = tr.Targets, graphs.Split{}
	} else {
		var err error
		if sel, err = loopSelection(ctx, tr.Plan, src); err != nil {
			return trainers.LoopResult{}, err
		}
	}
	var watch *Watch
	if sel.Mode != trainers.SelectLast {
		var err error
		if watch, err = mod.watchPath(g.Split, g.N, trainers.KeepsStats(ctx.Recorder)); err != nil {
			return trainers.LoopResult{}, err
		}
	}
	task, err := mod.prepare(ctx, tr, src, watch)
	if err != nil {
		return trainers.LoopResult{}, err
	}
	return trainers.FullBatch(task, labels, split, trainers.LoopConfig{Epochs: tr.Epochs, Run: ctx.Run, Stage: tr.Stage,
		Recorder: ctx.Recorder, Select: sel})
}

// NodeRate is the Poisson rate B/N_train of DP-SGD, capped at 1.
func NodeRate(batch, nTrain int) float64 { return math.Min(1, float64(batch)/float64(nTrain)) }

// Placeholder is a seeded standard-normal (n, f) matrix standing in for a
// cached aggregate when a graph is built for inspection or gradient checks
// without training (zeros would make every norm layer degenerate).
func Placeholder(n, f int, seed uint64) *graphs.Features {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float64, n*f)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return layers.DenseFeatures(x, n, f)
}

// MLPBody is the module body of a plain MLP over the module's first input:
// the MLP is created on the first path and shared by the others. Extra
// outputs are its logits row-normalised (an embedding of each row).
func MLPBody(name string, cfg layers.MLPConfig) func(*nn.Model, []*layers.Features, bool) (*G.Node, []*G.Node, error) {
	var p *layers.MLP
	return func(mm *nn.Model, in []*layers.Features, _ bool) (*G.Node, []*G.Node, error) {
		if p == nil {
			var err error
			if p, err = layers.NewMLP(mm, name, cfg); err != nil {
				return nil, nil, err
			}
		}
		logits := in[0].MLP(p)
		return logits, []*G.Node{G.Must(nn.RowNormalize(logits))}, nil
	}
}
