package dp

import (
	"math"
	"testing"
)

// With one occurrence and Change 1 the bound is the joint-convexity bound
// of the Poisson-subsampled Gaussian; at rate 1 it is the Gaussian
// mechanism of sensitivity Change (multiplier σ/Change).
func TestPoissonGroupGaussianClosedForms(t *testing.T) {
	for _, alpha := range []float64{1.5, 2, 8, 64} {
		for _, q := range []float64{1e-3, 0.05, 0.5} {
			for _, s := range []float64{0.8, 2, 10} {
				g, err := oldGroup(q, 1, s, 1, 1).StepRDP(alpha)
				if err != nil {
					t.Fatal(err)
				}
				want := math.Log1p(q*math.Expm1(alpha*(alpha-1)/(2*s*s))) / (alpha - 1)
				if math.Abs(g-want) > 1e-12*want {
					t.Errorf("α %g q %g σ %g: γ %v, want %v", alpha, q, s, g, want)
				}
				// The tight sampled-Gaussian RDP is never above it.
				if tight := SubsampledGaussianRDP(q, s, alpha); tight > g*(1+1e-9) {
					t.Errorf("α %g q %g σ %g: sampled Gaussian RDP %v above the joint-convexity bound %v", alpha, q, s, tight, g)
				}
			}
		}
		for _, r := range []int{1, 3, 71} {
			g, err := oldGroup(1, r, 1.7, 2, 1).StepRDP(alpha)
			if err != nil {
				t.Fatal(err)
			}
			if want := alpha * 4 / (2 * 1.7 * 1.7); math.Abs(g-want) > 1e-9*want {
				t.Errorf("rate 1, R %d, α %g: γ %v, want the Gaussian's %v", r, alpha, g, want)
			}
		}
	}
}

// group is an Occurrences over a Poisson-sampled Gaussian stated in the
// terms of the PoissonGroupGaussian it replaced: σ = noise std / (R·C),
// so z = σ/Change.
type group struct {
	occ   Occurrences
	Steps int
}

func oldGroup(q float64, r int, sigma, change float64, steps int) group {
	return group{Occurrences{R: r, Change: change, Event: Poisson{Rate: q, Event: GaussianEvent{Multiplier: sigma / change, Count: 1}}}, steps}
}

func (g group) StepRDP(alpha float64) (float64, error) { return GroupStepRDP(g.occ, alpha) }
func (g group) NoiseStd(clip float64) float64 {
	return OccurrencesNoiseStd(g.occ.Event.(Poisson).Event.(GaussianEvent).Multiplier, g.occ.R, g.occ.Change, clip)
}
func (g group) Event() (Event, error) {
	return Composed{Count: g.Steps, Event: g.occ}, g.occ.Validate()
}
func (g group) Step() (Event, error) { return g.occ, g.occ.Validate() }

// renyi1D computes D_α(P‖Q) numerically for two mixtures of 1-D Gaussians
// N(m, s²) with weights w, on a fine grid.
func renyi1D(alpha, s float64, pm, pw, qm, qw []float64) float64 {
	dens := func(x float64, m, w []float64) float64 {
		v := 0.0
		for i := range m {
			d := (x - m[i]) / s
			v += w[i] * math.Exp(-d*d/2) / (s * math.Sqrt(2*math.Pi))
		}
		return v
	}
	lo, hi := -12*s-10, 12*s+10
	n := 200000
	h := (hi - lo) / float64(n)
	sum := 0.0
	for k := 0; k <= n; k++ {
		x := lo + float64(k)*h
		p, q := dens(x, pm, pw), dens(x, qm, qw)
		if p == 0 {
			continue
		}
		sum += math.Exp(alpha*math.Log(p)+(1-alpha)*math.Log(q)) * h
	}
	return math.Log(sum) / (alpha - 1)
}

