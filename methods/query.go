package methods

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Queries: a trained model's inference, re-run by an attack (`dpgnn audit
// METHOD --attack`). A query replaces the node features and runs the
// trained model over a graph held by someone else (LinkTeller's feature
// holder querying the graph holder; G-MIA querying a model trained on a
// subgraph on the full graph). A method whose inference runs a private
// mechanism over the graph (a NAP aggregation, PCMP) makes a new release
// with every query: fresh noise from the mechanism source, recorded in the
// run's ledger under LedgerQueries, and QueryCost composes those releases
// with the run's own.

// QueryFunc runs a trained model's inference over a fixed graph with node
// features x (that graph's N rows and the training features' width) and
// returns the N×C posteriors, softmax of the logits, row-major. It does not
// keep x.
type QueryFunc func(x *graphs.Features) ([]float64, error)

// LedgerQueries is the ledger name of the releases queries make.
const LedgerQueries = "attack queries"

// QueryCost is the privacy cost of a trained model's queries over one
// graph. Exactly one of three cases holds:
//   - Event is set: every query is a new release of a private mechanism over
//     the graph, Event is one query's releases (e.g. K Gaussian releases),
//     and the mechanism records each release it makes in the run's ledger
//     under LedgerQueries;
//   - Uncovered is set: a query reads private data without noise (so no
//     finite ε covers it) and Uncovered says what;
//   - neither: a query is post-processing of what the run released (or
//     reads nothing the run protects).
type QueryCost struct {
	// What describes what one query reads and releases.
	What      string
	Event     dp.Event
	Uncovered string

	plan    *dp.Plan
	ledger  *dp.Ledger
	queries int
}

// NewQueryCost returns the cost of queries of a run with privacy plan plan:
// each is a release event ev (nil: none), recorded in ctx's ledger.
func NewQueryCost(ctx *Context, plan *dp.Plan, what string, ev dp.Event) *QueryCost {
	return &QueryCost{What: what, Event: ev, plan: plan, ledger: ctx.Ledger()}
}

// UncoveredQueries returns the cost of queries that read private data
// without noise: why says what is read.
func UncoveredQueries(ctx *Context, plan *dp.Plan, what, why string) *QueryCost {
	return &QueryCost{What: what, Uncovered: why, plan: plan, ledger: ctx.Ledger()}
}

// Charge counts one query. A query path calls it once per query, before
// its mechanisms record their releases.
func (c *QueryCost) Charge() {
	if c != nil {
		c.queries++
	}
}

// Queries is the number of queries charged so far.
func (c *QueryCost) Queries() int {
	if c == nil {
		return 0
	}
	return c.queries
}

// Epsilon returns, at the run's δ, the ε of the run's releases together
// with the queries charged so far (total) and the ε of those queries alone,
// both composed by the run's accountant. The run's plan is extended by one
// release, LedgerQueries, of Queries() times Event, and checked against the
// run's ledger: a query path that released more or otherwise than it
// declared fails here. Uncovered queries give +Inf; queries that release
// nothing give the run's own ε and 0.
func (c *QueryCost) Epsilon() (total, alone float64, err error) {
	if c == nil || c.plan == nil {
		return math.Inf(1), math.Inf(1), nil
	}
	p := *c.plan
	p.Releases = slices.Clone(c.plan.Releases)
	if c.Event != nil && c.queries > 0 {
		p.Epsilon = math.Inf(1) // the queries go beyond the run's target
		ev, err := repeatEvent(c.Event, c.queries)
		if err != nil {
			return 0, 0, err
		}
		p.Releases = append(p.Releases, dp.Planned{Name: LedgerQueries, What: fmt.Sprintf("%d attack queries: %s", c.queries, c.What), Event: ev})
		if p.Accountant == "none" || p.Accountant == "" {
			return 0, 0, fmt.Errorf("methods: queries release %v but the run's plan has no accountant", c.Event)
		}
		if p.SubsampleRate > 0 && p.SubsampleRate < 1 {
			return 0, 0, fmt.Errorf("methods: queries release %v outside the run's node subsample, which its plan amplifies", c.Event)
		}
		if alone, err = dp.EpsilonOf(p.Accountant, []dp.Event{ev}, p.Delta); err != nil {
			return 0, 0, err
		}
	}
	rep, err := p.Report(c.ledger)
	if err != nil {
		return 0, 0, fmt.Errorf("attack queries: %w", err)
	}
	if c.Uncovered != "" {
		return math.Inf(1), math.Inf(1), nil
	}
	total = math.Inf(1)
	if rep.Epsilon != nil {
		total = *rep.Epsilon
	}
	return total, alone, nil
}

// repeatEvent is q independent repetitions of e, as one event of e's kind
// (so that the releases recorded one query at a time add up to it).
func repeatEvent(e dp.Event, q int) (dp.Event, error) {
	switch e := e.(type) {
	case dp.GaussianEvent:
		e.Count *= q
		return e, nil
	case dp.PoissonGaussianEvent:
		e.Steps *= q
		return e, nil
	case dp.PureEvent:
		e.Count *= q
		return e, nil
	case dp.GDPEvent:
		e.Mu *= math.Sqrt(float64(q))
		return e, nil
	}
	return nil, fmt.Errorf("methods: cannot repeat the query event %v", e)
}

