package dp

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Conversion selects how an RDP curve is turned into (ε, δ)-DP.
type Conversion int

const (
	// ConversionImproved is the conversion of Balle, Barthe, Gaboardi, Hsu
	// & Sato (2020, Thm 21) / Canonne, Kamath & Steinke (2020, Prop. 12),
	// as in Google dp_accounting's compute_epsilon and autodp's default:
	//
	//	ε = max(0, ρ(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1))
	//
	// It is never larger than ConversionStandard. It is the zero value and
	// the default.
	ConversionImproved Conversion = iota
	// ConversionStandard is Mironov (2017), Prop. 3:
	//
	//	ε = ρ(α) + ln(1/δ)/(α−1)
	//
	// the conversion printed in the ProGAP, CARIBOU and ASGL papers and used
	// by (older) TF-Privacy.
	ConversionStandard
)

// String returns "improved" or "standard".
func (c Conversion) String() string {
	switch c {
	case ConversionImproved:
		return "improved"
	case ConversionStandard:
		return "standard"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// ParseConversion parses "improved" (also "bbghs", "cks") or "standard"
// (also "mironov").
func ParseConversion(s string) (Conversion, error) {
	switch strings.ToLower(s) {
	case "improved", "bbghs", "cks":
		return ConversionImproved, nil
	case "standard", "mironov":
		return ConversionStandard, nil
	}
	return 0, fmt.Errorf("dp: unknown RDP conversion %q (want improved or standard)", s)
}

func (c Conversion) valid() bool { return c == ConversionImproved || c == ConversionStandard }

// Epsilon converts one point of an RDP curve, (alpha, rdp), into the ε of
// (ε, delta)-DP. It returns NaN for alpha ≤ 1, rdp < 0, delta outside (0, 1)
// or an unknown conversion, and +Inf for rdp = +Inf.
func (c Conversion) Epsilon(rdp, alpha, delta float64) float64 {
	if !(alpha > 1) || !(rdp >= 0) || !(delta > 0 && delta < 1) || !c.valid() {
		return math.NaN()
	}
	if math.IsInf(rdp, 1) {
		return rdp
	}
	if c == ConversionStandard {
		return rdp + math.Log(1/delta)/(alpha-1)
	}
	return math.Max(0, rdp+math.Log1p(-1/alpha)-(math.Log(delta)+math.Log(alpha))/(alpha-1))
}

// logDelta converts (alpha, rdp) into ln δ for a given ε (the inverse of
// Epsilon at a fixed order).
func (c Conversion) logDelta(rdp, alpha, eps float64) float64 {
	if math.IsInf(rdp, 1) {
		return 0
	}
	if c == ConversionStandard {
		return (alpha - 1) * (rdp - eps)
	}
	return (alpha-1)*(rdp-eps+math.Log1p(-1/alpha)) - math.Log(alpha)
}

// DefaultOrders returns the RDP accountant's default grid of orders α (209
// of them, every integer from 2 to 24 included):
//
//	1.01 … 1.20  step 0.01      2.1 … 3     step 0.1      13 … 24      step 1
//	1.22 … 1.40  step 0.02      3.25 … 6    step 0.25     26 … 48      step 2, then
//	1.45 … 2.00  step 0.05      6.5 … 12    step 0.5      52 … 96 step 4, 104 … 192 step 8,
//	                                                      208 … 384 step 16, 416 … 768 step 32,
//	                                                      832 … 1024 step 64, 1089, then
//	                                                      α = 1 + m·2ᵏ for k = 7 … 13, m = 9 … 16
//	                                                      (1153, 1281, …, 2049, 2305, …, 131073)
//
// Above α = 1.1 consecutive orders differ by at most 12.5% in α−1, so on the
// grid alone (WithoutRefinement) ε exceeds the best continuous order by at
// most ~0.2% for a Gaussian-shaped curve (RDP ∝ α) whose optimum lies inside
// the grid; by default the accountant then refines around the best grid
// order, and beyond the last one when that is the best (see RDP), which
// removes that loss. The large orders matter for high noise or small ε,
// where the optimum is near ln(1/δ)/ε: ε = 0.01 at δ = 1e-9 needs α ≈ 2000.
func DefaultOrders() []float64 {
	var o []float64
	add := func(from, to, step, scale int) {
		for k := from; k <= to; k += step {
			o = append(o, float64(k)/float64(scale))
		}
	}
	add(101, 120, 1, 100)
	add(122, 140, 2, 100)
	add(145, 200, 5, 100)
	add(21, 30, 1, 10)
	add(13, 24, 1, 4)
	add(13, 24, 1, 2)
	add(13, 24, 1, 1)
	for _, r := range [][3]int{{26, 48, 2}, {52, 96, 4}, {104, 192, 8}, {208, 384, 16}, {416, 768, 32}, {832, 1024, 64}} {
		add(r[0], r[1], r[2], 1)
	}
	o = append(o, 1089)
	for k := 7; k <= 13; k++ {
		for m := 9; m <= 16; m++ {
			o = append(o, float64(1+m<<k))
		}
	}
	return o
}

// RDPOption configures NewRDP.
type RDPOption func(*RDP) error

// WithOrders replaces the grid of orders (each > 1; sorted and de-duplicated
// internally).
func WithOrders(orders ...float64) RDPOption {
	return func(a *RDP) error {
		if len(orders) == 0 {
			return fmt.Errorf("dp: empty list of RDP orders")
		}
		o := append([]float64(nil), orders...)
		for _, x := range o {
			if !(x > 1) || math.IsInf(x, 1) {
				return fmt.Errorf("dp: RDP order must be finite and > 1, got %g", x)
			}
		}
		sort.Float64s(o)
		u := o[:1]
		for _, x := range o[1:] {
			if x != u[len(u)-1] {
				u = append(u, x)
			}
		}
		a.orders = u
		return nil
	}
}

// WithConversion selects the RDP → (ε, δ) conversion (default
// ConversionImproved).
func WithConversion(c Conversion) RDPOption {
	return func(a *RDP) error {
		if !c.valid() {
			return fmt.Errorf("dp: unknown RDP conversion %d", int(c))
		}
		a.conv = c
		return nil
	}
}

// WithoutRefinement makes the accountant minimise over the grid of orders
// only (no orders between or beyond them), as Opacus, TF-Privacy and autodp
// do; use it to reproduce numbers computed on a fixed grid.
func WithoutRefinement() RDPOption {
	return func(a *RDP) error { a.refine = false; return nil }
}

// RDP is the Rényi-DP accountant (Mironov 2017). It keeps the total RDP
// curve on a grid of orders (DefaultOrders unless WithOrders) plus an exact
// description of everything composed, and converts with the chosen
// Conversion at the minimising order. By default it then refines that order
// by golden-section search between the neighbouring grid orders, evaluating
// the exact curve there — and when the best grid order is the last one, it
// first looks beyond the grid at doubling orders (up to 2²⁰) until ε stops
// decreasing, and refines around the best of those. Every order α > 1 gives
// a valid bound, so the refinement can only tighten ε, and it removes the
// grid's discretisation error (the Gaussian closed form
// μ²/2 + μ·sqrt(2 ln(1/δ)) is met to ~1e-12). Above α = 1024 a ledger with a
// subsampled Gaussian is refined over integer orders only (its
// fractional-order series costs O(α); the loss is about a relative 1/α at
// most). WithoutRefinement keeps ε to the grid.
//
// Per-event curves (sensitivity normalised to 1):
//
//	GaussianEvent          Count·α/(2z²)                         (Mironov 2017)
//	PoissonGaussianEvent   Steps·SubsampledGaussianRDP(q, z, α)  (Mironov, Talwar & Zhang 2019)
//	GDPEvent               α·μ²/2                                (Dong, Roth & Su 2019; Bun & Steinke 2016)
//	PureEvent              Count·min(ε', α·ε'²/2), ε' amplified  (ε-DP ⇒ (ε²/2)-zCDP, Bun & Steinke 2016
//	                                                             Prop. 3.3; D_α ≤ D_∞ = ε, Mironov 2017)
//	RDPEvent               Curve(α)
//	ComposedEvent          the sum of its events' curves
//	Composed{n, E}         n times E's curve
//	Poisson{q, GaussianEvent{z, 1}}  as PoissonGaussianEvent{q, z, 1}
//	Poisson{q, PureEvent{ε, c}}      min(ε', α·ε'²/2), ε' = ln(1 + q(e^{cε} − 1))
//	Occurrences{R, Change, Poisson{…} or SampledWithoutReplacement{…}}
//	                       the occurrence curve (see Occurrences); under
//	                       Poisson sampling, at each order the smaller of it
//	                       and the exact group pair's certified RDP
//	                       (Occurrences.GroupPair, GroupPair)
//	an RDPer               its RDP(α) (an event defined outside dp)
//	a GDPer (not RDPer)    α·μ²/2
//
// Any other structure is refused with an UnsupportedEventError.
//
// Not safe for concurrent use.
type RDP struct {
	orders []float64
	conv   Conversion
	refine bool
	total  []float64 // total RDP at orders
	terms  rdpTerms  // exact description, for refinement
	ledger []Event
}

// NewRDP returns an empty RDP accountant.
func NewRDP(opts ...RDPOption) (*RDP, error) {
	a := &RDP{orders: DefaultOrders(), refine: true}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(a); err != nil {
			return nil, err
		}
	}
	a.total = make([]float64, len(a.orders))
	return a, nil
}

// Name returns "rdp" (improved conversion) or "rdp-standard".
func (a *RDP) Name() string {
	if a.conv == ConversionStandard {
		return "rdp-standard"
	}
	return "rdp"
}

// Conversion returns the accountant's RDP → (ε, δ) conversion.
func (a *RDP) Conversion() Conversion { return a.conv }

// Orders returns a copy of the grid of orders.
func (a *RDP) Orders() []float64 { return append([]float64(nil), a.orders...) }

// Curve returns a copy of the total RDP at each grid order (same indexing as
// Orders).
func (a *RDP) Curve() []float64 { return append([]float64(nil), a.total...) }

// RDPAt returns the exact total RDP of order alpha > 1 (NaN for alpha ≤ 1).
func (a *RDP) RDPAt(alpha float64) float64 {
	if !(alpha > 1) {
		return math.NaN()
	}
	return a.terms.at(alpha)
}

// Supports reports whether Compose can account for e: whether every part
// of its structure has a rule here (see RDP). Anything else, nil included,
// is refused, never composed as zero.
func (a *RDP) Supports(e Event) bool {
	if e == nil {
		return false
	}
	var t rdpTerms
	return t.add(e, 1, a.Name()) == nil
}

// Compose adds e to the ledger. It validates e, evaluates its curve at every
// grid order (rejecting NaN or negative RDP values), and only then commits;
// a rejected event leaves the accountant unchanged.
func (a *RDP) Compose(e Event) error {
	if e == nil {
		return errNilEvent
	}
	if err := e.Validate(); err != nil {
		return err
	}
	var t rdpTerms
	if err := t.add(e, 1, a.Name()); err != nil {
		return err
	}
	curve := make([]float64, len(a.orders))
	for i, alpha := range a.orders {
		v, err := t.atStrict(alpha)
		if err != nil {
			return err
		}
		curve[i] = v
	}
	// Commit.
	for i, v := range curve {
		a.total[i] += v
	}
	a.terms.merge(t)
	a.ledger = append(a.ledger, e)
	return nil
}

// Ledger returns a copy of the composed events, in order.
func (a *RDP) Ledger() []Event { return append([]Event(nil), a.ledger...) }

// Epsilon returns the ε at delta ∈ (0, 1), minimised over orders.
func (a *RDP) Epsilon(delta float64) (float64, error) {
	eps, _, err := a.EpsilonAndOrder(delta)
	return eps, err
}

// EpsilonAndOrder returns the ε at delta and the order α that attains it
// (order 0 when nothing has been composed, in which case ε is 0; ε is +Inf
// when every order is).
func (a *RDP) EpsilonAndOrder(delta float64) (eps, order float64, err error) {
	if err := CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	if len(a.ledger) == 0 {
		return 0, 0, nil
	}
	eps, order = a.minimise(func(rdp, alpha float64) float64 {
		return a.conv.Epsilon(rdp, alpha, delta)
	})
	return eps, order, nil
}

// Delta returns the smallest δ the conversion certifies for epsilon ≥ 0
// (minimised over orders, capped at 1; 0 when nothing has been composed).
func (a *RDP) Delta(epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, fmt.Errorf("dp: epsilon must be non-negative, got %g", epsilon)
	}
	if len(a.ledger) == 0 {
		return 0, nil
	}
	ld, _ := a.minimise(func(rdp, alpha float64) float64 {
		return a.conv.logDelta(rdp, alpha, epsilon)
	})
	return math.Min(1, math.Exp(ld)), nil
}

