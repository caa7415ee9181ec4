package run

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
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
	Level    methods.Level
	Epsilon  float64 // +Inf for no privacy
	Delta    float64 // with DeltaRule DeltaGiven (or "" and Delta > 0)
	// DeltaRule is where δ comes from: given, auto (public quantities; the
	// default) or paper (the method's paper, from private counts).
	DeltaRule methods.DeltaRule
	// Selection is --selection (auto, best, last, private) and
	// SelectionEpsilon the ε of one private selection.
	Selection        string
	SelectionEpsilon float64
	// MaxMemory is the memory estimate (bytes) above which a run is refused
	// before it allocates (0: graphs.MemoryLimit).
	MaxMemory int64
	Runs      int
	Seed      uint64
	// SecureNoise keys the privacy mechanisms from crypto/rand (see
	// Context.SecureNoise); Seed then only drives splits, initialisation
	// and dropout.
	SecureNoise bool
	Recorder    trainers.Recorder
	// Command is the command line that asked for the run, recorded as is
	// (the CLI passes its own).
	Command string
}

// DefaultDataset is the embedded synthetic graph used when no dataset is
// given.
const DefaultDataset = "csbm"

// Train runs a method opts.Runs times with seeds Seed, Seed+1, … and
// summarises the results. Random splits are redrawn for every run from the
// run's seed; published mask splits stay fixed.
//
// The record carries its provenance: the binary's version and commit, the
// start time, the command line, the seeds of the runs and the fingerprint
// of the dataset as loaded (DatasetFingerprint).
func Train(m methods.Method, opts TrainOptions) (*trainers.Record, error) {
	return TrainContext(context.Background(), m, opts)
}

// InterruptedError is the error of a TrainContext whose context ended
// before every run finished. Finished of Runs runs finished (the record
// TrainContext returns with it summarises them, nil when none did); the
// next one was stopped. It wraps the context's error (context.Canceled on
// Ctrl-C).
type InterruptedError struct {
	Finished, Runs int
	Err            error
}

