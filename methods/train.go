package methods

import (
	"fmt"
	"math"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/pflag"
)

// TrainOptions are the common options of `dpgnn train`.
type TrainOptions struct {
	Dataset string // name or path; "" means the embedded default (csbm)
	DataDir string
	Split   string // "" means the method's default for the dataset
	// Features is the feature preprocessing: "" or "raw" (as stored) or
	// "l1" (rows scaled to sum 1, PyG's NormalizeFeatures). It reads no
	// edge.
	Features string
	Level    Level
	Epsilon  float64 // +Inf for no privacy
	Delta    float64 // with DeltaRule DeltaGiven (or "" and Delta > 0)
	// DeltaRule is where δ comes from: given, auto (public quantities; the
	// default) or paper (the method's paper, from private counts).
	DeltaRule DeltaRule
	// Selection is --selection (auto, best, last, private) and
	// SelectionEpsilon the ε of one private selection.
	Selection        string
	SelectionEpsilon float64
	Runs             int
	Seed             uint64
	// SecureNoise keys the privacy mechanisms from crypto/rand (see
	// Context.SecureNoise); Seed then only drives splits, initialisation
	// and dropout.
	SecureNoise bool
	Recorder    trainers.Recorder
	// Flags is the method's flag set after parsing; its values are recorded
	// as the hyperparameters.
	Flags *pflag.FlagSet
}

// DefaultDataset is the embedded synthetic graph used when no dataset is
// given.
const DefaultDataset = "csbm"

// Train runs a method opts.Runs times with seeds Seed, Seed+1, … and
// summarises the results. Random splits are redrawn for every run from the
// run's seed; published mask splits stay fixed.
func Train(m Method, opts TrainOptions) (*trainers.Record, error) {
	start := time.Now()
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("--runs must be positive, got %d", opts.Runs)
	}
	g, spec, err := prepare(m, &opts)
	if err != nil {
		return nil, err
	}
	rec := opts.Recorder
	if rec == nil {
		rec = trainers.Nop{}
	}
	rec.Plan(opts.Runs * m.Epochs())
	defer rec.Done()

	metrics := map[string][]float64{}
	var report *dp.Report
	for r := 0; r < opts.Runs; r++ {
		seed := opts.Seed + uint64(r)
		gs, err := graphs.ApplySplit(g, spec.ForRun(r, len(g.MaskSplits)), seed)
		if err != nil {
			return nil, err
		}
		ctx := opts.context(gs, g.Name, seed)
		ctx.Run, ctx.Recorder = r, rec
		out, err := m.Run(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %w", m.Name(), r+1, err)
		}
		if len(out.Pred) != gs.N {
			return nil, fmt.Errorf("%s returned %d predictions for %d nodes", m.Name(), len(out.Pred), gs.N)
		}
		sp := gs.Split
		metrics["test_acc"] = append(metrics["test_acc"], trainers.Accuracy(out.Pred, gs.Labels, sp.Test))
		metrics["test_f1_micro"] = append(metrics["test_f1_micro"], trainers.MicroF1(out.Pred, gs.Labels, sp.Test))
		metrics["val_acc"] = append(metrics["val_acc"], out.ValAcc)
		metrics["train_acc"] = append(metrics["train_acc"], trainers.Accuracy(out.Pred, gs.Labels, sp.Train))
		for k, v := range out.Extra {
			metrics[k] = append(metrics[k], v)
		}
		if out.Privacy != nil && ctx.Private() {
			out.Privacy.Uses = append(out.Privacy.Uses, dp.Use{Kind: "evaluation",
				What:    "test, validation and training accuracy on the split's labels (the metrics of this record)",
				Covered: "not released: the experimenter's measurement; at node level labels are private and publishing these numbers is not covered"})
		}
		if out.Privacy != nil {
			if report == nil || epsOf(out.Privacy) > epsOf(report) {
				report = out.Privacy // report the largest ε over runs
			}
		}
	}
	recd := &trainers.Record{
		Method: m.Name(), Dataset: g.Name, Split: spec.String(), Privacy: string(opts.Level),
		Epsilon: trainers.Eps(opts.Epsilon), Delta: opts.Delta, Runs: opts.Runs, Seed: opts.Seed,
		Hyperparameters: Hyperparameters(opts.Flags), Metrics: map[string]trainers.Summary{},
		PrivacyReport: report, SecureNoise: opts.SecureNoise,
	}
	if report != nil {
		recd.Delta = report.Delta
	}
	for k, v := range metrics {
		recd.Metrics[k] = trainers.Summarize(v, opts.Seed)
	}
	recd.Seconds = time.Since(start).Seconds()
	return recd, nil
}

