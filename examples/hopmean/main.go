// Command hopmean is a dpgnn binary with a private method of its own
// beside the built-in ones, written outside the framework: nothing in
// methods/all or elsewhere names it. Build and try it with
//
//	go build -o hopmean ./examples/hopmean
//	./hopmean train hopmean --dataset cora --data-dir ../shared/datasets \
//	    --privacy node --epsilon 8 --delta 1e-5 --max-degree 168
//	./hopmean inspect hopmean --privacy node --epsilon 8 --delta 1e-5
//	./hopmean account hopmean --level node --epsilon 8 --delta 1e-5 --train-nodes 1000
//
// The method, hopmean, is a one-layer message-passing GNN trained with
// node-level DP-SGD: node v's input is the row h_v = mean of x_w over
// w ∈ {v} ∪ N(v) (one fixed mean-aggregation hop, as in SGC), and an MLP
// classifies h_v. Every training node is one DP-SGD example of one row, so
// the per-example machinery is the one DP-MLP uses; only the accounting is
// a group's (see plan): a node enters its own example and those of its
// ≤ D neighbours.
package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/cli"
	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all" // the built-in methods too
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// main is dpgnn with hopmean, at its defaults, beside the built-in methods.
func main() { cli.Main(func() methods.Method { return &HopMean{cfg: defaults} }) }

// defaults is hopmean's default configuration.
var defaults = Config{Hidden: 64, Epochs: 20, LR: 0.01, BatchSize: 64, Clip: 1, Flags: degree.DefaultFlags(40)}

// Config is hopmean's hyperparameters; the struct tags make them flags of
// every command, record fields and sweep --set keys.
type Config struct {
	Hidden       int     `flag:"hidden" help:"hidden width of the MLP"`
	Epochs       int     `flag:"epochs" help:"training epochs (⌈epochs/q⌉ DP-SGD steps)"`
	LR           float64 `flag:"lr" help:"Adam learning rate"`
	BatchSize    int     `flag:"batch-size" help:"expected Poisson batch size B (rate q = B/N_train)"`
	Clip         float64 `flag:"clip" help:"per-example gradient L2 bound C"`
	degree.Flags         // --max-degree D (node level), --degree-bound public
}

// HopMean is the method.
type HopMean struct{ cfg Config }

func (*HopMean) Name() string                 { return "hopmean" }
func (*HopMean) Short() string                { return "a mean-aggregation hop, then an MLP (examples/hopmean)" }
func (*HopMean) Levels() []methods.Level      { return []methods.Level{methods.None, methods.Node} }
func (*HopMean) DefaultSplit(d string) string { return methods.DefaultSplitFor(d) }
func (m *HopMean) Config() any                { return &m.cfg }
func (m *HopMean) Epochs() int                { return m.cfg.Epochs }
func (m *HopMean) Validate() error {
	c := &m.cfg
	_, err := m.bound()
	return methods.CheckAll(err, methods.CheckFields(c, methods.Width(&c.Hidden), methods.Epochs(&c.Epochs), methods.PositiveF(&c.LR),
		methods.Positive(&c.BatchSize), methods.PositiveF(&c.Clip)))
}

// bound is the node-level degree bound: D, a public bound on every node's
// degree; an input above it is refused before anything is released.
func (m *HopMean) bound() (degree.Bound, error) {
	return m.cfg.Bound(degree.Undirected, "every node's degree (edges in either direction)", degree.Public)
}

// group is DP-SGD on n training nodes at noise multiplier z as the
// accountant sees it: ⌈epochs/q⌉ steps at Poisson rate q = min(1, B/n),
// one node changing at most R = D+1 examples by at most 2C each, noise std
// z·R·2·C (z: the std over the sensitivity R·2·C of the whole released
// sum, dp's one convention).
type group struct {
	Rate  float64
	Steps int
	step  dp.Occurrences // one step: Occurrences{R, 2, Poisson{q, Gaussian{z}}}
	z     float64
}

func (m *HopMean) group(n int, z float64) group {
	q := run.NodeRate(m.cfg.BatchSize, n)
	return group{Rate: q, Steps: dpnn.Steps(m.cfg.Epochs, q), z: z,
		step: dp.Occurrences{R: m.cfg.MaxDegree + 1, Change: 2, Event: dp.Poisson{Rate: q, Event: dp.GaussianEvent{Multiplier: z, Count: 1}}}}
}