// The bound holds for the worst 1-D case of two occurrences: the unit's own
// example (+C on one side, absent on the other) and an example it turns
// from +C to −C, each sampled independently with probability q. The exact
// divergence, in both directions, stays below γ(α). (It is far below: the
// joint-convexity bound is linear in q where the truth is near q².)
func TestPoissonGroupGaussianBoundsExactDivergence(t *testing.T) {
	const c = 1.0
	for _, q := range []float64{0.1, 0.5} {
		for _, sigma := range []float64{1, 2} {
			pg := oldGroup(q, 2, sigma, 2, 1)
			s := pg.NoiseStd(c)
			// sampling (own, other): P's sum own·C + other·C, Q's other·(−C).
			var pm, pw, qm, qw []float64
			for _, a := range []int{0, 1} {
				for _, b := range []int{0, 1} {
					w := math.Pow(q, float64(a+b)) * math.Pow(1-q, float64(2-a-b))
					pm, pw = append(pm, float64(a)*c+float64(b)*c), append(pw, w)
					qm, qw = append(qm, -float64(b)*c), append(qw, w)
				}
			}
			for _, alpha := range []float64{2, 4, 8} {
				bound, err := pg.StepRDP(alpha)
				if err != nil {
					t.Fatal(err)
				}
				d1 := renyi1D(alpha, s, pm, pw, qm, qw)
				d2 := renyi1D(alpha, s, qm, qw, pm, pw)
				if d1 > bound*(1+1e-6) || d2 > bound*(1+1e-6) {
					t.Errorf("q %g σ %g α %g: exact divergences %v, %v above the bound %v", q, sigma, alpha, d1, d2, bound)
				}
			}
		}
	}
}

// One-step records add up to the plan's event, and one step more fails the
// check; the accountant gives T one-step events the ε of the T-step event.
func TestPoissonGroupGaussianLedger(t *testing.T) {
	pg := oldGroup(0.05, 3, 4, 2, 40)
	ev, err := pg.Event()
	if err != nil {
		t.Fatal(err)
	}
	step, err := pg.Step()
	if err != nil {
		t.Fatal(err)
	}
	plan := &Plan{Level: "node", Unit: "node", Epsilon: 100, Delta: 1e-5, Accountant: "rdp",
		Releases: []Planned{{Name: "dpsgd", What: "DP-SGD", Event: ev, Kind: "dp-sgd"}}}
	l := NewLedger()
	steps := make([]Event, 0, pg.Steps)
	for range pg.Steps {
		l.Record("dpsgd", step)
		steps = append(steps, step)
	}
	rep, err := plan.Report(l)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := EpsilonOf("rdp", []Event{ev}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	each, err := EpsilonOf("rdp", steps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if *rep.Epsilon != whole || math.Abs(each-whole) > 1e-12*whole || rep.Uses[0].Kind != "dp-sgd" {
		t.Fatalf("report ε %v, one event %v, %d one-step events %v; use %+v", *rep.Epsilon, whole, pg.Steps, each, rep.Uses[0])
	}
	l.Record("dpsgd", step)
	if _, err := plan.Report(l); err == nil {
		t.Fatal("one step more than planned passed the check")
	}
}

// A subsampled plan states the amplified ε of its releases composed at
// δ/q, for the whole and for each use; Proven gives the same ε whatever
// the plan's target.
func TestPlanSubsampleAmplifies(t *testing.T) {
	rel := []Planned{{Name: "a", What: "a", Event: GaussianEvent{Multiplier: 4, Count: 3}},
		{Name: "b", What: "b", Event: GaussianEvent{Multiplier: 8, Count: 1}}}
	plan := &Plan{Level: "node", Unit: "node", Epsilon: 1, Delta: 1e-4, Accountant: "rdp", Releases: rel, SubsampleRate: 0.1}
	inner, err := EpsilonOf("rdp", []Event{rel[0].Event, rel[1].Event}, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Log1p(0.1 * math.Expm1(inner))
	if want > 1 {
		t.Fatalf("test set-up: amplified ε %v above the target", want)
	}
	rep, err := plan.Report(plan.AsPlanned())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(*rep.Epsilon-want) > 1e-12 || rep.Delta != 1e-4 {
		t.Fatalf("report ε %v δ %v, want %v at 1e-4 (inner ε %v at 1e-3)", *rep.Epsilon, rep.Delta, want, inner)
	}
	a, _ := EpsilonOf("rdp", []Event{rel[0].Event}, 1e-3)
	if got := *rep.Uses[0].Epsilon; math.Abs(got-math.Log1p(0.1*math.Expm1(a))) > 1e-12 {
		t.Fatalf("use ε %v, want the amplified %v", got, math.Log1p(0.1*math.Expm1(a)))
	}
	plan.Epsilon = 0.01
	if _, err := plan.Report(plan.AsPlanned()); err == nil {
		t.Fatal("a plan above its target passed")
	}
	if p, err := plan.Proven(); err != nil || math.Abs(p-want) > 1e-12 || plan.Epsilon != 0.01 {
		t.Fatalf("Proven %v, %v (target now %v), want %v", p, err, plan.Epsilon, want)
	}
}