func (e *InterruptedError) Error() string {
	done := "no run finished"
	if e.Finished > 0 {
		done = fmt.Sprintf("%d of %d runs finished", e.Finished, e.Runs)
	}
	return fmt.Sprintf("interrupted: run %d of %d was stopped; %s", e.Finished+1, e.Runs, done)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// TrainContext is Train, stopped when ctx ends: it checks ctx before every
// run and, while a run trains, returns as soon as ctx ends. It then returns
// the record of the runs that finished (nil if none) with an
// *InterruptedError. A run in progress when ctx ends is not counted: it is
// abandoned, left to end in the background with its outcome discarded (it
// may still report epochs to opts.Recorder meanwhile), which suits a
// command about to exit.
func TrainContext(ctx context.Context, m methods.Method, opts TrainOptions) (*trainers.Record, error) {
	start := time.Now()
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("--runs must be positive, got %d", opts.Runs)
	}
	g, spec, splitRecord, fingerprint, err := prepare(m, &opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &InterruptedError{Runs: opts.Runs, Err: err}
	}
	rec := opts.Recorder
	if rec == nil {
		rec = trainers.Nop{}
	}
	rec.Plan(opts.Runs * m.Epochs())
	defer rec.Done()

	task := TaskOf(m)
	metrics := map[string][]float64{}
	var report *dp.Report
	finished := 0
	for r := 0; r < opts.Runs; r++ {
		if ctx.Err() != nil {
			break
		}
		seed := opts.Seed + uint64(r)
		gs, err := runGraph(task, g, spec, r, seed)
		if err != nil {
			return nil, err
		}
		c := opts.context(gs, g.Name, seed)
		c.Run, c.Recorder = r, rec
		out, err := runUntil(ctx, m, c)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				break
			}
			return nil, fmt.Errorf("%s run %d: %w", m.Name(), r+1, err)
		}
		mt, err := task.Metrics(gs, out)
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %w", m.Name(), r+1, err)
		}
		for k, v := range mt {
			metrics[k] = append(metrics[k], v)
		}
		if out.Privacy != nil && c.Private() {
			out.Privacy.Uses = append(out.Privacy.Uses, splitUses(task, g, spec, r, opts.Level)...)
			out.Privacy.Uses = append(out.Privacy.Uses, dp.Use{Kind: "evaluation", What: task.Evaluation(),
				Covered: "not released: the experimenter's measurement; where the data it reads is private, publishing these numbers is not covered"},
				dp.Use{Kind: "provenance", What: "the record's dataset_fingerprint, a hash of the whole dataset as loaded",
					Covered: "not released: it identifies the exact data (anyone holding a candidate dataset can test it); remove it from a record before publishing"})
		}
		if out.Privacy != nil {
			if report == nil || epsOf(out.Privacy) > epsOf(report) {
				report = out.Privacy // report the largest ε over runs
			}
		}
		finished++
	}
	var stopped error
	if finished < opts.Runs {
		stopped = &InterruptedError{Finished: finished, Runs: opts.Runs, Err: ctx.Err()}
		if finished == 0 {
			return nil, stopped
		}
	}
	version, commit := trainers.BuildInfo()
	if commit == "" {
		commit = trainers.UnknownCommit // said, not left out
	}
	seeds := make([]uint64, finished)
	for r := range seeds {
		seeds[r] = opts.Seed + uint64(r)
	}
	recd := &trainers.Record{
		Method: m.Name(), Dataset: g.Name, Split: splitRecord, Privacy: string(opts.Level),
		Epsilon: dp.EpsilonJSON(opts.Epsilon), Runs: finished, Seed: opts.Seed, Seeds: seeds,
		Hyperparameters: Hyperparameters(m, opts.Features), Metrics: map[string]trainers.Summary{},
		PrivacyReport: report, SecureNoise: opts.SecureNoise,
		Version: version, Commit: commit, Timestamp: start.UTC().Format(time.RFC3339),
		Command: opts.Command, DatasetFingerprint: fingerprint,
	}
	// δ only means something when a finite ε is claimed: a run without
	// privacy (level none, or ε = ∞) records null, not a δ nobody spent.
	if opts.Level != methods.None && !math.IsInf(opts.Epsilon, 1) {
		d := opts.Delta
		if report != nil {
			d = report.Delta
		}
		recd.Delta = &d
	}
	for k, v := range metrics {
		recd.Metrics[k] = trainers.Summarize(v, opts.Seed)
	}
	recd.Seconds = time.Since(start).Seconds()
	return recd, stopped
}

