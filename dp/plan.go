package dp

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// A Plan is what a private run declares before it reads private data: the
// level and privacy unit, δ and where it came from, the accountant, the
// calibrated noise multiplier and the releases it will make, as events. A
// Ledger records the releases as they happen (the mechanisms write to it
// when they draw their noise); Plan.Check compares the two, and
// Plan.Report builds the privacy report from both, so a run that releases
// more, or differently, than it declared fails instead of under-reporting.
type Plan struct {
	Level string // "edge", "node" or "none"
	Unit  string // the privacy unit ("directed edge", "undirected edge", "node")
	// Relation is the neighbouring relation the guarantee is stated for
	// (printed in the report). Zero: derived from Level and Unit as
	// add/remove (NewRelation), the project's relation.
	Relation    Relation
	Epsilon     float64 // the target ε (+Inf: no privacy)
	Delta       float64
	DeltaSource string
	// Accountant names the accountant that composes the releases (see
	// NewAccountant); "none" when nothing is released.
	Accountant string
	Multiplier float64 // the calibrated noise multiplier (0 without privacy)
	Releases   []Planned
	// SubsampleRate, when in (0, 1), says the whole run sees a Poisson
	// subsample of the units at that rate (every unit kept independently,
	// the draw from the mechanism source) and runs its releases on it: the
	// report composes them at δ/q and amplifies the result to
	// ε = ln(1 + q·(e^ε_in − 1)), δ (AmplifiedEpsilon, add/remove
	// neighbours). 0 or 1: no subsampling.
	SubsampleRate float64
	// Uses are the run's uses of private data that are not releases (the
	// degree bound, model selection on public labels, evaluation).
	Uses  []Use
	Noise map[string]float64
	Notes []string
}

// Planned is one kind of release a run makes: Name keys the ledger, Event is
// all of it (K Gaussian releases are one GaussianEvent with Count K, a DP-SGD
// run one PoissonGaussianEvent with its Steps). A mechanism the accountant
// cannot compose (objective perturbation, with its own theorem) has a nil
// Event and its ε in Epsilon; a plan holds at most one such release and
// nothing else.
type Planned struct {
	Name    string
	What    string
	Event   Event
	Epsilon float64
	// Kind is the report's use kind (release, dp-sgd, selection); empty:
	// derived from the event.
	Kind string
}

// Use is one use of private data by a run, as the report lists it.
type Use struct {
	// Kind is release (a mechanism's output), dp-sgd, selection (model
	// selection on labels), degree-bound (how the graph's degrees were
	// bounded), count (a count of private data that sets a parameter: a
	// rate, a number of steps, a population), delta (δ from a count),
	// split (how the training, validation and test parts were drawn),
	// noise (where the mechanisms' randomness came from), evaluation
	// (metrics for the experimenter) or provenance.
	Kind string `json:"kind"`
	What string `json:"what"`
	// Epsilon is the ε of this use alone at the report's δ, under the
	// report's accountant (absent when the use releases nothing).
	Epsilon *float64 `json:"epsilon,omitempty"`
	// Covered says how the guarantee covers it: "accounted",
	// "public data", "not released", "treated as public (why)" (see
	// TreatedAsPublic), or what it assumes.
	Covered string `json:"covered"`
}

// TreatedAsPublic is the Covered text of a use that reads a quantity of the
// private data — a count, a degree, a split — and uses it as if it were
// public, outside any mechanism: "treated as public (why)". The guarantee
// is then proven as if the quantity had been fixed before the data was
// seen, i.e. for neighbours that share it, not for a neighbour whose
// quantity differs; the report lists it so that a reader sees the
// assumption.
func TreatedAsPublic(why string) string { return "treated as public (" + why + ")" }

