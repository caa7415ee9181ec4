package dp

import (
	"math"
	"testing"
)

// gauss is the RDP curve of a Gaussian mechanism of noise multiplier 2:
// α/(2·2²) = α/8.
func gauss(alpha float64) float64 { return alpha / 8 }

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// TestTunedRDPNegBin checks Theorem 2 with η = 1, γ = 0.5 (geometric,
// E[K] = 2) on the orders 2, 3, 4, 8, worked by hand: the λ̂ term
// (1−1/λ̂)λ̂/8 + ln 2/λ̂ is smallest at λ̂ = 2 (1/8 + ln2/2), so
// ε'(λ) = λ/8 + 2(1/8 + ln2/2) + ln2/(λ−1), then made non-decreasing.
func TestTunedRDPNegBin(t *testing.T) {
	orders := []float64{2, 3, 4, 8}
	got, err := TunedRDP(gauss, Candidates{Kind: "negbin", Eta: 1, Gamma: 0.5}, orders, ConversionStandard)
	if err != nil {
		t.Fatal(err)
	}
	ln2 := math.Ln2
	c := 2 * (0.125 + ln2/2)
	raw := []float64{0.25 + c + ln2, 0.375 + c + ln2/2, 0.5 + c + ln2/3, 1 + c + ln2/7}
	want := []float64{raw[1], raw[1], raw[2], raw[3]} // raw[0] > raw[1]
	for i := range orders {
		near(t, "negbin ε'", got[i], want[i])
	}
	near(t, "ε'(3)", got[1], 1.66472077084) // 0.375 + 0.25 + 1.5 ln 2
}

// TestTunedRDPPoisson checks Theorem 6 with μ = 2 on the orders 2, 3, 4,
// 8 and the standard conversion, ln δ̂ = min_b (b−1)(b/8 − ε̂), ε̂ =
// ln(1 + 1/(λ−1)), worked by hand.
func TestTunedRDPPoisson(t *testing.T) {
	orders := []float64{2, 3, 4, 8}
	got, err := TunedRDP(gauss, Candidates{Kind: "poisson", Mu: 2}, orders, ConversionStandard)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]float64, len(orders))
	for i, l := range orders {
		eh := math.Log(1 + 1/(l-1))
		ld := math.Min(0, math.Min(math.Min(1*(0.25-eh), 2*(0.375-eh)), math.Min(3*(0.5-eh), 7*(1-eh))))
		raw[i] = l/8 + 2*math.Exp(ld) + math.Log(2)/(l-1)
	}
	// λ = 2: ε̂ = ln 2, ln δ̂ = 2(0.375 − ln 2) → 0.25 + 2·0.529259 + ln 2.
	near(t, "raw ε'(2)", raw[0], 0.25+2*math.Exp(2*(0.375-math.Ln2))+math.Ln2)
	for i := range orders {
		want := raw[i]
		for j := i; j < len(orders); j++ {
			want = math.Min(want, raw[j])
		}
		near(t, "poisson ε'", got[i], want)
	}
}

func TestTunedEpsilonProperties(t *testing.T) {
	const delta = 1e-5
	one, err := CurveEpsilon(gauss, delta, ConversionImproved)
	if err != nil {
		t.Fatal(err)
	}
	prev := one
	for _, mu := range []float64{1, 2, 4, 16, 64} {
		e, _, err := TunedEpsilon(gauss, Candidates{Kind: "poisson", Mu: mu}, delta, ConversionImproved)
		if err != nil {
			t.Fatal(err)
		}
		if !(e > prev) {
			t.Errorf("poisson μ=%g: tuned ε %g, want above %g", mu, e, prev)
		}
		prev = e
	}
	e, _, err := TunedEpsilon(gauss, Candidates{Kind: "negbin", Eta: 1, Gamma: 0.5}, delta, ConversionImproved)
	if err != nil || !(e > one) {
		t.Errorf("negbin tuned ε %g (err %v), want above one candidate's %g", e, err, one)
	}
}