// runUntil runs m once and returns its outcome, or ctx's error as soon as
// ctx ends. A run that returns after ctx ended counts as stopped too, so
// whether a run counts depends only on whether it ended before ctx did.
// A stopped run is abandoned: it goes on in the background and its outcome
// is dropped.
func runUntil(ctx context.Context, m methods.Method, c *methods.Context) (*methods.Outcome, error) {
	if ctx.Done() == nil { // a context that never ends
		return m.Run(c)
	}
	type result struct {
		out     *methods.Outcome
		err     error
		stopped error
	}
	done := make(chan result, 1)
	go func() {
		out, err := m.Run(c)
		done <- result{out, err, ctx.Err()}
	}()
	select {
	case res := <-done:
		if res.stopped != nil {
			return nil, res.stopped
		}
		return res.out, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prepare fills in opts' defaults, checks them and the method's
// hyperparameters, loads the dataset and parses the split (the method's
// default for the dataset when none is given). It returns the graph with
// its features preprocessed, the split, what the record states as the
// split (checkData) and the fingerprint of the dataset as loaded (before
// --features).
func prepare(m methods.Method, opts *TrainOptions) (*graphs.Graph, graphs.SplitSpec, string, string, error) {
	var none graphs.SplitSpec
	if err := checkOptions(m, opts); err != nil {
		return nil, none, "", "", err
	}
	g, err := LoadDataset(*opts)
	if err != nil {
		return nil, none, "", "", err
	}
	fingerprint := DatasetFingerprint(g)
	if opts.Features == "l1" && g.X != nil {
		g.X = graphs.L1NormalizeFeatures(g.X)
	}
	spec, record, err := checkData(m, *opts, g)
	if err != nil {
		return nil, none, "", "", err
	}
	return g, spec, record, fingerprint, nil
}

// LevelValidator is a method whose hyperparameters are valid at some
// privacy levels only: ValidateLevel refuses a configuration that makes no
// sense at the run's level (CARIBOU's contractive layers with sensitivity 0
// at that level: a mechanism with nothing to perturb). private says the run
// claims a finite ε there. Train, Check and NewContext call it after
// Validate, before any data is loaded: it must read only the
// configuration, so that it refuses every input alike (a refusal that
// depended on the data would itself tell something about it).
type LevelValidator interface {
	ValidateLevel(level methods.Level, private bool) error
}

// checkOptions fills in opts' defaults and checks everything that needs no
// data: the privacy level against the method's, ε, δ, the selection rule,
// --features and the method's hyperparameters (Validate, and
// ValidateLevel for a LevelValidator).
func checkOptions(m methods.Method, opts *TrainOptions) error {
	if opts.Dataset == "" {
		opts.Dataset = DefaultDataset
	}
	if opts.Level == "" {
		opts.Level = methods.None
	}
	if !methods.Supports(m, opts.Level) {
		return fmt.Errorf("method %s does not support --privacy %s (supported: %v)", m.Name(), opts.Level, m.Levels())
	}
	if opts.Level == methods.None {
		opts.Epsilon = math.Inf(1)
	} else if err := CheckEpsilon("--epsilon", opts.Epsilon, ""); err != nil {
		return err
	}
	if opts.Delta != 0 || opts.DeltaRule == methods.DeltaGiven {
		if err := CheckDelta("--delta", opts.Delta, ""); err != nil {
			return err
		}
	}
	switch opts.DeltaRule {
	case "":
		opts.DeltaRule = methods.DeltaAuto
		if opts.Delta > 0 {
			opts.DeltaRule = methods.DeltaGiven
		}
	case methods.DeltaGiven, methods.DeltaAuto, methods.DeltaPaper:
	default:
		return fmt.Errorf("unknown δ rule %q", opts.DeltaRule)
	}
	sel, err := resolveSelection(opts.Level, opts.Level != methods.None && !math.IsInf(opts.Epsilon, 1), opts.Selection, opts.SelectionEpsilon)
	if err != nil {
		return err
	}
	opts.Selection = sel
	switch opts.Features {
	case "", "raw", "l1":
	default:
		return fmt.Errorf("--features must be raw or l1, got %q", opts.Features)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if lv, ok := m.(LevelValidator); ok {
		return lv.ValidateLevel(opts.Level, opts.Level != methods.None && !math.IsInf(opts.Epsilon, 1))
	}
	return nil
}

// checkData checks that the dataset g suits the method's task and returns
// the split spec (opts.Split, or the method's default for the dataset,
// parsed) with what the record states as the split (SplitRecord: the
// split that runs, which for a task that holds out edges is not the node
// split). It refuses a split that would not run as named: --split on a
// task that draws no node split, and --split masks with more runs than
// the dataset has masks (run r uses mask r; the runs beyond would repeat
// masks silently).
//
// Without privacy it also refuses a signed graph whose edges (or published
// test edges) are all of one sign, whose sign AUC and SSI are undefined.
// A private run is not refused for it: removing one node can remove the
// last negative edge, and a refusal of G − v where G runs would be a
// release; its metrics are then NaN (SignMetrics).
func checkData(m methods.Method, opts TrainOptions, g *graphs.Graph) (graphs.SplitSpec, string, error) {
	var none graphs.SplitSpec
	task := TaskOf(m)
	if err := task.Check(g); err != nil {
		return none, "", fmt.Errorf("%s is a method for %s: %v", m.Name(), task.Name(), err)
	}
	splitText := opts.Split
	if splitText == "" {
		splitText = m.DefaultSplit(g.Name)
	}
	spec, err := graphs.ParseSplit(splitText)
	if err != nil {
		return none, "", err
	}
	record, err := SplitRecord(task, g, opts.Split, spec)
	if err != nil {
		return none, "", err
	}
	if masks := len(g.MaskSplits); spec.Kind == graphs.SplitMasks && spec.MaskPerRun && masks > 0 && opts.Runs > masks {
		return none, "", fmt.Errorf("--split masks with --runs %d: dataset %s has %d published masks and run r uses mask r, so the runs beyond %d would repeat masks; "+
			"use --runs %d or fewer, or --split masks:K to train every run on mask K", opts.Runs, g.Name, masks, masks, masks)
	}
	if _, ok := task.(SignedLink); ok && (opts.Level == methods.None || math.IsInf(opts.Epsilon, 1)) {
		switch {
		case g.Adj.NNZ() == 0 || g.Neg.NNZ() == 0:
			return none, "", fmt.Errorf("dataset %s has edges of one sign only (%d positive, %d negative entries): edge-sign prediction needs both (its AUC and SSI are undefined otherwise)",
				g.Name, g.Adj.NNZ(), g.Neg.NNZ())
		case g.EdgeTest != nil && !bothSigns(g.EdgeTest):
			return none, "", fmt.Errorf("dataset %s: its published test edges are of one sign only: edge-sign prediction's AUC and SSI are undefined on them", g.Name)
		}
	}
	return spec, record, nil
}

// LoadDataset loads the dataset opts names (DefaultDataset when none), as
// Train does.
func LoadDataset(opts TrainOptions) (*graphs.Graph, error) {
	name := opts.Dataset
	if name == "" {
		name = DefaultDataset
	}
	return graphio.Load(name, opts.DataDir, opts.Seed)
}

// Check makes every check Train makes before it trains, without training:
// the options (level, ε, δ, selection, --runs, --features), the method's
// configuration (Validate), the dataset g (as returned by LoadDataset for
// the same options; not modified) and the split, parsed and drawn for
// every run. It returns the split Train would record. A
// sweep calls it for every cell of its grid before it trains any.
func Check(m methods.Method, opts TrainOptions, g *graphs.Graph) (string, error) {
	if opts.Runs <= 0 {
		return "", fmt.Errorf("--runs must be positive, got %d", opts.Runs)
	}
	if err := checkOptions(m, &opts); err != nil {
		return "", err
	}
	// ResolveDelta's rule, checked before a run gets that far: at node
	// level no count of units is public, so auto has nothing to go on.
	if opts.Level == methods.Node && !math.IsInf(opts.Epsilon, 1) && opts.DeltaRule == methods.DeltaAuto {
		return "", fmt.Errorf("--delta auto: at node level no count of privacy units is public (the number of nodes is private); " +
			"pass --delta (e.g. 1e-5) or --delta paper (the paper's rule on the private count)")
	}
	spec, record, err := checkData(m, opts, g)
	if err != nil {
		return "", err
	}
	checked := map[string]bool{}
	for r := 0; r < opts.Runs; r++ {
		s := spec.ForRun(r, len(g.MaskSplits))
		if checked[s.String()] {
			continue // a random split's draw only fails on counts, the same for every seed
		}
		checked[s.String()] = true
		if _, err := runGraph(TaskOf(m), g, spec, r, opts.Seed+uint64(r)); err != nil {
			return "", err
		}
	}
	return record, nil
}

// NewContext checks opts as Train does, loads the dataset and returns the
// context of Train's first run (seed opts.Seed, its split applied), for
// building a method's model without training it (`dpgnn inspect`).
// opts.Runs and opts.Recorder are ignored.
func NewContext(m methods.Method, opts TrainOptions) (*methods.Context, error) {
	g, spec, _, _, err := prepare(m, &opts)
	if err != nil {
		return nil, err
	}
	gs, err := runGraph(TaskOf(m), g, spec, 0, opts.Seed)
	if err != nil {
		return nil, err
	}
	ctx := opts.context(gs, g.Name, opts.Seed)
	ctx.Recorder = trainers.Nop{}
	return ctx, nil
}

// runGraph is run r's graph: g with its node split (when the task draws
// one) and the task's preparation, both drawn from the run's seed.
func runGraph(task Task, g *graphs.Graph, spec graphs.SplitSpec, r int, seed uint64) (*graphs.Graph, error) {
	gs := g
	if task.NodeSplit(g) {
		var err error
		if gs, err = graphs.ApplySplit(g, spec.ForRun(r, len(g.MaskSplits)), seed); err != nil {
			return nil, err
		}
	}
	return task.Prepare(gs, seed)
}

// splitUses are the report's uses of the data by run r's split of the
// dataset g (what runGraph draws), at the run's level:
//
//   - a node split (the task draws one). At edge level it reads node ids
//     and labels only, which are public there, and no edge; the inductive
//     split also drops every edge between its two sides, a filter by that
//     public membership, so the training graph of G minus an edge e is G's
//     training graph minus e (or the same graph, when e crosses): the
//     neighbouring relation survives the split. At node level the labels
//     are private: a drawn split (per-class, ratio, inductive) is stratified
//     by class over the raw graph's labelled nodes, so removing a node can
//     change which other nodes train; a published one (masks, fixed) loses
//     the removed node and keeps the others' roles. Either way it is taken
//     as given, outside any mechanism: treated as public.
//   - an edge split (link and sign tasks hold out test edges). The guarantee
//     is stated for the training graph: a split drawn by shuffling the raw
//     edge list is not stable (removing a unit changes the list's length and
//     every position), so the training graph is treated as public input; a
//     published split loses the removed unit's edges and keeps the others'.
func splitUses(task Task, g *graphs.Graph, spec graphs.SplitSpec, r int, level methods.Level) []dp.Use {
	var out []dp.Use
	if task.NodeSplit(g) {
		s := spec.ForRun(r, len(g.MaskSplits))
		published := s.Kind == graphs.SplitMasks || s.Kind == graphs.SplitFixed
		inductive := s.Kind == graphs.SplitInductive
		u := dp.Use{Kind: UseSplit}
		if published {
			u.What = fmt.Sprintf("the node split %s: the training, validation and test nodes the dataset comes with", s)
		} else if inductive {
			u.What = fmt.Sprintf("the node split %s: the training side and the rest (test, and validation when the split has a share for it) drawn from the run's seed over the nodes, by class, and every edge between the training side and the rest dropped", s)
		} else {
			u.What = fmt.Sprintf("the node split %s: training, validation and test nodes drawn from the run's seed over the labelled nodes, by class", s)
		}
		switch {
		case level == methods.Edge:
			u.Covered = "public data (at edge level node ids and labels are public, and the split reads no edge"
			if inductive {
				u.Covered += "; dropping the edges between the training side and the rest is a filter by that public membership, so G minus an edge e gives G's training graph minus e"
			}
			u.Covered += ")"
		case published:
			u.Covered = dp.TreatedAsPublic("published with the dataset: removing a node takes it out of the split and leaves the other nodes' roles")
		default:
			u.Covered = dp.TreatedAsPublic("the split is taken as given, outside any mechanism: it is drawn over the raw graph's labelled nodes and their classes, " +
				"so removing a node can change which other nodes train, validate and test")
		}
		out = append(out, u)
		c := dp.Use{Kind: UseCount, What: fmt.Sprintf("the class count C = %d (the largest label + 1) sets every model's output width", g.NumClasses)}
		if level == methods.Edge {
			c.Covered = "public data (at edge level labels are public)"
		} else {
			c.Covered = dp.TreatedAsPublic("taken as given with the dataset: removing the only node of the last class would lower it")
		}
		out = append(out, c)
	}
	var frac float64
	drawn := true
	switch t := task.(type) {
	case SignedLink:
		frac, drawn = t.TestFraction, g.EdgeTrain == nil
	case LinkPrediction:
		frac = t.TestFraction
	default:
		return out
	}
	u := dp.Use{Kind: UseSplit}
	if drawn {
		u.What = fmt.Sprintf("the edge split: a fraction %g of the edges held out as test edges by a shuffle drawn from the run's seed; training reads only the rest (the training graph)", frac)
		u.Covered = dp.TreatedAsPublic("the training graph is taken as the input: the hold-out shuffles the raw edge list, whose length and order change when a unit is removed, " +
			"so a neighbour's training graph is not this one minus the unit; the guarantee is stated for neighbouring training graphs")
	} else {
		u.What = "the edge split the dataset comes with: training reads only its training edges"
		u.Covered = dp.TreatedAsPublic("published with the dataset: removing a unit takes its edges out of their side and leaves the other edges' roles; the guarantee is stated for the training graph")
	}
	return append(out, u)
}

// context is the Context of one run on the split graph gs.
func (opts *TrainOptions) context(gs *graphs.Graph, dataset string, seed uint64) *methods.Context {
	return methods.NewContext(methods.Context{Graph: gs, Dataset: dataset, Level: opts.Level, Epsilon: opts.Epsilon,
		Delta: opts.Delta, DeltaRule: opts.DeltaRule, Selection: opts.Selection, SelectionEpsilon: opts.SelectionEpsilon,
		Seed: seed, SecureNoise: opts.SecureNoise, MaxMemory: opts.MaxMemory})
}

func epsOf(p *dp.Report) float64 {
	if p.Epsilon == nil {
		return math.Inf(1)
	}
	return *p.Epsilon
}

// Hyperparameters are what a record states as a run's hyperparameters:
// the method's configuration by flag name (ConfigValues) and the feature
// preprocessing, "features" (raw when features is empty).
func Hyperparameters(m methods.Method, features string) map[string]any {
	hp := methods.ConfigValues(m.Config())
	if features == "" {
		features = "raw"
	}
	hp["features"] = features
	return hp
}

// DatasetFingerprint is the SHA-256 (hex) of a graph's data: its size, class
// count and direction, the adjacency (indptr, indices, data), the negative
// adjacency of a signed graph, the features (dense or sparse), the labels,
// the splits that come with the dataset (a loader's split, published
// masks) and a signed graph's published edge split. Every array is written
// with its length, integers as int64 and floats as IEEE-754 bits, all
// little-endian, so the same data always gives the same fingerprint, on any
// machine, and changing any entry changes it. The name is not hashed: the
// same file loaded by name or by path has one fingerprint.
func DatasetFingerprint(g *graphs.Graph) string {
	h := &fingerprinter{h: sha256.New()}
	h.str("dpgnn dataset v1")
	h.int(g.N)
	h.int(g.NumClasses)
	h.bool(g.Directed)
	h.str("adj")
	h.csr(g.Adj)
	h.str("neg")
	h.csr(g.Neg)
	h.str("features")
	h.bool(g.X != nil)
	if g.X != nil {
		h.int(g.X.N)
		h.int(g.X.F)
		h.bool(g.X.Dense != nil)
		h.floats(g.X.Dense)
		h.csr(g.X.Sparse)
	}
	h.str("labels")
	h.ints(g.Labels)
	h.str("split")
	h.split(g.Split)
	h.int(len(g.MaskSplits))
	for _, s := range g.MaskSplits {
		h.split(s)
	}
	h.str("edge split")
	h.csr(g.EdgeTrain)
	h.csr(g.EdgeTest)
	return hex.EncodeToString(h.sum())
}

// fingerprinter writes values to a hash in a fixed little-endian layout,
// through a buffer (the hash sees large writes, not 8-byte ones).
type fingerprinter struct {
	h   hash.Hash
	buf []byte
}

func (f *fingerprinter) flush() {
	f.h.Write(f.buf)
	f.buf = f.buf[:0]
}

func (f *fingerprinter) u64(v uint64) {
	if len(f.buf) >= 1<<15 {
		f.flush()
	}
	f.buf = binary.LittleEndian.AppendUint64(f.buf, v)
}

func (f *fingerprinter) int(v int) { f.u64(uint64(int64(v))) }

func (f *fingerprinter) bool(v bool) {
	if v {
		f.u64(1)
	} else {
		f.u64(0)
	}
}

func (f *fingerprinter) str(s string) {
	f.int(len(s))
	f.flush()
	f.h.Write([]byte(s))
}

func (f *fingerprinter) ints(xs []int) {
	f.int(len(xs))
	for _, x := range xs {
		f.int(x)
	}
}

func (f *fingerprinter) floats(xs []float64) {
	f.int(len(xs))
	for _, x := range xs {
		f.u64(math.Float64bits(x))
	}
}

// csr writes a sparse matrix, or a marker for none.
func (f *fingerprinter) csr(m *graphs.CSR) {
	f.bool(m != nil)
	if m == nil {
		return
	}
	f.int(m.Rows)
	f.int(m.Cols)
	f.ints(m.Indptr)
	f.ints(m.Indices)
	f.bool(m.Data != nil) // nil: every entry is 1
	f.floats(m.Data)
}

func (f *fingerprinter) split(s graphs.Split) {
	f.ints(s.Train)
	f.ints(s.Val)
	f.ints(s.Test)
}

func (f *fingerprinter) sum() []byte {
	f.flush()
	return f.h.Sum(nil)
}