// prepare fills in opts' defaults, checks them and the method's
// hyperparameters, loads the dataset and parses the split (the method's
// default for the dataset when none is given).
func prepare(m Method, opts *TrainOptions) (*graphs.Graph, graphs.SplitSpec, error) {
	var none graphs.SplitSpec
	if opts.Dataset == "" {
		opts.Dataset = DefaultDataset
	}
	if opts.Level == "" {
		opts.Level = None
	}
	if !Supports(m, opts.Level) {
		return nil, none, fmt.Errorf("method %s does not support --privacy %s (supported: %v)", m.Name(), opts.Level, m.Levels())
	}
	if opts.Level == None {
		opts.Epsilon = math.Inf(1)
	} else if !(opts.Epsilon > 0) {
		return nil, none, fmt.Errorf("--epsilon must be positive (or inf), got %v", opts.Epsilon)
	}
	if opts.Delta < 0 || opts.Delta >= 1 || math.IsNaN(opts.Delta) {
		return nil, none, fmt.Errorf("--delta must be in (0, 1), auto or paper, got %v", opts.Delta)
	}
	switch opts.DeltaRule {
	case "":
		opts.DeltaRule = DeltaAuto
		if opts.Delta > 0 {
			opts.DeltaRule = DeltaGiven
		}
	case DeltaGiven, DeltaAuto, DeltaPaper:
	default:
		return nil, none, fmt.Errorf("unknown δ rule %q", opts.DeltaRule)
	}
	sel, err := resolveSelection(opts.Level, opts.Level != None && !math.IsInf(opts.Epsilon, 1), opts.Selection, opts.SelectionEpsilon)
	if err != nil {
		return nil, none, err
	}
	opts.Selection = sel
	if err := m.Validate(); err != nil {
		return nil, none, err
	}
	g, err := graphs.Load(opts.Dataset, opts.DataDir, opts.Seed)
	if err != nil {
		return nil, none, err
	}
	switch opts.Features {
	case "", "raw":
	case "l1":
		if g.X != nil {
			g.X = graphs.L1NormalizeFeatures(g.X)
		}
	default:
		return nil, none, fmt.Errorf("--features must be raw or l1, got %q", opts.Features)
	}
	if g.Labels == nil || g.NumClasses < 2 {
		return nil, none, fmt.Errorf("dataset %s has no node labels: %s is a node-classification method", opts.Dataset, m.Name())
	}
	splitText := opts.Split
	if splitText == "" {
		splitText = m.DefaultSplit(g.Name)
	}
	spec, err := graphs.ParseSplit(splitText)
	if err != nil {
		return nil, none, err
	}
	return g, spec, nil
}

// NewContext checks opts as Train does, loads the dataset and returns the
// context of Train's first run (seed opts.Seed, its split applied), for
// building a method's model without training it (`dpgnn inspect`).
// opts.Runs and opts.Recorder are ignored.
func NewContext(m Method, opts TrainOptions) (*Context, error) {
	g, spec, err := prepare(m, &opts)
	if err != nil {
		return nil, err
	}
	gs, err := graphs.ApplySplit(g, spec.ForRun(0, len(g.MaskSplits)), opts.Seed)
	if err != nil {
		return nil, err
	}
	ctx := opts.context(gs, g.Name, opts.Seed)
	ctx.Recorder = trainers.Nop{}
	return ctx, nil
}

// context is the Context of one run on the split graph gs.
func (opts *TrainOptions) context(gs *graphs.Graph, dataset string, seed uint64) *Context {
	return &Context{Graph: gs, Dataset: dataset, Level: opts.Level, Epsilon: opts.Epsilon,
		Delta: opts.Delta, DeltaRule: opts.DeltaRule, Selection: opts.Selection, SelectionEpsilon: opts.SelectionEpsilon,
		Seed: seed, SecureNoise: opts.SecureNoise}
}

func epsOf(p *dp.Report) float64 {
	if p.Epsilon == nil {
		return math.Inf(1)
	}
	return *p.Epsilon
}

// Hyperparameters returns the values of a parsed method flag set, typed
// (numbers as numbers, booleans as booleans).
func Hyperparameters(fs *pflag.FlagSet) map[string]any {
	out := map[string]any{}
	if fs == nil {
		return out
	}
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "int", "int64", "uint64":
			var v int64
			fmt.Sscan(f.Value.String(), &v)
			out[f.Name] = v
		case "float64":
			var v float64
			fmt.Sscan(f.Value.String(), &v)
			out[f.Name] = v
		case "bool":
			out[f.Name] = f.Value.String() == "true"
		default:
			out[f.Name] = f.Value.String()
		}
	})
	return out
}