// Report is the privacy receipt of a run: which accountant, the ε it
// computed at δ from the releases the run made and where δ came from, the
// noise levels (noise multipliers, i.e. std divided by sensitivity, unless
// the key says otherwise), the ledger of events, and every use of private
// data with how it is covered. Epsilon is null for ε = ∞ in JSON.
type Report struct {
	Level string `json:"level"`
	// Relation is the neighbouring relation of the guarantee (nil without
	// privacy).
	Relation   *Relation `json:"relation,omitempty"`
	Accountant string    `json:"accountant"`
	// Discretization describes the PLD accountant's approximation (nil
	// for the others, which are closed-form or convert an RDP curve).
	Discretization *Discretization    `json:"discretization,omitempty"`
	Epsilon        *float64           `json:"epsilon"`
	Delta          float64            `json:"delta"`
	DeltaSource    string             `json:"delta_source,omitempty"`
	Noise          map[string]float64 `json:"noise,omitempty"`
	Ledger         []string           `json:"ledger,omitempty"`
	Uses           []Use              `json:"uses,omitempty"`
	Notes          string             `json:"notes,omitempty"`
}

// Discretization is how the PLD accountant approximated the privacy loss
// distributions whose ε a report states: GridInterval is the loss grid's
// step (nats; a composition that does not fit 2²¹ points doubles it),
// Pessimistic that every event's PLD is rounded so that its privacy
// profile only rises (connect-the-dots), and TruncationToDelta that the
// mass outside the FFT window and the FFT's rounding are added to δ (never
// dropped). See PLD.
type Discretization struct {
	GridInterval      float64 `json:"grid_interval"`
	Pessimistic       bool    `json:"pessimistic"`
	TruncationToDelta bool    `json:"truncation_to_delta"`
}

// String is the report's text form.
func (d Discretization) String() string {
	return fmt.Sprintf("loss grid %g nats, pessimistic, truncation mass added to δ", d.GridInterval)
}

// EpsilonJSON converts ε to its JSON form (nil for +Inf or NaN).
func EpsilonJSON(e float64) *float64 {
	if math.IsInf(e, 0) || math.IsNaN(e) {
		return nil
	}
	return &e
}

// Entry is one recorded release.
type Entry struct {
	Name  string
	Event Event // nil for a release outside the accountant
}

// Ledger records the releases a run makes. It is safe for concurrent use;
// a nil *Ledger records nothing.
type Ledger struct {
	mu      sync.Mutex
	entries []Entry
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{} }

// Record appends a release (e nil for one outside the accountant).
func (l *Ledger) Record(name string, e Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, Entry{name, e})
}

// Entries returns a copy of the recorded releases, in order.
func (l *Ledger) Entries() []Entry {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}

// AsPlanned is a ledger holding exactly the plan's releases: what a run that
// keeps to its plan records (calculators report on it).
func (p *Plan) AsPlanned() *Ledger {
	l := NewLedger()
	for _, r := range p.Releases {
		l.Record(r.Name, r.Event)
	}
	return l
}

// amount reduces an event to a kind (its parameters) and an amount of that
// kind, so that releases recorded one at a time can be added up and compared
// with the plan: Gaussian releases count, DP-SGD steps count, pure-DP runs
// count, μ-GDP releases add μ², RDP curves of one name add their counts,
// Composed{n, E} is n times E's amount (so a shorthand and its expansion —
// GaussianEvent{z, n} and Composed{n, GaussianEvent{z, 1}},
// PoissonGaussianEvent{q, z, T} and Composed{T, Poisson{q,
// GaussianEvent{z, 1}}} — are the same kind); any other event is its own
// kind (its String), once.
func amount(e Event) (string, float64) {
	switch e := e.(type) {
	case nil:
		return "outside the accountant", 1
	case GaussianEvent:
		return fmt.Sprintf("Gaussian(multiplier=%v)", e.Multiplier), float64(e.Count)
	case PoissonGaussianEvent:
		return fmt.Sprintf("PoissonGaussian(rate=%v, multiplier=%v)", e.Rate, e.Multiplier), float64(e.Steps)
	case Poisson:
		if z, ok := unitGaussian(e.Event); ok {
			return fmt.Sprintf("PoissonGaussian(rate=%v, multiplier=%v)", e.Rate, z), 1
		}
	case PureEvent:
		return fmt.Sprintf("Pure(epsilon=%v)", e.Epsilon), float64(e.Count)
	case GDPEvent:
		return "GDP(mu²)", e.Mu * e.Mu
	case RDPEvent:
		return "RDP(" + e.Name + ")", float64(e.count())
	case Composed:
		k, a := amount(e.Event)
		return k, float64(e.Count) * a
	}
	return e.String(), 1
}