// Refinement limits. Orders beyond the grid are searched up to
// maxRefineOrder (the conversion's ln(1/δ)/(α−1) alone is then below
// ln(1/δ)·1e-6, so larger orders matter only for ε below that). Above
// fracRefineOrder, a ledger with a subsampled Gaussian is refined over
// integer orders only: its fractional-order series costs O(α) erfc
// evaluations, while the integer sum is exact and cheap. As RDP is
// non-decreasing in α, the best order in (k, k+1) beats α = k by at most
// the conversion's change over that unit step, about a relative 1/k (and
// O(1/k²) where the curve is smooth); and it is never optimistic, as every
// order evaluated is a valid one.
const (
	maxRefineOrder  = 1 << 20
	fracRefineOrder = 1024
)

// minimise returns the minimum of obj(rdp(α), α) over the grid and, when
// refining, over the interval between the grid neighbours of the best
// order — or, when the best is the last grid order, over orders beyond it:
// they are tried at doubling orders until obj stops decreasing (or α
// reaches maxRefineOrder), and the minimum is refined between the last two
// doublings around the best. Every α > 1 gives a valid bound, and a NaN
// objective counts as +Inf, so the result is a minimum over valid orders
// whatever the shape of obj.
func (a *RDP) minimise(obj func(rdp, alpha float64) float64) (best, order float64) {
	best, bi := math.Inf(1), -1
	for i, alpha := range a.orders {
		if v := obj(a.total[i], alpha); v < best {
			best, bi = v, i
		}
	}
	if bi < 0 {
		return math.Inf(1), 0
	}
	order = a.orders[bi]
	if !a.refine || len(a.orders) < 2 {
		return best, order
	}
	lo := a.orders[max(bi-1, 0)]
	hi := a.orders[min(bi+1, len(a.orders)-1)]
	f := func(alpha float64) float64 {
		v := obj(a.terms.at(alpha), alpha)
		if math.IsNaN(v) {
			return math.Inf(1)
		}
		if v < best {
			best, order = v, alpha
		}
		return v
	}
	if bi == len(a.orders)-1 {
		// The grid ends at the best order: walk beyond it.
		prev, x, fx := lo, a.orders[bi], best
		for {
			if x >= maxRefineOrder {
				lo, hi = prev, x
				break
			}
			nx := math.Min(2*x, maxRefineOrder)
			fn := f(nx)
			if !(fn < fx) {
				lo, hi = prev, nx
				break
			}
			prev, x, fx = x, nx, fn
		}
	}
	if len(a.terms.sgm) > 0 && hi > fracRefineOrder {
		intSearch(math.Ceil(lo), math.Floor(hi), f)
		return best, order
	}
	// Golden-section search; any α > 1 gives a valid bound, so keeping the
	// best value seen is safe even if the objective is not unimodal.
	const invPhi = 0.6180339887498949
	x1 := hi - invPhi*(hi-lo)
	x2 := lo + invPhi*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for i := 0; i < 100 && hi-lo > 1e-12*hi; i++ {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - invPhi*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + invPhi*(hi-lo)
			f2 = f(x2)
		}
	}
	return best, order
}

