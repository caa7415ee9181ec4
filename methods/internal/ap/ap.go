// Package ap holds what GAP and ProGAP share: aggregation perturbation's
// hyperparameters (Config, with the module hyperparameters CARIBOU shares
// too, Modules), its privacy set-up (which adjacency NAP reads,
// the degree bound at node level, the sensitivity, δ's units, the DP-SGD
// rate), its privacy plan, the ledger hook of its NAP layers, its audit target
// (one NAP release) and its plan from counts for `dpgnn account`.
package ap

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Config holds the hyperparameters GAP and ProGAP share: the number of
// NAP hops, the modules' (Modules) and the privacy set-up of aggregation
// perturbation — which adjacency NAP reads (out-degree bounded at node
// level), the privacy unit at edge level and the accountant. Its methods
// are that set-up: the sensitivity, the privacy unit count for δ, the
// DP-SGD rate at node level, the calibration and the audit target.
type Config struct {
	Hops int `flag:"hops" help:"K: number of aggregation (NAP) steps"`
	Modules
	// Flags is the node-level degree bound: D on every node's out-degree
	// (the number of aggregates its embedding enters; NAP's sensitivity is
	// √D), public or sampled (Bound).
	degree.Flags
	EdgeUnit   string `flag:"edge-unit" help:"edge level: the privacy unit — directed (one adjacency entry j→i, NAP sensitivity 1: the papers' convention)\nor undirected (an edge {i,j} with both its entries, sensitivity √2; δ auto counts undirected edges)"`
	Accountant string `flag:"accountant" help:"edge level: gdp (exact Gaussian composition), rdp-standard (Theorem 4.1's RDP route), rdp or pld (privacy loss distribution); node level: pld where every release has a PLD, else rdp, unless rdp, rdp-standard or pld is given"`
}

// DefaultConfig is GAP's and ProGAP's setting: the GAP paper's modules
// with the configuration selected on validation accuracy on cora
// 70 / 10 / 20 at edge and node level (docs/results.md, "Defaults of GAP
// and ProGAP") — one hop, width 32, weight decay 1e-3 and dropout by level
// (0.7 between layers and 0.5 on the raw features at edge level, none
// under DP-SGD) — a public out-degree bound of 100, directed edges as the
// unit and exact Gaussian composition.
func DefaultConfig() Config {
	m := DefaultModules()
	m.Hidden, m.WeightDecay, m.Dropout, m.InDropout = 32, 1e-3, AutoDropout, AutoDropout
	return Config{Hops: 1, Modules: m, Flags: degree.DefaultFlags(100),
		EdgeUnit: run.EdgeDirected, Accountant: "gdp"}
}

// Bound is the node-level degree bound the flags set: D on every node's
// out-degree, a public bound or a keyed sample (degree.SampleOut); GAP and
// ProGAP do not offer none (NAP's node-level sensitivity needs a bound).
func (a *Config) Bound() (degree.Bound, error) {
	return a.Flags.Bound(degree.Out, "every node's out-degree", degree.Public, degree.Sample)
}

// boundAdj is what NAP reads of adj at node level under the degree bound:
// adj itself within a public bound (refused above it), or its keyed
// sample with the key drawn from src (called only when sampling, so a
// public bound draws nothing).
func (a *Config) boundAdj(adj *graphs.CSR, src func() (*dp.Source, error)) (*graphs.CSR, degree.Bound, error) {
	b, err := a.Bound()
	if err != nil {
		return nil, b, err
	}
	var key degree.Key
	if b.Mode == degree.Sample {
		s, err := src()
		if err != nil {
			return nil, b, err
		}
		key = degree.NewKey(s)
	}
	adj, err = b.Apply(adj, key)
	return adj, b, err
}