// Check reports whether the ledger holds exactly the planned releases: for
// every planned name, the recorded events add up to the planned event
// (same kind and parameters, the same count); nothing is recorded under a
// name the plan does not have.
func (p *Plan) Check(l *Ledger) error {
	planned := map[string]map[string]float64{}
	for _, r := range p.Releases {
		if planned[r.Name] == nil {
			planned[r.Name] = map[string]float64{}
		}
		k, a := amount(r.Event)
		planned[r.Name][k] += a
	}
	recorded := map[string]map[string]float64{}
	for _, e := range l.Entries() {
		if _, ok := planned[e.Name]; !ok {
			return fmt.Errorf("dp: the run released %q (%v), which its privacy plan does not declare", e.Name, e.Event)
		}
		if recorded[e.Name] == nil {
			recorded[e.Name] = map[string]float64{}
		}
		k, a := amount(e.Event)
		recorded[e.Name][k] += a
	}
	names := make([]string, 0, len(planned))
	for n := range planned {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for k, want := range planned[n] {
			got := recorded[n][k]
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				return fmt.Errorf("dp: the run released %q as %s %v time(s), its privacy plan declares %v", n, k, got, want)
			}
		}
		for k, got := range recorded[n] {
			if _, ok := planned[n][k]; !ok {
				return fmt.Errorf("dp: the run released %q as %s (%v), its privacy plan declares %s", n, k, got, strings.Join(keys(planned[n]), ", "))
			}
		}
	}
	return nil
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Report checks the ledger against the plan and builds the privacy report:
// the ε at δ of what was released (composed by a fresh accountant from the
// plan's events, which Check has shown the ledger matches), which must not
// exceed the target; the ledger; one use per release with its ε alone; and
// the plan's other uses and notes.
func (p *Plan) Report(l *Ledger) (*Report, error) {
	if err := p.Check(l); err != nil {
		return nil, err
	}
	rep := &Report{Level: p.Level, Accountant: p.Accountant, Delta: p.Delta, DeltaSource: p.DeltaSource,
		Noise: p.Noise, Notes: strings.Join(p.Notes, ". ")}
	if strings.EqualFold(p.Accountant, "pld") {
		rep.Discretization = &Discretization{GridInterval: DefaultPLDDiscretization, Pessimistic: true, TruncationToDelta: true}
	}
	rel, err := p.Neighbours()
	if err != nil {
		return nil, err
	}
	if rel.Unit != "" {
		rep.Relation = &rel
	}
	eps := 0.0
	switch {
	case len(p.Releases) == 0:
		if math.IsInf(p.Epsilon, 1) {
			eps = math.Inf(1)
		}
	case p.Releases[0].Event == nil:
		if len(p.Releases) != 1 {
			return nil, fmt.Errorf("dp: a plan with a release outside the accountant must have no other release")
		}
		r := p.Releases[0]
		eps = r.Epsilon
		rep.Ledger = []string{r.What}
		rep.Uses = append(rep.Uses, Use{Kind: "release", What: r.What, Epsilon: EpsilonJSON(eps), Covered: "accounted"})
	default:
		acct, err := NewAccountant(p.Accountant)
		if err != nil {
			return nil, err
		}
		q, inner := p.subsample()
		for _, r := range p.Releases {
			if r.Event == nil {
				return nil, fmt.Errorf("dp: release %q has no event", r.Name)
			}
			if err := acct.Compose(r.Event); err != nil {
				return nil, err
			}
			e1, err := EpsilonOf(p.Accountant, []Event{r.Event}, inner)
			if err != nil {
				return nil, err
			}
			kind := r.Kind
			if kind == "" {
				kind = releaseKind(r.Event)
			}
			rep.Uses = append(rep.Uses, Use{Kind: kind, What: r.What, Epsilon: EpsilonJSON(amplifyIf(e1, q)), Covered: "accounted"})
		}
		if eps, err = acct.Epsilon(inner); err != nil {
			return nil, err
		}
		if q < 1 {
			rep.Notes = joinNotes(rep.Notes, fmt.Sprintf("the releases run on a Poisson subsample (rate %g) of the units: composed they give ε = %.6g at δ/q = %.4g, amplified to ε = ln(1 + q(e^ε − 1)) = %.6g at δ = %.4g",
				q, eps, inner, amplifyIf(eps, q), p.Delta))
			eps = amplifyIf(eps, q)
		}
		for _, e := range acct.Ledger() {
			rep.Ledger = append(rep.Ledger, e.String())
		}
	}
	if math.IsNaN(eps) || eps > p.Epsilon {
		return nil, fmt.Errorf("dp: the releases give ε=%g above the plan's target %g", eps, p.Epsilon)
	}
	rep.Epsilon = EpsilonJSON(eps)
	rep.Uses = append(rep.Uses, p.Uses...)
	return rep, nil
}