// intSearch runs a golden-section search for the minimum of f over the
// integers in [lo, hi] (lo, hi integral), ending with a scan of the last
// few; f records the best value itself.
func intSearch(lo, hi float64, f func(float64) float64) {
	if lo < 2 {
		lo = 2 // the smallest integer order
	}
	seen := map[float64]float64{}
	g := func(x float64) float64 {
		v, ok := seen[x]
		if !ok {
			v = f(x)
			seen[x] = v
		}
		return v
	}
	const invPhi = 0.6180339887498949
	for hi-lo > 3 {
		x1 := lo + math.Round((1-invPhi)*(hi-lo))
		x2 := lo + math.Round(invPhi*(hi-lo))
		if x2 <= x1 {
			x2 = x1 + 1
		}
		if g(x1) <= g(x2) {
			hi = x2
		} else {
			lo = x1
		}
	}
	for x := lo; x <= hi; x++ {
		g(x)
	}
}

// rdpTerms is an exact, mergeable description of a composition, evaluable
// at any order.
type rdpTerms struct {
	gaussCoef float64 // Σ Count/z² + Σ μ²: contributes α·gaussCoef/2
	pure      []pureTerm
	sgm       []sgmTerm
	curves    []RDPEvent // Count already folded in (see add)
}

type pureTerm struct {
	eps   float64 // per-run ε after amplification
	count int
}