// Plan is the privacy plan of an aggregation-perturbation run whose
// releases are releases(z) (Gaussian events in multiples of the
// sensitivity): one run.Calibrate of the one noise multiplier z, at
// edge level (and without privacy) with --accountant, at node level with
// RDP, plus the report lines every aggregation-perturbation plan adds. It
// searches nothing itself. The noise record holds the NAP std z·sensitivity and
// K; at node level nodeNoise adds the DP-SGD entries. The report lists the
// degree bound, the model selection of the `modules` trained modules and,
// at node level, the training-node count the DP-SGD rate is read from
// (treated as public, run.TrainCountUse). At
// edge level the report names the privacy unit and, for directed units,
// also states the ε of an undirected edge (two directed entries,
// sensitivity √2, so the same events at multiplier z/√2) — what a reader of
// an undirected graph would otherwise under-estimate.
func (a *Config) Plan(ctx *methods.Context, setup *APSetup, releases func(z float64) []dp.Planned, nodeNoise func(z float64, rec map[string]float64), modules int) (*run.Calibrated, error) {
	c, err := a.calibrate(ctx, setup, releases, nodeNoise)
	if err != nil {
		return nil, err
	}
	run.NoteSelection(ctx, c.Plan, modules)
	if setup.Bound != nil && ctx.Private() {
		c.Plan.Uses = append(c.Plan.Uses, *setup.Bound)
		if setup.Note != "" {
			c.Plan.Notes = append(c.Plan.Notes, setup.Note)
		}
	}
	if ctx.Level == methods.Node && ctx.Private() {
		// The modules' DP-SGD reads the training-node count.
		c.Plan.Uses = append(c.Plan.Uses, run.TrainCountUse(setup.TrainNodes, setup.Rate))
	}
	return c, nil
}

func (a *Config) calibrate(ctx *methods.Context, setup *APSetup, releases func(z float64) []dp.Planned, nodeNoise func(z float64, rec map[string]float64)) (*run.Calibrated, error) {
	acct := NodeAccountant(a.Accountant)
	if ctx.Level != methods.Node {
		var err error
		if acct, err = EdgeAccountant(a.Accountant); err != nil {
			return nil, err
		}
	}
	c, err := run.Calibrate(ctx, setup.Units, acct, releases, func(z float64) map[string]float64 {
		rec := map[string]float64{"nap_std": z * setup.Sensitivity, "hops": float64(a.Hops)}
		if ctx.Level == methods.Node && nodeNoise != nil {
			nodeNoise(z, rec)
		}
		return rec
	})
	if err != nil || ctx.Level != methods.Edge || !ctx.Private() {
		return c, err
	}
	if a.EdgeUnit == run.EdgeUndirected {
		c.Plan.Notes = append(c.Plan.Notes, fmt.Sprintf("privacy unit: one undirected edge {i,j} with both its adjacency entries (NAP sensitivity √2, std %.6g)", c.Multiplier*setup.Sensitivity))
		return c, nil
	}
	epsU, err := dp.EpsilonOf(acct, run.Events(releases(c.Multiplier/math.Sqrt2)), c.Plan.Delta)
	if err != nil {
		return nil, err
	}
	c.Plan.Notes = append(c.Plan.Notes, fmt.Sprintf("privacy unit: one directed edge j→i (NAP sensitivity 1). An undirected edge {i,j} is two such entries: "+
		"for it ε = %.6g at the same δ (sensitivity √2); --edge-unit undirected calibrates for it", epsU))
	return c, nil
}

// Validate checks aggregation perturbation's hyperparameters.
func (a *Config) Validate() error {
	return methods.CheckAll(methods.CheckFields(a, methods.Depth(&a.Hops), methods.Positive(&a.MaxDegree),
		methods.OneOf(&a.EdgeUnit, run.EdgeDirected, run.EdgeUndirected), methods.OneOf(&a.Accountant, dp.AccountantNames()...), a.degreeModeCheck()),
		a.Modules.Validate())
}

// degreeModeCheck refuses a --degree-bound GAP and ProGAP do not offer.
func (a *Config) degreeModeCheck() methods.FieldCheck {
	_, err := a.Flags.Mode(degree.Public, degree.Sample)
	return methods.Require(&a.DegreeBound, err == nil, "%v", err)
}

// APSetup is the privacy set-up of one aggregation-perturbation run.
type APSetup struct {
	// Adj is what NAP aggregates over: the raw adjacency, or at node level
	// with --degree-bound sample its keyed out-degree sample.
	Adj *graphs.CSR
	// Sensitivity of one NAP call: 1 at edge level with directed units,
	// √2 with undirected ones (removing {i,j} changes rows i and j by a unit
	// vector each), √D at node level (D the public out-degree bound).
	Sensitivity float64
	// Units are the privacy units for δ.
	Units run.DeltaUnits
	// Rate is the DP-SGD Poisson rate at node level, B/TrainNodes capped
	// at 1, and TrainNodes the training-node count it is read from (a
	// private count at node level, listed in the report as treated as
	// public: run.TrainCountUse).
	Rate       float64
	TrainNodes int
	// Bound describes the degree bound for the report (node level), and
	// Note is the report's note on what the guarantee assumes.
	Bound *dp.Use
	Note  string
}