// Neighbouring units and changes of a Relation.
const (
	UnitEdge = "edge"
	UnitNode = "node"
	// ChangeAddRemove: the neighbour lacks the unit's data.
	ChangeAddRemove = "add-remove"
	// ChangeZeroOut: the unit's data is replaced by a null record at its
	// index (no edges, zero features, no label, no split membership).
	ChangeZeroOut = "zero-out"
)

// Relation is the neighbouring relation a guarantee holds for, on the raw
// inputs (before any preprocessing): which unit differs (an edge or a
// node), how (added or removed, or zeroed out), and for edges whether the
// unit is one directed entry or an undirected edge (both entries). Node ids
// are public in dpgnn: a removed node keeps its id, isolated, with no
// features, label or split membership (graphs.RemoveNode; what dpgnn audit
// compares), so add/remove and zero-out give the same neighbours at node
// level; zero-out is there for mechanisms stated that way.
type Relation struct {
	Unit     string `json:"unit"`               // UnitEdge or UnitNode
	Change   string `json:"change"`             // ChangeAddRemove or ChangeZeroOut
	Directed bool   `json:"directed,omitempty"` // edges: one directed entry (else an undirected edge)
}

// NewRelation returns the add/remove relation of a plan's level ("edge",
// "node"; "none" or "": the zero Relation) and unit ("directed edge",
// "undirected edge", "node"; "" for an edge level that reads no edge,
// stated as the undirected edge). It fails on an unknown or inconsistent
// pair.
func NewRelation(level, unit string) (Relation, error) {
	switch level {
	case "", "none":
		return Relation{}, nil
	case UnitNode:
		if unit == "" || unit == "node" {
			return Relation{Unit: UnitNode, Change: ChangeAddRemove}, nil
		}
	case UnitEdge:
		switch unit {
		case "directed edge":
			return Relation{Unit: UnitEdge, Change: ChangeAddRemove, Directed: true}, nil
		case "", "undirected edge":
			return Relation{Unit: UnitEdge, Change: ChangeAddRemove}, nil
		}
	}
	return Relation{}, fmt.Errorf("dp: no neighbouring relation for level %q and unit %q", level, unit)
}

// Validate checks the relation's fields.
func (r Relation) Validate() error {
	switch {
	case r.Unit != UnitEdge && r.Unit != UnitNode:
		return fmt.Errorf("dp: neighbouring relation: unit %q, want %q or %q", r.Unit, UnitEdge, UnitNode)
	case r.Change != ChangeAddRemove && r.Change != ChangeZeroOut:
		return fmt.Errorf("dp: neighbouring relation: change %q, want %q or %q", r.Change, ChangeAddRemove, ChangeZeroOut)
	case r.Directed && r.Unit != UnitEdge:
		return fmt.Errorf("dp: neighbouring relation: a %s unit cannot be directed", r.Unit)
	case r.Change == ChangeZeroOut && r.Unit == UnitEdge:
		return fmt.Errorf("dp: neighbouring relation: an edge is added or removed, not zeroed out")
	}
	return nil
}