type sgmTerm struct {
	q, z  float64
	steps int
}

// add flattens a validated event, composed n times, into t, or returns an
// UnsupportedEventError (naming acct) for a structure with no rule. The
// arithmetic of each rule at n = 1 is that of the event alone, so a
// shorthand and its expansion (PoissonGaussianEvent{q, z, T} and
// Composed{T, Poisson{q, GaussianEvent{z, 1}}}) give the same bits.
func (t *rdpTerms) add(e Event, n int, acct string) error {
	switch e := e.(type) {
	case GaussianEvent:
		m, err := mulCount(n, e.Count)
		if err != nil {
			return err
		}
		t.gaussCoef += float64(m) / (e.Multiplier * e.Multiplier)
	case GDPEvent:
		t.gaussCoef += float64(n) * (e.Mu * e.Mu)
	case PoissonGaussianEvent:
		m, err := mulCount(n, e.Steps)
		if err != nil {
			return err
		}
		t.addPoissonGaussian(e.Rate, e.Multiplier, m)
	case PureEvent:
		m, err := mulCount(n, e.Count)
		if err != nil {
			return err
		}
		t.addPure(pureTerm{e.Epsilon, m})
	case RDPEvent:
		m, err := mulCount(n, e.count())
		if err != nil {
			return err
		}
		e.Count = m
		t.addCurve(e)
	case ComposedEvent:
		for _, c := range e.Events {
			if c == nil {
				return errNilEvent
			}
			if err := t.add(c, n, acct); err != nil {
				return err
			}
		}
	case Composed:
		if e.Event == nil {
			return errNilEvent
		}
		m, err := mulCount(n, e.Count)
		if err != nil {
			return err
		}
		return t.add(e.Event, m, acct)
	case Poisson:
		if z, ok := unitGaussian(e.Event); ok {
			t.addPoissonGaussian(e.Rate, z, n)
			return nil
		}
		if p, ok := e.Event.(PureEvent); ok {
			// One run of the (c·ε)-DP mechanism on the sample.
			t.addPure(pureTerm{amplify(float64(p.Count)*p.Epsilon, e.Rate), n})
			return nil
		}
		return &UnsupportedEventError{Accountant: acct, Event: e,
			Hint: "Poisson sampling is accounted over GaussianEvent{z, 1} or a PureEvent"}
	case Occurrences:
		c, err := groupCurve(e, acct)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%T:%s", e, e)
		if g, ok := e.GroupPair(); ok {
			t.addCurve(occurrencesPairCurve(name, n, c, g))
			return nil
		}
		t.addCurve(curveEvent(name, n, c))
	default:
		if r, ok := e.(RDPer); ok {
			t.addCurve(rdperEvent(r, n))
			return nil
		}
		if g, ok := e.(GDPer); ok {
			mu, err := gdperMu(g)
			if err != nil {
				return err
			}
			t.gaussCoef += float64(n) * (mu * mu)
			return nil
		}
		return &UnsupportedEventError{Accountant: acct, Event: e,
			Hint: "the RDP accountant composes Gaussian, GDP, pure and RDP-curve events, the Poisson-sampled Gaussian, Occurrences over a sampled Gaussian, their compositions, and events that implement dp.RDPer or dp.GDPer"}
	}
	return nil
}