// SetupAP prepares the adjacency, the sensitivity and the privacy units for
// a level. At node level the out-degree bound D (--max-degree) is applied
// as --degree-bound says (graphs/degree, Kind Out):
//   - public: the raw graph must have out-degrees ≤ D, else the run is
//     refused before anything is released; NAP aggregates over the raw
//     graph. Removing node v deletes its ≤ D out-entries and changes no
//     other entry, so the other rows change by at most √D: the guarantee
//     holds for every input within the public bound.
//   - sample: every node keeps D out-edges chosen by keyed ranks, the key
//     drawn from the mechanism source (so --secure-noise covers it). √D
//     holds when the input is already within D (sampling is then the
//     identity); above it, removing v also changes the samples of the nodes
//     that kept an edge to v, which nothing bounds — the papers' assumption,
//     and the report says so.
func (a *Config) SetupAP(ctx *methods.Context) (*APSetup, error) {
	g := ctx.Graph
	n := len(g.Split.Train)
	if err := a.checkUnit(ctx.Level); err != nil {
		return nil, err
	}
	if ctx.Level == methods.Node && n == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	s, err := a.SetupCounts(ctx.Level, run.Counts{TrainNodes: n})
	if err != nil {
		return nil, err
	}
	s.Adj = g.Adj
	if ctx.Level != methods.Node {
		undirected := a.EdgeUnit == run.EdgeUndirected
		paper := run.PaperDigits(g.Adj.NNZ(), "directed edges")
		if undirected {
			paper = run.PaperDigits(g.Adj.UndirectedEdges(), "undirected edges")
		}
		s.Units = run.EdgeUnits(g.N, undirected, paper)
		return s, nil
	}
	s.Units.Paper = run.PaperDigits(n, "training nodes")
	adj, b, err := a.boundAdj(g.Adj, func() (*dp.Source, error) { return ctx.NoiseSource("degree-bound") })
	if err != nil {
		var be *degree.BoundError
		if errors.As(err, &be) {
			return nil, b.Refusal(ctx.Dataset, err)
		}
		return nil, err
	}
	s.Adj = adj
	u := b.Use()
	s.Bound = &u
	// The report does not say whether this input is above D: that count is
	// private, and the report is meant to be published.
	s.Note = b.Note(fmt.Sprintf("NAP's sensitivity √%d", b.D))
	return s, nil
}

// NodeAccountant is the accountant used at node level for the --accountant
// value name: rdp, rdp-standard or pld when asked, else dp.Auto (gdp, the
// edge-level default, cannot compose the modules' Poisson-subsampled
// DP-SGD): pld where every release of the plan has a PLD (NAP's Gaussian,
// the modules' sampled Gaussian, CARIBOU's μ-GDP PCMP, a pure selection),
// else rdp — the tighter of two valid upper bounds, as for every other
// DP-SGD plan (issue 39). The report names the accountant used.
func NodeAccountant(name string) string {
	if name == "rdp-standard" || name == "pld" || name == "rdp" {
		return name
	}
	return dp.Auto
}

// EdgeAccountant is the accountant used at edge level for the --accountant
// value name: one of dp's accountants.
func EdgeAccountant(name string) (string, error) {
	for _, n := range dp.AccountantNames() {
		if n == name {
			return n, nil
		}
	}
	return "", fmt.Errorf("--accountant %q: want one of %s", name, strings.Join(dp.AccountantNames(), ", "))
}

// RecordNAP makes nap record every release it makes (every noise draw)
// through rec, the recorder of the plan's release (Context.Mechanism, or
// QueryCost.Recorder for a query path) at one GaussianEvent{z, 1} per
// draw, which it refuses otherwise. A draw at the planned std
// z·sensitivity is recorded as that event; a draw at another std (the
// layer's Noise.Std changed after construction) as the multiplier actually
// used, std/sensitivity, so the change shows up when the ledger is checked
// against the plan instead of being recorded as the planned noise.
func RecordNAP(nap *layers.NAP, rec *dp.Recorder, z, sensitivity float64) error {
	if per := (dp.GaussianEvent{Multiplier: z, Count: 1}); rec == nil || !dp.SameKind(rec.Event(), per) {
		return fmt.Errorf("NAP %s draws %v per release but its recorder records %v", nap.Name, per, rec.Event())
	}
	nap.Noise.Rec = napRelease{rec: rec, noise: nap.Noise, std: z * sensitivity, sensitivity: sensitivity}
	return nil
}