// String is the report's line: the unit, the change and the neighbour.
func (r Relation) String() string {
	switch {
	case r.Unit == UnitNode && r.Change == ChangeAddRemove:
		return "node, add/remove: G and G − v, v's edges (in every edge set), features, label and split membership removed before any preprocessing; its id stays, isolated (node ids are public)"
	case r.Unit == UnitNode && r.Change == ChangeZeroOut:
		return "node, zero-out: G and G with v's record replaced by a null one (no edges, zero features, no label or split membership) before any preprocessing"
	case r.Unit == UnitEdge && r.Directed:
		return "edge, add/remove one directed edge: G and G without the entry (u, v), before any preprocessing"
	case r.Unit == UnitEdge:
		return "edge, add/remove one undirected edge: G and G without both entries (u, v) and (v, u), before any preprocessing"
	}
	return fmt.Sprintf("unit %q, change %q", r.Unit, r.Change)
}

// MarshalJSON writes the relation's fields and its report line ("text").
func (r Relation) MarshalJSON() ([]byte, error) {
	type plain Relation
	return json.Marshal(struct {
		plain
		Text string `json:"text"`
	}{plain(r), r.String()})
}

// Neighbours returns the plan's relation: Relation when set (validated,
// and of the plan's level), else NewRelation(Level, Unit).
func (p *Plan) Neighbours() (Relation, error) {
	if p.Relation == (Relation{}) {
		return NewRelation(p.Level, p.Unit)
	}
	if err := p.Relation.Validate(); err != nil {
		return Relation{}, err
	}
	if p.Relation.Unit != p.Level {
		return Relation{}, fmt.Errorf("dp: the plan is %s-level but its neighbouring relation is over a %s", p.Level, p.Relation.Unit)
	}
	return p.Relation, nil
}

// subsample returns the plan's subsampling rate (1: none) and the δ its
// releases are composed at (δ/q).
func (p *Plan) subsample() (q, inner float64) {
	if p.SubsampleRate > 0 && p.SubsampleRate < 1 {
		return p.SubsampleRate, p.Delta / p.SubsampleRate
	}
	return 1, p.Delta
}

// amplifyIf amplifies ε by Poisson subsampling at rate q < 1 (identity at
// q = 1 and for ε = +Inf).
func amplifyIf(eps, q float64) float64 {
	if q >= 1 || math.IsInf(eps, 1) || math.IsNaN(eps) {
		return eps
	}
	return amplify(eps, q)
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + ". " + b
}

// Proven returns the ε at the plan's δ that its releases give (composed by
// its accountant, amplified by SubsampleRate): what Report states for a run
// that keeps to the plan. A method that calibrates its noise by a
// published but looser rule sets its plan's Epsilon to this value, so the
// report never states less than what is proven.
func (p *Plan) Proven() (float64, error) {
	saved := p.Epsilon
	p.Epsilon = math.Inf(1)
	defer func() { p.Epsilon = saved }()
	rep, err := p.Report(p.AsPlanned())
	if err != nil {
		return 0, err
	}
	if rep.Epsilon == nil {
		return math.Inf(1), nil
	}
	return *rep.Epsilon, nil
}

func releaseKind(e Event) string {
	if c, ok := e.(Composed); ok {
		return releaseKind(c.Event)
	}
	switch e := e.(type) {
	case PoissonGaussianEvent:
		return "dp-sgd"
	case Poisson:
		if _, ok := unitGaussian(e.Event); ok {
			return "dp-sgd"
		}
	case PureEvent:
		return "selection"
	}
	return "release"
}