// addPoissonGaussian adds steps sampled-Gaussian steps (rate 1: Gaussian).
func (t *rdpTerms) addPoissonGaussian(q, z float64, steps int) {
	if q == 1 {
		t.gaussCoef += float64(steps) / (z * z)
		return
	}
	t.addSGM(sgmTerm{q, z, steps})
}

func (t *rdpTerms) addSGM(s sgmTerm) {
	for i := range t.sgm {
		if t.sgm[i].q == s.q && t.sgm[i].z == s.z {
			t.sgm[i].steps += s.steps
			return
		}
	}
	t.sgm = append(t.sgm, s)
}

func (t *rdpTerms) addPure(p pureTerm) {
	for i := range t.pure {
		if t.pure[i].eps == p.eps {
			t.pure[i].count += p.count
			return
		}
	}
	t.pure = append(t.pure, p)
}

func (t *rdpTerms) merge(o rdpTerms) {
	t.gaussCoef += o.gaussCoef
	for _, s := range o.sgm {
		t.addSGM(s)
	}
	for _, p := range o.pure {
		t.addPure(p)
	}
	for _, c := range o.curves {
		t.addCurve(c)
	}
}

// addCurve adds e's Count-fold composition; events of the same Name (which
// identifies the curve) are merged by adding their counts, so a ledger of T
// one-step records costs one curve evaluation per order, not T.
func (t *rdpTerms) addCurve(e RDPEvent) {
	n := e.count()
	for i := range t.curves {
		if t.curves[i].Name == e.Name {
			t.curves[i].Count = t.curves[i].count() + n
			return
		}
	}
	e.Count = n
	t.curves = append(t.curves, e)
}