// RecordPlannedNAP makes nap record its releases under the release name
// that plan declares (RecordNAP with ctx.Mechanism's recorder), and
// refuses a plan that declares another number of them than runs, the
// releases the caller's task makes with nap (its hops); without privacy
// nap's std is 0, it releases nothing and nothing is recorded.
func RecordPlannedNAP(ctx *methods.Context, plan *dp.Plan, nap *layers.NAP, name string, runs int, z, sensitivity float64) error {
	if !ctx.Private() {
		return nil
	}
	rec, err := ctx.Mechanism(plan, name, dp.GaussianEvent{Multiplier: z, Count: 1})
	if err != nil {
		return err
	}
	return recordRuns(nap, rec, runs, z, sensitivity)
}

// RecordQueryNAP makes a query path's nap record its releases as the
// queries cost declares them (RecordNAP with cost.Recorder), refusing a
// cost that declares another number per query than runs; a nil cost (no
// privacy claim) records nothing.
func RecordQueryNAP(cost *methods.QueryCost, nap *layers.NAP, runs int, z, sensitivity float64) error {
	if cost == nil {
		return nil
	}
	rec, err := cost.Recorder(dp.GaussianEvent{Multiplier: z, Count: 1})
	if err != nil {
		return err
	}
	return recordRuns(nap, rec, runs, z, sensitivity)
}

// recordRuns is RecordNAP after checking that rec's plan declares runs
// releases.
func recordRuns(nap *layers.NAP, rec *dp.Recorder, runs int, z, sensitivity float64) error {
	if rec.Planned() != float64(runs) {
		return fmt.Errorf("NAP %s: the plan declares %v releases of %q, the task makes %d", nap.Name, rec.Planned(), rec.Name(), runs)
	}
	return RecordNAP(nap, rec, z, sensitivity)
}

// napRelease records one NAP release: the recorder's event at the planned
// std, else a GaussianEvent at the std drawn with (RecordNAP).
type napRelease struct {
	rec              *dp.Recorder
	noise            *nn.Noise
	std, sensitivity float64
}

func (r napRelease) Record() {
	if r.noise.Std == r.std {
		r.rec.Record()
		return
	}
	r.rec.RecordEvent(dp.GaussianEvent{Multiplier: r.noise.Std / r.sensitivity, Count: 1})
}