// Inference is a method's query machinery over one graph: the query
// function and its privacy cost.
type Inference struct {
	Query QueryFunc
	Cost  *QueryCost
}

// SetInference fills out's query fields from on, which builds the
// inference over a graph: Query and QueryCost over the run's graph g (the
// query function built on its first call, so a run that is never queried
// builds nothing), and QueryOn over any other graph.
func SetInference(out *Outcome, g *graphs.Graph, on func(g *graphs.Graph) (*Inference, error)) error {
	inf, err := on(g)
	if err != nil {
		return err
	}
	out.Query, out.QueryCost = inf.Query, inf.Cost
	out.QueryOn = func(h *graphs.Graph) (QueryFunc, *QueryCost, error) {
		inf, err := on(h)
		if err != nil {
			return nil, nil, err
		}
		return inf.Query, inf.Cost, nil
	}
	return nil
}

// Finish completes the outcome of a run whose private releases all took
// place, the epilogue every method shares: out.Privacy is plan's report
// (Context.Report: the ledger checked against the plan; nil plan: no
// privacy claim, no report) and its queries are those on builds
// (SetInference).
func Finish(ctx *Context, out *Outcome, plan *dp.Plan, on func(*graphs.Graph) (*Inference, error)) error {
	if plan != nil {
		rep, err := ctx.Report(plan)
		if err != nil {
			return err
		}
		out.Privacy = rep
	}
	return SetInference(out, ctx.Graph, on)
}

// FinishModel is Finish for a model with final logits over every node: the
// scores are their softmax, and infer builds the inference with its query
// noise from the source labelled "METHOD.queries".
func FinishModel(ctx *Context, out *Outcome, method string, plan *dp.Plan, logits *G.Node, infer func(qsrc *dp.Source) func(*graphs.Graph) (*Inference, error)) error {
	g := ctx.Graph
	out.Scores = Softmax(nn.Values(logits), g.N, g.NumClasses)
	qsrc, err := ctx.NoiseSource(method + ".queries")
	if err != nil {
		return err
	}
	return Finish(ctx, out, plan, infer(qsrc))
}

// Lazy returns a QueryFunc that builds the real one with build on its first
// call (a failed build is retried on the next).
func Lazy(build func() (QueryFunc, error)) QueryFunc {
	var q QueryFunc
	return func(x *graphs.Features) ([]float64, error) {
		if q == nil {
			var err error
			if q, err = build(); err != nil {
				return nil, err
			}
		}
		return q(x)
	}
}

// NewQuery is the query function of a trained model over an n-node graph
// whose features are f wide, written once for every method: the inference
// is built by build on the first call (a failed build is retried on the
// next); then every call checks the query features (CheckQuery), counts one
// query against cost (Charge, before the inference records any release;
// nil cost: none stated) and runs the inference.
func NewQuery(n, f int, cost *QueryCost, build func() (QueryFunc, error)) QueryFunc {
	return Lazy(func() (QueryFunc, error) {
		q, err := build()
		if err != nil {
			return nil, err
		}
		return func(x *graphs.Features) ([]float64, error) {
			if err := CheckQuery(x, n, f); err != nil {
				return nil, err
			}
			cost.Charge()
			return q(x)
		}, nil
	})
}

