package methods

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
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

// Recorder returns the recorder a query path's mechanism records each of
// its releases with: under LedgerQueries, as per, refused unless per is of
// the kind of the cost's Event (the plan Epsilon checks the ledger
// against declares Queries() times Event under that name).
func (c *QueryCost) Recorder(per dp.Event) (*dp.Recorder, error) {
	if c == nil || c.Event == nil {
		return nil, fmt.Errorf("methods: a query path releases %v but its cost declares no release", per)
	}
	plan := dp.Plan{Releases: []dp.Planned{{Name: LedgerQueries, Event: c.Event}}}
	return plan.Recorder(c.ledger, LedgerQueries, per)
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

// repeatEvent is q independent repetitions of e, dp.Composed{q, e}: any
// event an accountant supports, repeated (a plan's ledger adds the
// releases recorded one query at a time up to it).
func repeatEvent(e dp.Event, q int) (dp.Event, error) {
	if e == nil {
		return nil, fmt.Errorf("methods: no query event to repeat")
	}
	r := dp.Composed{Count: q, Event: e}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("methods: repeating the query event: %w", err)
	}
	return r, nil
}