// NoiseStd is the noise std on the clipped sum: z·R·2·clip.
func (g group) NoiseStd(clip float64) float64 {
	return dp.OccurrencesNoiseStd(g.z, g.step.R, g.step.Change, clip)
}

// Step is the event of one noisy step; Event the plan's, all steps.
func (g group) Step() (dp.Event, error) { return g.step, g.step.Validate() }
func (g group) Event() (dp.Event, error) {
	e := dp.Composed{Count: g.Steps, Event: g.step}
	return e, e.Validate()
}

// plan is the privacy plan of a run on n training nodes: group's steps,
// calibrated to the run's budget. It refuses --selection private: the
// exponential mechanism's accounting assumes a node's removal changes the
// validation counts by at most 1, but here a prediction reads the rows of
// the node's neighbours, so they change by up to D+1.
//
// Proof (node level, raw neighbours G and G − v, every node of G with at
// most D neighbours counting both directions; G − v is then within D too,
// and a G above D is refused before any release). The examples are the
// training nodes u: the row h_u = mean of x over {u} ∪ N(u), N(u) read from
// the symmetrised raw adjacency, and the label y_u. Removing v deletes v's
// own example (if v trains) and changes h_u only for u ∈ N(v), |N(v)| ≤ D:
// no other row reads v's features or edges. So at most R = D+1 examples
// differ, each moving the clipped sum by at most 2C (a modified example's
// two clipped gradients have norm ≤ C each). Each example is one batch row
// with its own clip factor (Groups.Singletons; BuildSGD refuses layers that
// mix rows), sampled independently: the conditions of
// dp.Occurrences' per-step bound, composed over the steps. The last
// epoch is kept, so no label is read during training. N_train and the
// split are treated as public, as DP-MLP's are; the report says so.
func (m *HopMean) plan(ctx *methods.Context, n int) (*run.Calibrated, error) {
	b, err := m.bound()
	if err == nil && ctx.Selection == trainers.SelectPrivate {
		err = errors.New("--selection private is not supported: a node's removal changes up to D+1 predictions, and the selection is accounted for 1")
	}
	if err != nil {
		return nil, err
	}
	releases := func(s float64) []dp.Planned {
		g := m.group(n, s)
		ev, err := g.Event()
		if err != nil { // an invalid multiplier must never look cheap to the search
			ev = dp.RDPEvent{Name: "invalid " + g.step.String(), Curve: func(float64) float64 { return math.Inf(1) }}
		}
		what := fmt.Sprintf("DP-Adam: %d Poisson steps at rate %.4g over one-row examples, clip %g, noise std %.4g; a node enters at most R=%d examples (its own, its ≤ %d neighbours')",
			g.Steps, g.Rate, m.cfg.Clip, g.NoiseStd(m.cfg.Clip), b.D+1, b.D)
		return []dp.Planned{{Name: "dpsgd", Kind: "dp-sgd", Event: ev, What: what}}
	}
	noise := func(s float64) map[string]float64 {
		g := m.group(n, s)
		return map[string]float64{"std": g.NoiseStd(m.cfg.Clip), "clip": m.cfg.Clip, "rate": g.Rate, "steps": float64(g.Steps), "occurrences": float64(b.D + 1)}
	}
	cal, err := run.Calibrate(ctx, run.DeltaUnits{Unit: "node", Paper: run.PaperDigits(n, "training nodes")}, "rdp", releases, noise)
	if err == nil && ctx.Private() {
		cal.Plan.Uses = append(cal.Plan.Uses, run.TrainCountUse(n, m.group(n, 0).Rate), b.Use())
	}
	if err == nil {
		run.NoteSelection(ctx, cal.Plan, 1)
	}
	return cal, err
}

// rows returns h_v = mean of x over {v} ∪ N(v) for every node, refusing
// at node level a graph above the bound.
func (m *HopMean) rows(ctx *methods.Context) (*graphs.Features, error) {
	g, adj := ctx.Graph, graphs.Symmetrize(ctx.Graph.Adj)
	if b, err := m.bound(); err != nil {
		return nil, err
	} else if _, err := b.Apply(adj, degree.Key{}); err != nil && ctx.Level == methods.Node {
		return nil, b.Refusal(ctx.Dataset, err)
	}
	h := &graphs.Features{N: g.N, F: g.X.F, Dense: make([]float64, g.N*g.X.F)}
	graphs.RowNorm(adj).MulDense(g.X.ToDense(), g.X.F, h.Dense)
	return h, nil
}