// atStrict evaluates the curve at alpha, failing on invalid RDP curves.
func (t *rdpTerms) atStrict(alpha float64) (float64, error) {
	v := t.builtinAt(alpha)
	for _, c := range t.curves {
		x := c.Curve(alpha)
		if math.IsNaN(x) || x < 0 {
			return 0, fmt.Errorf("dp: RDP event %q: curve(%g) = %g, want a value ≥ 0 or +Inf", c.Name, alpha, x)
		}
		v += float64(c.Count) * x
	}
	return v, nil
}

// at evaluates the curve at alpha, treating invalid curve values as +Inf
// (never optimistic).
func (t *rdpTerms) at(alpha float64) float64 {
	v := t.builtinAt(alpha)
	for _, c := range t.curves {
		x := c.Curve(alpha)
		if math.IsNaN(x) || x < 0 {
			return math.Inf(1)
		}
		v += float64(c.Count) * x
	}
	return v
}

func (t *rdpTerms) builtinAt(alpha float64) float64 {
	v := alpha * t.gaussCoef / 2
	for _, p := range t.pure {
		v += float64(p.count) * math.Min(p.eps, alpha*p.eps*p.eps/2)
	}
	for _, s := range t.sgm {
		r := SubsampledGaussianRDP(s.q, s.z, alpha)
		if math.IsNaN(r) {
			return math.Inf(1)
		}
		v += float64(s.steps) * r
	}
	return v
}