// CheckQuery checks that query features x fit n rows of width f and lie
// within the public feature range (graphs.CheckFeatureRange).
func CheckQuery(x *graphs.Features, n, f int) error {
	if x == nil {
		return fmt.Errorf("query: no features")
	}
	if x.N != n || x.F != f {
		return fmt.Errorf("query: features are %d×%d, the model reads %d×%d", x.N, x.F, n, f)
	}
	if (x.Dense == nil) == (x.Sparse == nil) {
		return fmt.Errorf("query: features must be dense or sparse")
	}
	// A query's features are an input like the dataset's: within the
	// public range, or a value that overflows could turn a release into
	// NaN on one side of a neighbouring pair.
	if err := graphs.CheckFeatureRange(x); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

// Softmax returns the row-wise softmax of an n×c matrix of logits.
func Softmax(logits []float64, n, c int) []float64 {
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		row := logits[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for j, v := range row {
			e := math.Exp(v - mx)
			out[i*c+j] = e
			s += e
		}
		for j := range row {
			out[i*c+j] /= s
		}
	}
	return out
}

// Evaluator is an evaluation path of a trained Module over n rows, added to
// the module's model after training: it shares the module's parameters (and
// BatchNorm's running statistics) and runs in evaluation mode, with inputs
// set before every run. Adding it changes nothing the module computed.
type Evaluator struct {
	in     []*layers.Features
	logits *G.Node
	outs   []*G.Node
	m      *nn.Model
	// One machine per kind of output: gorgonia may compute an operation
	// in place over an input that no later operation of the same machine
	// reads, so an intermediate output is only read from a machine that
	// ends there.
	runLogits, runOuts *nn.Runner
}

// NewEvaluator adds an evaluation path over n rows to the module: one input
// per module input, of that input's width (sparse where the training input
// is sparse).
func (mod *Module) NewEvaluator(n int) (*Evaluator, error) {
	e := &Evaluator{m: mod.Model}
	m := mod.Model
	err := nn.Build(func() error {
		for i, x := range mod.features {
			f, err := NewQueryInput(m, x, n, fmt.Sprintf("%s.query%d", mod.names[i], n))
			if err != nil {
				return err
			}
			e.in = append(e.in, f)
		}
		var err error
		e.logits, e.outs, err = mod.build(m, e.in, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Logits sets the inputs (one per module input, n rows each) and returns
// a copy of the path's logits (n×C).
func (e *Evaluator) Logits(x ...*graphs.Features) ([]float64, error) {
	if err := e.set(x); err != nil {
		return nil, err
	}
	if e.runLogits == nil {
		var err error
		if e.runLogits, err = e.m.NewRunner(e.logits); err != nil {
			return nil, err
		}
	}
	if err := e.runLogits.Run(); err != nil {
		return nil, err
	}
	return slices.Clone(nn.Values(e.logits)), nil
}

// Outputs sets the inputs and returns copies of the path's extra outputs
// (the module's Outputs: embeddings).
func (e *Evaluator) Outputs(x ...*graphs.Features) ([][]float64, error) {
	if err := e.set(x); err != nil {
		return nil, err
	}
	if len(e.outs) == 0 {
		return nil, fmt.Errorf("evaluator: the module has no extra outputs")
	}
	if e.runOuts == nil {
		var err error
		if e.runOuts, err = e.m.NewRunner(e.outs...); err != nil {
			return nil, err
		}
	}
	if err := e.runOuts.Run(); err != nil {
		return nil, err
	}
	outs := make([][]float64, len(e.outs))
	for i, o := range e.outs {
		outs[i] = slices.Clone(nn.Values(o))
	}
	return outs, nil
}

func (e *Evaluator) set(x []*graphs.Features) error {
	if len(x) != len(e.in) {
		return fmt.Errorf("evaluator: %d inputs, want %d", len(x), len(e.in))
	}
	for i, f := range e.in {
		if err := SetQueryInput(f, x[i]); err != nil {
			return err
		}
	}
	return nil
}

// NewQueryInput adds to m a model input of n rows shaped like the features
// like (their width; sparse when they are sparse), zero until set with
// SetQueryInput.
func NewQueryInput(m *nn.Model, like *graphs.Features, n int, name string) (*layers.Features, error) {
	if like == nil {
		return nil, fmt.Errorf("query: the model has no feature input")
	}
	if like.Sparse != nil {
		return layers.NewFeatures(m, &graphs.Features{N: n, F: like.F, Sparse: &graphs.CSR{Rows: n, Cols: like.F, Indptr: make([]int, n+1)}}, name)
	}
	return layers.NewFeatures(m, &graphs.Features{N: n, F: like.F, Dense: make([]float64, n*like.F)}, name)
}

// SetQueryInput sets a query input to the features x (same shape; dense
// and sparse convert into the input's kind).
func SetQueryInput(f *layers.Features, x *graphs.Features) error {
	if err := CheckQuery(x, f.N, f.F); err != nil {
		return err
	}
	if f.Sparse != nil {
		s := x.Sparse
		if s == nil {
			s = denseToCSR(x.Dense, x.N, x.F)
		}
		return f.Sparse.Set(s)
	}
	d := x.Dense
	if d == nil {
		d = x.ToDense()
	}
	return nn.SetValue(f.Dense, d)
}

// denseToCSR stores the non-zero entries of a dense n×f matrix as CSR.
func denseToCSR(x []float64, n, f int) *graphs.CSR {
	c := &graphs.CSR{Rows: n, Cols: f, Indptr: make([]int, n+1), Data: []float64{}}
	for i := 0; i < n; i++ {
		for j, v := range x[i*f : (i+1)*f] {
			if v != 0 {
				c.Indices = append(c.Indices, j)
				c.Data = append(c.Data, v)
			}
		}
		c.Indptr[i+1] = len(c.Indices)
	}
	return c
}

// FeatureInference is the inference of a trained module whose only input
// is the node features (an MLP): over a graph h, an evaluation path of h.N
// rows. cost is the queries' cost over h (nil: none stated).
func FeatureInference(mod *Module, classes int, cost func(h *graphs.Graph) *QueryCost) func(h *graphs.Graph) (*Inference, error) {
	return func(h *graphs.Graph) (*Inference, error) {
		c := cost(h)
		q := NewQuery(h.N, mod.features[0].F, c, func() (QueryFunc, error) {
			ev, err := mod.NewEvaluator(h.N)
			if err != nil {
				return nil, err
			}
			return func(x *graphs.Features) ([]float64, error) {
				logits, err := ev.Logits(x)
				if err != nil {
					return nil, err
				}
				return Softmax(logits, h.N, classes), nil
			}, nil
		})
		return &Inference{Query: q, Cost: c}, nil
	}
}