// build returns the run's DP-SGD task (no noise without privacy: the same
// pipeline, clipped) and its plan.
func (m *HopMean) build(ctx *methods.Context) (*trainers.SGDTask, *run.Calibrated, error) {
	g, train := ctx.Graph, ctx.Graph.Split.Train
	if len(train) == 0 {
		return nil, nil, fmt.Errorf("the split has no training nodes")
	}
	cal, err := m.plan(ctx, len(train))
	if err != nil {
		return nil, nil, err
	}
	h, err := m.rows(ctx)
	if err != nil {
		return nil, nil, err
	}
	src, err := ctx.NoiseSource("hopmean")
	if err != nil {
		return nil, nil, err
	}
	group := m.group(len(train), cal.Multiplier)
	tr := run.ModuleTraining{Private: true, Rate: group.Rate} // records the training path for per-example norms
	mlp := layers.MLPConfig{Dims: []int{h.F, m.cfg.Hidden, g.NumClasses}, Activation: layers.ReLU, PlainLast: true}
	mod, err := run.BuildModule(ctx.Seed, []*graphs.Features{h}, []string{"H"}, tr, len(train), run.MLPBody("mlp", mlp))
	if err != nil {
		return nil, nil, err
	}
	capacity := tr.Capacity(len(train))
	cfg := dpnn.SGDConfig{Clip: m.cfg.Clip, Multiplier: group.NoiseStd(1), Rate: group.Rate, Samples: len(train), Capacity: capacity}
	if ctx.Private() {
		if cfg.StepEvent, err = group.Step(); err != nil {
			return nil, nil, err
		}
		cfg.Ledger, cfg.LedgerName = ctx.Ledger(), "dpsgd"
	}
	sgd, err := dpnn.BuildSGD(mod.Model, mod.CE.PerRow, cfg, src.Split("hopmean.dpsgd"), []*G.Node{mod.Logits})
	if err != nil {
		return nil, nil, err
	}
	batch := mod.Inputs[0].Train
	batch.From(train) // sample s is training node train[s]
	pos, labels := make([]int, capacity), make([]int, capacity)
	fill := func(samples []int) error {
		for k, s := range samples {
			pos[k], labels[k] = k, g.Labels[train[s]]
		}
		sgd.Groups.Singletons(len(samples)) // one example per row
		return errors.Join(batch.Fill(samples), mod.CE.SetRows(pos[:len(samples)], labels))
	}
	return &trainers.SGDTask{SGD: sgd, Model: mod.Model, Logits: mod.Logits, Opt: nn.NewAdam(m.cfg.LR, 0), Fill: fill,
		TotalSteps: group.Steps, Epochs: m.cfg.Epochs, Recorder: ctx.Recorder, Run: ctx.Run}, cal, nil
}

// Run trains once and, at node level, reports the plan against the ledger.
func (m *HopMean) Run(ctx *methods.Context) (*methods.Outcome, error) {
	if err := run.Begin(ctx, "hopmean", m.cfg.Hidden, 1); err != nil {
		return nil, err
	}
	task, cal, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	sel := trainers.Selection{Mode: ctx.Selection} // last at node level (plan refused private); best without privacy
	res, err := trainers.FullBatch(task, ctx.Graph.Labels, ctx.Graph.Split, trainers.LoopConfig{Epochs: m.cfg.Epochs, Run: ctx.Run, Recorder: ctx.Recorder, Select: sel})
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	if ctx.Level == methods.Node {
		out.Privacy, err = run.Report(ctx, cal.Plan)
	}
	return out, err
}

// BuildModel is the graph Run trains, for `dpgnn inspect`.
func (m *HopMean) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	task, _, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	return task.Model, nil
}

// AccountCounts and AccountPlan are `dpgnn account hopmean`: the plan of a
// run with a given training-node count.
func (m *HopMean) AccountCounts(l methods.Level) []string { return run.NodeCountPlan{}.Counts(l) }
func (m *HopMean) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	return run.NodeCountPlan{Method: "hopmean", Calibrate: m.plan}.Plan(ctx, c)
}
