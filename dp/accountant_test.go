package dp

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestAccountantSuite runs the same contract against every accountant.
func TestAccountantSuite(t *testing.T) {
	valid := []Event{
		GaussianEvent{Multiplier: 2, Count: 3},
		GDPEvent{Mu: 0.4},
		ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 3, Count: 1}, GDPEvent{Mu: 0.2}}},
		PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 100},
		PureEvent{Epsilon: 0.1, Count: 2},
		Composed{Count: 1, Event: Poisson{Rate: 0.1, Event: PureEvent{Epsilon: 0.5, Count: 1}}},
		RDPEvent{Name: "linear", Curve: func(a float64) float64 { return 0.01 * a }},
		ComposedEvent{Events: []Event{PureEvent{Epsilon: 0.1, Count: 1}, GDPEvent{Mu: 0.2}}},
	}
	invalid := []Event{
		nil,
		GaussianEvent{Multiplier: 0, Count: 1},
		GaussianEvent{Multiplier: -1, Count: 1},
		GaussianEvent{Multiplier: math.NaN(), Count: 1},
		GaussianEvent{Multiplier: 1, Count: 0},
		PoissonGaussianEvent{Rate: 0, Multiplier: 1, Steps: 1},
		PoissonGaussianEvent{Rate: 1.5, Multiplier: 1, Steps: 1},
		PoissonGaussianEvent{Rate: 0.1, Multiplier: 1, Steps: -2},
		GDPEvent{Mu: 0},
		GDPEvent{Mu: math.Inf(1)},
		PureEvent{Epsilon: 0, Count: 1},
		Composed{Count: 1, Event: Poisson{Rate: -0.1, Event: PureEvent{Epsilon: 1, Count: 1}}},
		RDPEvent{Name: "", Curve: func(float64) float64 { return 0 }},
		RDPEvent{Name: "nil curve"},
		RDPEvent{Name: "nan", Curve: func(a float64) float64 { return math.NaN() }},
		RDPEvent{Name: "negative", Curve: func(a float64) float64 { return -1 }},
		ComposedEvent{},
		ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 1, Count: 1}, GaussianEvent{Multiplier: -1, Count: 1}}},
		ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 1, Count: 1}, nil}},
	}
	for _, name := range AccountantNames() {
		t.Run(name, func(t *testing.T) {
			a, err := NewAccountant(name)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != name {
				t.Errorf("Name() = %q, want %q", a.Name(), name)
			}
			if eps, err := a.Epsilon(1e-5); err != nil || eps != 0 {
				t.Errorf("empty accountant: ε = %v, %v; want 0", eps, err)
			}
			for _, d := range []float64{0, 1, -1, 2, math.NaN()} {
				if _, err := a.Epsilon(d); err == nil {
					t.Errorf("Epsilon(%v): want an error", d)
				}
			}
			// Supports agrees with Compose on a fresh accountant.
			for _, e := range valid {
				fresh, _ := NewAccountant(name)
				err := fresh.Compose(e)
				if fresh.Supports(e) != (err == nil) {
					t.Errorf("%v: Supports = %v but Compose error = %v", e, fresh.Supports(e), err)
				}
				if err != nil && !isUnsupported(err) {
					t.Errorf("%v: rejected with %v, want an UnsupportedEventError", e, err)
				}
				if err != nil && !strings.HasPrefix(err.Error(), "dp: ") {
					t.Errorf("error %q lacks the dp: prefix", err)
				}
			}
			// Build some state, then check that every rejected event leaves it unchanged.
			if err := a.Compose(GaussianEvent{Multiplier: 2, Count: 3}); err != nil {
				t.Fatal(err)
			}
			before, _ := a.Epsilon(1e-5)
			ledger := a.Ledger()
			rejected := append([]Event(nil), invalid...)
			if name == "gdp" {
				rejected = append(rejected, PoissonGaussianEvent{Rate: 0.1, Multiplier: 1, Steps: 1},
					ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 1, Count: 1}, PureEvent{Epsilon: 1, Count: 1}}})
			}
			for _, e := range rejected {
				err := a.Compose(e)
				if err == nil {
					t.Errorf("Compose(%v): want an error", e)
					continue
				}
				if !strings.HasPrefix(err.Error(), "dp: ") {
					t.Errorf("error %q lacks the dp: prefix", err)
				}
				if after, _ := a.Epsilon(1e-5); after != before {
					t.Errorf("rejected %v changed ε from %v to %v", e, before, after)
				}
				if l := a.Ledger(); len(l) != len(ledger) {
					t.Errorf("rejected %v changed the ledger to %v", e, l)
				}
			}
			// ε never decreases as events are added; the ledger records them.
			prev := before
			for _, e := range valid {
				if !a.Supports(e) {
					continue
				}
				if err := a.Compose(e); err != nil {
					t.Fatal(err)
				}
				eps, err := a.Epsilon(1e-5)
				if err != nil {
					t.Fatal(err)
				}
				if eps < prev {
					t.Errorf("ε decreased from %v to %v after %v", prev, eps, e)
				}
				prev = eps
			}
			l := a.Ledger()
			if l[0] != (GaussianEvent{Multiplier: 2, Count: 3}) {
				t.Errorf("ledger[0] = %v", l[0])
			}
			l[0] = GDPEvent{Mu: 9}
			if a.Ledger()[0] != (GaussianEvent{Multiplier: 2, Count: 3}) {
				t.Error("Ledger returned internal storage")
			}
		})
	}
	if _, err := NewAccountant("moments"); err == nil {
		t.Error("unknown accountant: want an error")
	}
}