// NAPAudit is the audit target of aggregation perturbation: one NAP call
// (normalise, sum over in-neighbours, Gaussian noise) over the embedding,
// with the noise std the method's calibration gives for the graph. The
// degree bound is part of the release: on each graph the public bound is
// checked, and with --degree-bound sample every release draws its own key
// from the mechanism source. calibrate is the method's calibration.
//
// Which values the claim covers. At edge level every row (removing j→i
// changes row i by a unit vector; an undirected edge rows i and j): all
// are compared. At node level every row but the removed node v's own
// (OwnRow = NAPOwnRow). Proof, for a raw G within the public bound D and
// G′ = G − v: fix everything released before a hop (adaptive
// composition). The hop's rows u ≠ v on G and on G′ have the same mean,
// except the rows of v's ≤ D out-neighbours, which on G also add
// Z_v/‖Z_v‖ (norm ≤ 1, whatever Z_v is; zero rows stay zero): given the
// other rows, the hop on G is a mixture over Z_v of Gaussians each within
// √D of G′'s, and joint convexity of the divergences gives the Gaussian
// bound of sensitivity √D. Row v itself differs by the sum of v's
// in-neighbours' normalised rows, which no out-degree bound limits: it is
// not covered. It need not be, because GAP and ProGAP read a hop's row v
// only (i) row-wise into v's own DP-SGD example (the classifier's, or the
// next stage's: MLPs, jumping knowledge and group or no norm are row-wise,
// batch norm is refused at node level, and the framework refuses a
// training-path product that crosses examples), which G′ does not have —
// DP-SGD's guarantee holds whatever that example holds; (ii) in v's own
// validation count of a private selection, whose sensitivity 1 counts it;
// (iii) normalised, in the next hop's rows of v's out-neighbours — the
// mixture above; (iv) in v's own prediction, which the node-level claim
// leaves out (docs/privacy.md). Queries re-run NAP with fresh noise and
// are charged separately. So everything released but v's own row and
// prediction is covered, and the audit compares every row but v's,
// saying why in its record.
func (a *Config) NAPAudit(ctx *methods.Context, opts run.AuditOptions, calibrate func(*methods.Context, *APSetup) (*run.Calibrated, error)) (*run.AuditTarget, error) {
	if !ctx.Private() {
		return nil, fmt.Errorf("audit needs a private level (--privacy edge or node) and a finite --epsilon")
	}
	setup, err := a.SetupAP(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Multiplier > 0 {
		c := *ctx
		c.Multiplier = opts.Multiplier
		ctx = &c
	}
	cal, err := calibrate(ctx, setup)
	if err != nil {
		return nil, err
	}
	claimed, err := run.ClaimedEpsilon(dp.GaussianEvent{Multiplier: cal.Multiplier, Count: 1}, cal.Plan.Delta)
	if err != nil {
		return nil, err
	}
	width := opts.Width
	if width <= 0 {
		width = a.Hidden
	}
	if opts.Embedding == "features" {
		width = ctx.Graph.X.F
	}
	t := &run.AuditTarget{Claimed: claimed, Delta: cal.Plan.Delta, Width: width, EdgeUnit: a.EdgeUnit, Gaussian: true,
		What: fmt.Sprintf("one NAP release (%s level, %s embedding of width %d): noise std %.4g, sensitivity %.4g", ctx.Level, opts.Embedding, width,
			cal.Multiplier*setup.Sensitivity, setup.Sensitivity)}
	if ctx.Level == methods.Node {
		t.OwnRow = NAPOwnRow
	}
	t.Prepare = func(g *graphs.Graph) (run.Release1, error) {
		gc := *ctx
		gc.Graph = g
		s, err := a.SetupAP(&gc)
		if err != nil {
			return nil, err
		}
		c, err := calibrate(&gc, s)
		if err != nil {
			return nil, err
		}
		x, err := AuditEmbedding(g, opts.Embedding, width)
		if err != nil {
			return nil, err
		}
		std := c.Multiplier * s.Sensitivity
		return func(src *dp.Source) ([]float64, error) {
			adj := s.Adj
			if m, _ := a.Flags.Mode(); ctx.Level == methods.Node && m == degree.Sample {
				// Every sampled release draws its own key.
				if adj, _, err = a.boundAdj(g.Adj, func() (*dp.Source, error) { return src, nil }); err != nil {
					return nil, err
				}
			}
			return napOnce(adj, x, g.N, width, std, src)
		}, nil
	}
	return t, nil
}

// NAPOwnRow is why a node-level NAP claim does not cover the removed
// node's own row (the proof is NAPAudit's).
const NAPOwnRow = "NAP's row at v sums v's in-neighbours (no degree bound limits it) and is read only by v's own DP-SGD example and validation count " +
	"(gone with v; DP-SGD and the selection's sensitivity 1 cover them whatever the row is), by v's own prediction (outside the node-level claim), " +
	"and, normalised, by the next hop's rows of v's ≤ D out-neighbours, which √D already counts as changed"

// AuditEmbedding is the NAP input of an audit.
func AuditEmbedding(g *graphs.Graph, kind string, width int) ([]float64, error) {
	switch kind {
	case "", "aligned":
		x := make([]float64, g.N*width)
		for i := 0; i < g.N; i++ {
			x[i*width] = 1
		}
		return x, nil
	case "features":
		return g.X.ToDense(), nil
	}
	return nil, fmt.Errorf("--embedding %q: want aligned or features", kind)
}

// napOnce runs one NAP call over adj.
func napOnce(adj *graphs.CSR, x []float64, n, width int, std float64, src *dp.Source) ([]float64, error) {
	return RunNAP(layers.NewNAP("audit.nap", adj, std, src), x, n, width)
}

// RunNAP performs one release of a NAP layer on the n×width embedding x
// and returns the noisy aggregate (a copy).
func RunNAP(nap *layers.NAP, x []float64, n, width int) ([]float64, error) {
	mm := nn.NewModel(0)
	var out *G.Node
	if err := nn.Build(func() error {
		out = nap.Forward(mm.Input("X", x, n, width))
		return nil
	}); err != nil {
		return nil, err
	}
	r, err := mm.NewRunner(out)
	if err != nil {
		return nil, err
	}
	if err := r.Run(); err != nil {
		return nil, err
	}
	return append([]float64(nil), nn.Values(out)...), nil
}

// AccountCounts: aggregation perturbation needs the training-node count at
// node level (the DP-SGD rate), nothing at edge level.
func (a *Config) AccountCounts(level methods.Level) []string {
	if level == methods.Node {
		return []string{run.CountTrainNodes}
	}
	return nil
}

// checkUnit refuses an edge unit at node level.
func (a *Config) checkUnit(level methods.Level) error {
	if level == methods.Node && a.EdgeUnit == run.EdgeUndirected {
		return fmt.Errorf("--edge-unit is for edge level: node level already protects a node with all its edges")
	}
	return nil
}

// SetupCounts is the part of SetupAP that needs counts only: the
// sensitivity of a NAP call (1, √2 for undirected edges, √D at node level)
// and the DP-SGD rate. Alone (`dpgnn account`), δ must be given.
func (a *Config) SetupCounts(level methods.Level, c run.Counts) (*APSetup, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := a.checkUnit(level); err != nil {
		return nil, err
	}
	s := &APSetup{Sensitivity: 1, Units: run.DeltaUnits{Unit: "directed edge"}}
	if a.EdgeUnit == run.EdgeUndirected {
		s.Sensitivity, s.Units.Unit = math.Sqrt2, "undirected edge"
	}
	if level == methods.Node {
		if err := run.CheckCounts(c, []string{run.CountTrainNodes}); err != nil {
			return nil, err
		}
		s.Sensitivity = math.Sqrt(float64(a.MaxDegree))
		s.Units.Unit = "node"
		s.Rate, s.TrainNodes = run.NodeRate(a.BatchSize, c.TrainNodes), c.TrainNodes
	}
	return s, nil
}

// QueryAdj is the adjacency NAP aggregates over in a query on graph h (a
// release on h): h's own at edge level and without privacy; at node level
// h's own within the public out-degree bound (an input above it is
// refused, as in a run), or with --degree-bound sample its keyed sample,
// the key drawn from src.
func (a *Config) QueryAdj(level methods.Level, h *graphs.Graph, src *dp.Source) (*graphs.CSR, error) {
	if level != methods.Node {
		return h.Adj, nil
	}
	adj, b, err := a.boundAdj(h.Adj, func() (*dp.Source, error) { return src, nil })
	if err != nil {
		return nil, fmt.Errorf("query: node level, --max-degree %d (--degree-bound %s): %w", b.D, b.Mode, err)
	}
	return adj, nil
}

// NAPQueryCost is the cost of queries that run the K NAP calls of an
// aggregation-perturbation model over the query graph with fresh noise:
// K Gaussian releases at multiplier z each (nil without privacy).
//
// At node level the queries are recorded but not covered: a query returns
// every node's posterior, the removed node v's own included, and v's
// posterior reads v's own NAP row, the sum of its in-neighbours' rows — a
// change of up to D (unbounded under an out-degree bound), where the
// aggregation is calibrated for the √D of v's entries in the other rows.
// The training release is covered because v's own row only enters v's own
// example, which DP-SGD covers; a query shows it to the querier.
func (a *Config) NAPQueryCost(ctx *methods.Context, cal *run.Calibrated, sensitivity float64) *methods.QueryCost {
	if !ctx.Private() {
		return nil
	}
	c := methods.NewQueryCost(ctx, cal.Plan, fmt.Sprintf("%d NAP aggregation(s) over the query graph with fresh noise (std %.4g, sensitivity %.4g)",
		a.Hops, cal.Multiplier*sensitivity, sensitivity), dp.GaussianEvent{Multiplier: cal.Multiplier, Count: a.Hops})
	if ctx.Level == methods.Node {
		c.Uncovered = "each query shows every node's posterior, the removed node's own included, and that posterior reads its own aggregation row " +
			"(a change up to its in-degree, not the √D the noise is calibrated for)"
	}
	return c
}