func TestCandidatesDraw(t *testing.T) {
	for _, c := range []Candidates{{Kind: "poisson", Mu: 3}, {Kind: "negbin", Eta: 1, Gamma: 0.25}, {Kind: "negbin", Eta: 0, Gamma: 0.2}, {Kind: "negbin", Eta: -0.5, Gamma: 0.3}} {
		total := 0.0
		for k := 0; k < 2000; k++ {
			total += c.pmf(k)
		}
		near(t, c.String()+" pmf mass", total, 1)
		src := NewSource(7)
		sum := 0.0
		const n = 20000
		for range n {
			k := c.Draw(src)
			if c.Kind == "negbin" && k < 1 {
				t.Fatalf("%s drew %d", c, k)
			}
			sum += float64(k)
		}
		if m := sum / n; math.Abs(m-c.Mean()) > 0.05*c.Mean() {
			t.Errorf("%s: sample mean %g, want about %g", c, m, c.Mean())
		}
	}
	if err := (Candidates{Kind: "negbin", Eta: 1, Gamma: 1}).Validate(); err == nil {
		t.Error("γ = 1 accepted")
	}
}

func TestPlanCurve(t *testing.T) {
	p := &Plan{Epsilon: 8, Releases: []Planned{{Name: "g", Event: GaussianEvent{Multiplier: 2, Count: 1}}, {Name: "p", Event: PureEvent{Epsilon: 0.5, Count: 1}}}}
	f, err := PlanCurve(p)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "curve(3)", f(3), 3.0/8+math.Min(0.5, 3*0.125))
	if _, err := PlanCurve(&Plan{Epsilon: 1, Releases: []Planned{{Name: "o", Epsilon: 1}}}); err == nil {
		t.Error("a release outside the accountant has a curve")
	}
}

// TestAuditTunedGaussian audits Papernot–Steinke tuning end to end on a
// mechanism-level toy: each candidate is a Gaussian release of a count of
// sensitivity 1 whose value is also its score, K ~ Poisson(μ) candidates
// run, and only the best (the largest) is released (none when K = 0). The
// best of K shifts with the count while its spread shrinks, so the release
// leaks more than one candidate: the audit must refute the release being
// (1/σ)-GDP, what one candidate is (an accountant that ignored the tuning
// would claim that), and its ε lower bound must stay below TunedEpsilon's
// claim.
func TestAuditTunedGaussian(t *testing.T) {
	const (
		sigma  = 2.0
		mu     = 10.0
		delta  = 1e-5
		trials = 20000
	)
	c := Candidates{Kind: "poisson", Mu: mu}
	base := func(a float64) float64 { return GaussianRDP(a, sigma) }
	claim, _, err := TunedEpsilon(base, c, delta, ConversionImproved)
	if err != nil {
		t.Fatal(err)
	}
	release := func(src *Source, count float64) []float64 {
		best := -1e9 // ⊥: no candidate ran
		for k := c.Draw(src); k > 0; k-- {
			best = math.Max(best, count+sigma*src.Normal())
		}
		return []float64{best}
	}
	g, gp := make([][]float64, trials), make([][]float64, trials)
	src := NewSource(2026)
	for i := range g {
		g[i], gp[i] = release(src, 1), release(src, 0)
	}
	res, err := Audit(g, gp, AuditConfig{Delta: delta})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ε_lb %.3f (tuned claim %.3f); μ_lb %.3f (one candidate: μ = %.3f)", res.EpsilonLB, claim, res.MuLB, 1/sigma)
	if !(res.EpsilonLB <= claim) {
		t.Errorf("audit refutes the tuned claim: ε_lb %.3f > %.3f", res.EpsilonLB, claim)
	}
	if !(res.MuLB > 1/sigma) {
		t.Errorf("the audit does not see the cost of tuning: μ_lb %.3f ≤ one candidate's μ %.3f", res.MuLB, 1/sigma)
	}
}