func TestUnsupportedEventError(t *testing.T) {
	err := NewGDP().Compose(PoissonGaussianEvent{Rate: 0.1, Multiplier: 1, Steps: 10})
	var u *UnsupportedEventError
	if !errors.As(err, &u) {
		t.Fatalf("error %v is not an UnsupportedEventError", err)
	}
	if u.Accountant != "gdp" || !strings.Contains(err.Error(), "RDP accountant") {
		t.Errorf("unhelpful error: %v", err)
	}
	if NewGDP().Supports(nil) {
		t.Error("Supports(nil) must be false")
	}
}

func TestEventStrings(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{GaussianEvent{Multiplier: 1.5, Count: 2}, "Gaussian(multiplier=1.5, count=2)"},
		{PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 100}, "PoissonGaussian(rate=0.01, multiplier=1.1, steps=100)"},
		{GDPEvent{Mu: 0.5}, "GDP(mu=0.5)"},
		{RDPEvent{Name: "cni", Curve: func(float64) float64 { return 0 }}, "RDP(cni)"},
		{PureEvent{Epsilon: 1, Count: 3}, "Pure(epsilon=1, count=3)"},
		{Composed{Count: 3, Event: Poisson{Rate: 0.1, Event: PureEvent{Epsilon: 1, Count: 1}}}, "Composed(count=3, Poisson(rate=0.1, Pure(epsilon=1, count=1)))"},
		{ComposedEvent{Events: []Event{GDPEvent{Mu: 1}, nil}}, "Composed[GDP(mu=1), <nil>]"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestRDPGaussianClosedForm(t *testing.T) {
	// ProGAP's Thm 4.1 forward (values computed in float64), and the closed
	// form in general:
	// ε = K/(2σ²) + sqrt(2K·ln(1/δ))/σ with the standard conversion.
	for _, tc := range []struct {
		k            int
		sigma, delta float64
		want         float64
	}{
		{2, 5, 1e-8, 1.7567728210},
		{1, 1, 1e-5, 5.2985259122},
	} {
		a, _ := NewRDP(WithConversion(ConversionStandard))
		if err := a.Compose(GaussianEvent{Multiplier: tc.sigma, Count: tc.k}); err != nil {
			t.Fatal(err)
		}
		eps, order, err := a.EpsilonAndOrder(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "Thm 4.1 ε", eps, tc.want, 1e-10)
		k := float64(tc.k)
		assertRel(t, "optimal order", order, 1+tc.sigma*math.Sqrt(2*math.Log(1/tc.delta)/k), 1e-4)
	}
	for _, sigma := range []float64{0.7, 2, 9} {
		for _, k := range []int{1, 4, 30} {
			for _, delta := range []float64{1e-4, 1e-7} {
				a, _ := NewRDP(WithConversion(ConversionStandard))
				_ = a.Compose(GaussianEvent{Multiplier: sigma, Count: k})
				eps, _ := a.Epsilon(delta)
				kf, l := float64(k), math.Log(1/delta)
				want := kf/(2*sigma*sigma) + math.Sqrt(2*kf*l)/sigma
				if 1+sigma*math.Sqrt(2*l/kf) > 1024 {
					continue // optimum beyond the grid
				}
				assertRel(t, "closed form", eps, want, 1e-9)
				if eps < want*(1-1e-12) {
					t.Errorf("below the continuous optimum")
				}
			}
		}
	}
}

// TestRDPNeverBelowExact: the RDP route is a valid bound, so its ε is never
// below the exact GDP ε for Gaussian compositions. It also reports the
// largest RDP/exact ratio on the grid, with and without order refinement.
func TestRDPNeverBelowExact(t *testing.T) {
	type acc struct {
		name string
		opts []RDPOption
	}
	accs := []acc{
		{"improved", nil},
		{"standard", []RDPOption{WithConversion(ConversionStandard)}},
		{"improved, grid only", []RDPOption{WithoutRefinement()}},
		{"standard, grid only", []RDPOption{WithConversion(ConversionStandard), WithoutRefinement()}},
	}
	maxRatio := make([]float64, len(accs))
	maxAt := make([]string, len(accs))
	// The same, restricted to the budgets people use (exact ε in [0.5, 16]).
	maxTypical := make([]float64, len(accs))
	typicalAt := make([]string, len(accs))
	for _, sigma := range []float64{0.5, 0.8, 1, 2, 5, 10, 30, 100} {
		for _, count := range []int{1, 2, 5, 10, 100, 1000} {
			for _, delta := range []float64{1e-3, 1e-5, 1e-7, 1e-9} {
				g := NewGDP()
				_ = g.Compose(GaussianEvent{Multiplier: sigma, Count: count})
				exact, _ := g.Epsilon(delta)
				for i, c := range accs {
					a, _ := NewRDP(c.opts...)
					_ = a.Compose(GaussianEvent{Multiplier: sigma, Count: count})
					eps, _ := a.Epsilon(delta)
					if eps < exact*(1-1e-12) {
						t.Errorf("%s: RDP ε %v below exact %v (σ=%g, count=%d, δ=%g)", c.name, eps, exact, sigma, count, delta)
					}
					r := eps / exact
					if r > maxRatio[i] {
						maxRatio[i] = r
						maxAt[i] = formatCase(sigma, count, delta, exact)
					}
					if exact >= 0.5 && exact <= 16 && r > maxTypical[i] {
						maxTypical[i] = r
						typicalAt[i] = formatCase(sigma, count, delta, exact)
					}
				}
			}
		}
	}
	for i, c := range accs {
		t.Logf("max RDP/exact ε ratio, %s: %.4f at %s; for exact ε in [0.5, 16]: %.4f at %s",
			c.name, maxRatio[i], maxAt[i], maxTypical[i], typicalAt[i])
	}
	// Grid-only loses little against refinement where the optimum is inside
	// the grid: compare on the same cases.
	var worst float64
	for _, sigma := range []float64{0.5, 1, 3, 10} {
		for _, count := range []int{1, 10, 100} {
			for _, delta := range []float64{1e-5, 1e-9} {
				for _, conv := range []Conversion{ConversionImproved, ConversionStandard} {
					r, _ := NewRDP(WithConversion(conv))
					gOnly, _ := NewRDP(WithConversion(conv), WithoutRefinement())
					_ = r.Compose(GaussianEvent{Multiplier: sigma, Count: count})
					_ = gOnly.Compose(GaussianEvent{Multiplier: sigma, Count: count})
					e1, _ := r.Epsilon(delta)
					e2, _ := gOnly.Epsilon(delta)
					if e2 < e1*(1-1e-12) {
						t.Errorf("refinement made ε worse")
					}
					worst = math.Max(worst, e2/e1-1)
				}
			}
		}
	}
	t.Logf("largest grid-only loss against refinement: %.3g%%", 100*worst)
	if worst > 2e-3 {
		t.Errorf("default grid loses %.3g%% against the refined order", 100*worst)
	}
}

func formatCase(sigma float64, count int, delta, exact float64) string {
	return "σ=" + ftoa(sigma) + " count=" + itoa(count) + " δ=" + ftoa(delta) + " exact ε=" + ftoa(exact)
}

func TestRDPEventsAndCurves(t *testing.T) {
	// Poisson rate 1 is the plain Gaussian.
	a, _ := NewRDP()
	b, _ := NewRDP()
	_ = a.Compose(PoissonGaussianEvent{Rate: 1, Multiplier: 1.3, Steps: 7})
	_ = b.Compose(GaussianEvent{Multiplier: 1.3, Count: 7})
	ea, _ := a.Epsilon(1e-6)
	eb, _ := b.Epsilon(1e-6)
	assertRel(t, "rate 1", ea, eb, 1e-15)

	// Pure ε: RDP min(ε', α ε'²/2) per run, amplified when 0 < rate < 1.
	p, _ := NewRDP(WithOrders(1.5, 2, 10, 100), WithoutRefinement())
	_ = p.Compose(PureEvent{Epsilon: 0.4, Count: 3})
	_ = p.Compose(Composed{Count: 1, Event: Poisson{Rate: 0.05, Event: PureEvent{Epsilon: 2, Count: 1}}})
	amp, _ := AmplifiedEpsilon(2, 0.05)
	for i, alpha := range p.Orders() {
		want := 3*math.Min(0.4, alpha*0.08) + math.Min(amp, alpha*amp*amp/2)
		assertRel(t, "pure RDP", p.Curve()[i], want, 1e-14)
		assertRel(t, "RDPAt", p.RDPAt(alpha), want, 1e-14)
	}

	// A general curve, +Inf below α=2 (no bound there), is fine.
	c, _ := NewRDP()
	err := c.Compose(RDPEvent{Name: "from 2", Curve: func(a float64) float64 {
		if a < 2 {
			return math.Inf(1)
		}
		return 0.05 * a
	}})
	if err != nil {
		t.Fatal(err)
	}
	eps, order, _ := c.EpsilonAndOrder(1e-5)
	if order < 2 || math.IsInf(eps, 1) {
		t.Errorf("ε=%v at order %v", eps, order)
	}
	// A curve that is +Inf everywhere gives ε = +Inf.
	d, _ := NewRDP()
	_ = d.Compose(RDPEvent{Name: "no bound", Curve: func(float64) float64 { return math.Inf(1) }})
	if e, _ := d.Epsilon(1e-5); !math.IsInf(e, 1) {
		t.Errorf("ε = %v, want +Inf", e)
	}
	// A curve that misbehaves off the grid is treated as +Inf (never optimistic).
	e, _ := NewRDP(WithOrders(2, 3, 4))
	_ = e.Compose(RDPEvent{Name: "grid only", Curve: func(a float64) float64 {
		if a != math.Trunc(a) {
			return -5
		}
		return 0.1 * a
	}})
	got, ord, _ := e.EpsilonAndOrder(1e-5)
	if ord != math.Trunc(ord) {
		t.Errorf("refinement used an order (%v) where the curve was invalid", ord)
	}
	if got <= 0 {
		t.Errorf("ε = %v", got)
	}

	// Delta inverts Epsilon (conservatively).
	for _, conv := range []Conversion{ConversionImproved, ConversionStandard} {
		r, _ := NewRDP(WithConversion(conv))
		_ = r.Compose(PoissonGaussianEvent{Rate: 0.01, Multiplier: 1, Steps: 1000})
		eps, _ := r.Epsilon(1e-5)
		dlt, err := r.Delta(eps)
		if err != nil {
			t.Fatal(err)
		}
		if dlt > 1e-5*(1+1e-9) || dlt < 1e-5*0.999 {
			t.Errorf("%v: Delta(Epsilon(1e-5)) = %g", conv, dlt)
		}
	}
	empty, _ := NewRDP()
	if eps, ord, _ := empty.EpsilonAndOrder(1e-5); eps != 0 || ord != 0 {
		t.Errorf("empty: ε=%v order=%v", eps, ord)
	}
	if d, _ := empty.Delta(1); d != 0 {
		t.Errorf("empty: δ=%v", d)
	}
}

func TestRDPOptions(t *testing.T) {
	for _, bad := range [][]float64{{}, {1}, {0.5, 2}, {math.NaN()}, {math.Inf(1)}} {
		if _, err := NewRDP(WithOrders(bad...)); err == nil {
			t.Errorf("WithOrders(%v): want an error", bad)
		}
	}
	if _, err := NewRDP(WithConversion(Conversion(7))); err == nil {
		t.Error("unknown conversion: want an error")
	}
	a, err := NewRDP(WithOrders(3, 2, 3, 8))
	if err != nil {
		t.Fatal(err)
	}
	if o := a.Orders(); len(o) != 3 || o[0] != 2 || o[2] != 8 {
		t.Errorf("orders = %v, want sorted and de-duplicated", o)
	}
	for _, s := range []string{"improved", "bbghs", "standard", "Mironov"} {
		if _, err := ParseConversion(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseConversion("rdp"); err == nil {
		t.Error("ParseConversion(rdp): want an error")
	}
	if ConversionImproved.String() != "improved" || ConversionStandard.String() != "standard" {
		t.Error("Conversion.String")
	}
	o := DefaultOrders()
	if len(o) != 209 || o[0] != 1.01 || o[len(o)-1] != 131073 {
		t.Errorf("default orders: %d, %v … %v", len(o), o[0], o[len(o)-1])
	}
	for i := 1; i < len(o); i++ {
		if o[i] <= o[i-1] || (o[i-1] >= 1.1 && (o[i]-1)/(o[i-1]-1) > 1.125+1e-12) {
			t.Errorf("default orders not increasing or too sparse at %v, %v", o[i-1], o[i])
		}
	}
	for k := 2; k <= 24; k++ {
		if !containsFloat(o, float64(k)) {
			t.Errorf("default orders lack the integer %d", k)
		}
	}
	// Conversion at one order.
	assertRel(t, "standard", ConversionStandard.Epsilon(0.5, 5, 1e-5), 0.5+math.Log(1e5)/4, 1e-15)
	assertRel(t, "improved", ConversionImproved.Epsilon(0.5, 5, 1e-5),
		0.5+math.Log(4.0/5)-(math.Log(1e-5)+math.Log(5))/4, 1e-15)
	if ConversionImproved.Epsilon(0.5, 5, 1e-5) >= ConversionStandard.Epsilon(0.5, 5, 1e-5) {
		t.Error("improved conversion must be tighter")
	}
	if !math.IsNaN(ConversionStandard.Epsilon(0.5, 1, 1e-5)) || !math.IsNaN(ConversionStandard.Epsilon(-1, 2, 1e-5)) {
		t.Error("Conversion.Epsilon must be NaN on invalid input")
	}
}

func containsFloat(xs []float64, x float64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
