package dp

// Adversarial tests from the independent privacy audit of package dp. Each
// test says what failure it guards against. The reference values here are
// computed independently of the code under test: by direct numerical
// integration of the densities (not by the series the package uses), by
// closed forms written out again in the test, or by bounds that hold for
// every valid implementation.

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// auditSimpsonLog integrates exp(logf) over [lo, hi] with composite Simpson
// (n even) in log space and returns the log of the integral.
func auditSimpsonLog(logf func(float64) float64, lo, hi float64, n int) float64 {
	h := (hi - lo) / float64(n)
	vals := make([]float64, n+1)
	m := math.Inf(-1)
	for i := range vals {
		vals[i] = logf(lo + float64(i)*h)
		m = math.Max(m, vals[i])
	}
	var s float64
	for i, v := range vals {
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		s += w * math.Exp(v-m)
	}
	return m + math.Log(s*h/3)
}

// auditSGMQuadrature returns the Rényi divergences of order alpha between
// μ0 = N(0, z²) and μ1 = (1−q)N(0, z²) + qN(1, z²), in both directions,
// by numerical integration of the likelihood ratio L(x) = 1−q+q·e^{(2x−1)/(2z²)}:
// remove = D_α(μ1‖μ0) = ln E_μ0[L^α]/(α−1), add = D_α(μ0‖μ1) = ln E_μ0[L^{1−α}]/(α−1).
func auditSGMQuadrature(q, z, alpha float64) (remove, add float64) {
	logL := func(x float64) float64 {
		return logAdd(math.Log1p(-q), math.Log(q)+(2*x-1)/(2*z*z))
	}
	logPhi := func(x float64) float64 { return -x*x/(2*z*z) - math.Log(z) - 0.5*math.Log(2*math.Pi) }
	lo, hi := -40*z-2, alpha+40*z+2
	const n = 12000
	remove = auditSimpsonLog(func(x float64) float64 { return logPhi(x) + alpha*logL(x) }, lo, hi, n) / (alpha - 1)
	add = auditSimpsonLog(func(x float64) float64 { return logPhi(x) + (1-alpha)*logL(x) }, lo, hi, n) / (alpha - 1)
	return remove, add
}

// TestAuditSGMFractionalOrdersVsQuadrature guards against an optimistic
// fractional-order sampled-Gaussian RDP: the erfc series (stopping rule, tail
// allowance, split point z0, signs of the generalised binomial coefficients)
// is checked against direct integration of the densities, in BOTH neighbour
// directions. The package, like Opacus/TF-Privacy/dp_accounting, evaluates
// only D_α(μ1‖μ0); add/remove DP needs the max of the two, so this test also
// checks that the other direction is never larger on the grid it covers.
func TestAuditSGMFractionalOrdersVsQuadrature(t *testing.T) {
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9} {
		for _, z := range []float64{0.5, 1, 2, 5} {
			for _, alpha := range []float64{1.05, 1.5, 2.5, 4.75, 10.5, 17.25} {
				got := SubsampledGaussianRDP(q, z, alpha)
				remove, add := auditSGMQuadrature(q, z, alpha)
				ref := math.Max(remove, add)
				if ref < 1e-6 {
					continue // below the quadrature's resolution
				}
				if !(got >= ref*(1-1e-6)) {
					t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %.10g below the integrated divergence %.10g (remove %.10g, add %.10g)",
						q, z, alpha, got, ref, remove, add)
				}
				// Not a privacy property, but a garbage-high value would
				// hide a broken series behind "conservative".
				if got > remove*(1+1e-5) {
					t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %.10g far above the integrated %.10g", q, z, alpha, got, remove)
				}
				if add > remove*(1+1e-6) {
					t.Errorf("q=%g z=%g α=%g: D_α(μ0‖μ1) = %.10g exceeds D_α(μ1‖μ0) = %.10g: the one-direction formula under-reports",
						q, z, alpha, add, remove)
				}
			}
		}
	}
}

// TestAuditSGMEdgeCases guards the edge cases of the sampled-Gaussian RDP:
// q = 1 must be the plain Gaussian at every order; q → 0 and huge z must give
// small non-negative finite values; tiny z and huge α must give +Inf or a
// value above a bound every correct implementation satisfies — never NaN,
// never a smaller number. The bound: A_α = E_μ0[(1−q+qL)^α] ≥ max(1,
// q^α E_μ0[L^α]) = max(1, q^α e^{α(α−1)/(2z²)}), for every real α > 1.
func TestAuditSGMEdgeCases(t *testing.T) {
	lower := func(q, z, alpha float64) float64 {
		return math.Max(0, alpha*math.Log(q)/(alpha-1)+alpha/(2*z*z))
	}
	orders := []float64{1.001, 1.01, 1.5, 2, 2.5, 3, 7.75, 32, 63.5, 256, 1000.5, 1024}
	for _, alpha := range orders {
		for _, z := range []float64{0.05, 0.7, 3, 1e3} {
			// q = 1: exactly α/(2z²), integer or fractional order.
			if got, want := SubsampledGaussianRDP(1, z, alpha), alpha/(2*z*z); got != want {
				t.Errorf("q=1, z=%g, α=%g: %v, want α/(2z²) = %v", z, alpha, got, want)
			}
		}
		for _, q := range []float64{5e-324, 1e-300, 1e-12, 1e-3, 0.3, 0.5, 1 - 1e-9} {
			for _, z := range []float64{1e-6, 0.01, 0.1, 0.5, 1, 10, 1e4} {
				v := SubsampledGaussianRDP(q, z, alpha)
				if math.IsNaN(v) || v < 0 {
					t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %v: want a value ≥ 0 or +Inf", q, z, alpha, v)
					continue
				}
				if lb := lower(q, z, alpha); v < lb*(1-1e-12) {
					t.Errorf("SGM RDP(q=%g, z=%g, α=%g) = %.12g below the lower bound %.12g", q, z, alpha, v, lb)
				}
			}
		}
	}
	// q → 0 goes to 0; huge z goes to 0 (and stays finite: a conservative
	// +Inf here would silently waste the whole order).
	for _, alpha := range []float64{1.5, 2, 10.5, 64} {
		if v := SubsampledGaussianRDP(1e-300, 1, alpha); v > 1e-12 {
			t.Errorf("q=1e-300, α=%g: %g, want ≈ 0", alpha, v)
		}
		if v := SubsampledGaussianRDP(0.01, 1e6, alpha); v > 1e-9 || math.IsInf(v, 1) {
			t.Errorf("z=1e6, α=%g: %g, want ≈ 0", alpha, v)
		}
	}
	// Tiny z: no noise to speak of, so the cost is huge (or +Inf); 1/(2z²)
	// overflowing must give +Inf, not NaN or 0.
	for _, alpha := range []float64{1.5, 2, 1024} {
		if v := SubsampledGaussianRDP(0.01, 1e-160, alpha); !math.IsInf(v, 1) {
			t.Errorf("z=1e-160, α=%g: %v, want +Inf", alpha, v)
		}
	}
	for _, alpha := range []float64{1.5, 2, 2.5, 10} {
		if v := SubsampledGaussianRDP(0.01, 1e-3, alpha); v < 1e5 {
			t.Errorf("z=1e-3, α=%g: %g, want ≥ 1e5", alpha, v)
		}
	}
	// Very large orders beyond the integer cut-off go through the series:
	// still never below the bound.
	for _, alpha := range []float64{65536, 65537, 1e5 + 0.5} {
		for _, z := range []float64{0.5, 30} {
			v := SubsampledGaussianRDP(0.3, z, alpha)
			if math.IsNaN(v) || v < lower(0.3, z, alpha)*(1-1e-12) || v < SubsampledGaussianRDP(0.3, z, 1024)*(1-1e-12) {
				t.Errorf("α=%g z=%g: %v below the bound %v or the value at α=1024", alpha, z, v, lower(0.3, z, alpha))
			}
		}
	}
}

// TestAuditSGMMonotoneAcrossIntegers guards against the fractional series
// and the integer sum disagreeing in the unsafe direction: Rényi divergence is
// non-decreasing in the order, so the value at α ∈ (k, k+1) may not be below
// the (exact, finite-sum) value at k, beyond rounding (absolute 1e-15: both
// are ln of a number within rounding of 1 when q or 1/z is tiny).
func TestAuditSGMMonotoneAcrossIntegers(t *testing.T) {
	for _, q := range []float64{1e-6, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-9} {
		for _, z := range []float64{1e-3, 0.01, 0.1, 0.3, 1, 10, 1000} {
			for _, k := range []int{2, 3, 10, 100} {
				atK := SubsampledGaussianRDP(q, z, float64(k))
				for _, frac := range []float64{1e-9, 0.25, 0.5, 0.999999999} {
					v := SubsampledGaussianRDP(q, z, float64(k)+frac)
					if math.IsNaN(v) || v < atK*(1-1e-9)-1e-15 {
						t.Errorf("q=%g z=%g: RDP(%g) = %.12g below RDP(%d) = %.12g", q, z, float64(k)+frac, v, k, atK)
					}
				}
			}
		}
	}
}

// auditEvents is a ledger that mixes every event type, with fractional-order
// behaviour that matters (pure ε with amplification, GDP, general curve).
func auditEvents() []Event {
	return []Event{
		GaussianEvent{Multiplier: 1.3, Count: 4},
		PoissonGaussianEvent{Rate: 0.02, Multiplier: 1.1, Steps: 500},
		GDPEvent{Mu: 0.3},
		Composed{Count: 3, Event: Poisson{Rate: 0.1, Event: PureEvent{Epsilon: 0.2, Count: 1}}},
		PureEvent{Epsilon: 0.05, Count: 2},
		RDPEvent{Name: "quadratic", Curve: func(a float64) float64 { return 0.001*a + 0.0002*a*a }},
		ComposedEvent{Events: []Event{
			GaussianEvent{Multiplier: 5, Count: 1},
			PoissonGaussianEvent{Rate: 0.02, Multiplier: 1.1, Steps: 100},
		}},
	}
}

// auditEventsRDP is the total RDP of auditEvents at order a, written out
// again from the per-event formulas (not through rdpTerms).
func auditEventsRDP(a float64) float64 {
	amp := math.Log(1 + 0.1*(math.Exp(0.2)-1))
	return 4*a/(2*1.3*1.3) +
		600*SubsampledGaussianRDP(0.02, 1.1, a) +
		a*0.09/2 +
		3*math.Min(amp, a*amp*amp/2) +
		2*math.Min(0.05, a*0.05*0.05/2) +
		0.001*a + 0.0002*a*a +
		a/(2*25)
}

func auditConvert(conv Conversion, rdp, a, delta float64) float64 {
	if conv == ConversionStandard {
		return rdp + math.Log(1/delta)/(a-1)
	}
	return math.Max(0, rdp+math.Log((a-1)/a)-(math.Log(delta)+math.Log(a))/(a-1))
}

// TestAuditRDPReportedOrderIsSelfConsistent guards against the refinement
// (or the grid) using a curve other than the one composed: the reported ε
// must equal the conversion, written out here, of the independently
// recomputed total RDP at the reported order — integer or fractional — for
// every event type at once. It also checks refinement only ever lowers ε
// against the grid-only accountant, and that splitting a ledger over several
// Compose calls changes nothing.
func TestAuditRDPReportedOrderIsSelfConsistent(t *testing.T) {
	for _, conv := range []Conversion{ConversionImproved, ConversionStandard} {
		for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
			ref, _ := NewRDP(WithConversion(conv))
			grid, _ := NewRDP(WithConversion(conv), WithoutRefinement())
			for _, e := range auditEvents() {
				if err := ref.Compose(e); err != nil {
					t.Fatal(err)
				}
				if err := grid.Compose(e); err != nil {
					t.Fatal(err)
				}
			}
			eps, order, err := ref.EpsilonAndOrder(delta)
			if err != nil {
				t.Fatal(err)
			}
			want := auditConvert(conv, auditEventsRDP(order), order, delta)
			assertRel(t, "ε at the reported order ("+conv.String()+")", eps, want, 1e-12)
			assertRel(t, "RDPAt(reported order)", ref.RDPAt(order), auditEventsRDP(order), 1e-12)
			epsGrid, orderGrid, _ := grid.EpsilonAndOrder(delta)
			assertRel(t, "grid ε at the grid order", epsGrid, auditConvert(conv, auditEventsRDP(orderGrid), orderGrid, delta), 1e-12)
			if eps > epsGrid {
				t.Errorf("%v δ=%g: refinement raised ε from %v to %v", conv, delta, epsGrid, eps)
			}
			// The same ledger as one ComposedEvent.
			one, _ := NewRDP(WithConversion(conv))
			if err := one.Compose(ComposedEvent{Events: auditEvents()}); err != nil {
				t.Fatal(err)
			}
			e1, _ := one.Epsilon(delta)
			assertRel(t, "one ComposedEvent vs separate Compose calls", e1, eps, 1e-12)
			// Delta at the reported ε never exceeds δ.
			if d, _ := ref.Delta(eps); d > delta*(1+1e-9) {
				t.Errorf("%v: Delta(Epsilon(%g)) = %g", conv, delta, d)
			}
		}
	}
}

// TestAuditRDPAtFractionalOrdersPerEvent guards the soundness of refinement
// for every event type: between grid points the accountant evaluates
// rdpTerms.at, which must be the valid bound for that event at ANY α > 1 —
// Count·α/(2z²), α·μ²/2, Count·min(ε', α·ε'²/2) with ε' amplified, Steps·SGM,
// and the user's curve — and not, say, a grid interpolation.
func TestAuditRDPAtFractionalOrdersPerEvent(t *testing.T) {
	amp := math.Log1p(0.25 * math.Expm1(1.5))
	curve := func(a float64) float64 { return 0.01 * a * math.Sqrt(a) }
	for _, tc := range []struct {
		e    Event
		want func(a float64) float64
	}{
		{GaussianEvent{Multiplier: 0.8, Count: 3}, func(a float64) float64 { return 3 * a / (2 * 0.64) }},
		{GDPEvent{Mu: 0.7}, func(a float64) float64 { return a * 0.49 / 2 }},
		{Composed{Count: 2, Event: Poisson{Rate: 0.25, Event: PureEvent{Epsilon: 1.5, Count: 1}}}, func(a float64) float64 { return 2 * math.Min(amp, a*amp*amp/2) }},
		{Composed{Count: 2, Event: Poisson{Rate: 1, Event: PureEvent{Epsilon: 1.5, Count: 1}}}, func(a float64) float64 { return 2 * math.Min(1.5, a*1.5*1.5/2) }},
		{PoissonGaussianEvent{Rate: 0.05, Multiplier: 0.9, Steps: 7}, func(a float64) float64 { return 7 * SubsampledGaussianRDP(0.05, 0.9, a) }},
		{PoissonGaussianEvent{Rate: 1, Multiplier: 0.9, Steps: 7}, func(a float64) float64 { return 7 * a / (2 * 0.81) }},
		{RDPEvent{Name: "a^1.5", Curve: curve}, curve},
	} {
		acct, _ := NewRDP()
		if err := acct.Compose(tc.e); err != nil {
			t.Fatal(err)
		}
		for _, a := range []float64{1.003, 1.37, 2.5, 3.14159, 11.9, 77.7, 1000.5} {
			assertRel(t, tc.e.String()+" at α="+ftoa(a), acct.RDPAt(a), tc.want(a), 1e-13)
		}
	}
}

// TestAuditRDPEventInvalidOffGrid guards the "never optimistic" rule for
// general curves: a curve that is NaN, negative or +Inf between the grid
// orders must not let the refinement report an order there, and ε must
// then equal the grid-only value.
func TestAuditRDPEventInvalidOffGrid(t *testing.T) {
	for _, off := range []float64{math.NaN(), -1, math.Inf(1)} {
		curve := func(a float64) float64 {
			if a != math.Trunc(a) {
				return off
			}
			return 0.05 * a
		}
		orders := integerOrders(2, 64)
		r, _ := NewRDP(WithOrders(orders...))
		g, _ := NewRDP(WithOrders(orders...), WithoutRefinement())
		for _, a := range []*RDP{r, g} {
			if err := a.Compose(RDPEvent{Name: "integers only", Curve: curve}); err != nil {
				t.Fatal(err)
			}
		}
		eps, order, _ := r.EpsilonAndOrder(1e-6)
		want, _ := g.Epsilon(1e-6)
		if order != math.Trunc(order) || eps != want {
			t.Errorf("off-grid value %v: ε=%v at order %v; want the grid value %v at an integer order", off, eps, order, want)
		}
		if d, _ := r.Delta(1); math.IsNaN(d) {
			t.Errorf("off-grid value %v: Delta is NaN", off)
		}
	}
}

// TestAuditConversionFormulas guards the two RDP → (ε, δ) conversions
// against transcription errors (a wrong sign on ln α, ln((α−1)/α) instead of
// its negative, /α instead of /(α−1)): they are compared, at many points,
// with the formulas of Mironov (2017, Prop. 3) and Balle et al. (2020, Thm
// 21) written out independently; the improved one is never above the
// standard one; and Conversion.logDelta inverts Conversion.Epsilon.
func TestAuditConversionFormulas(t *testing.T) {
	for _, a := range []float64{1.0001, 1.01, 1.5, 2, 7.3, 64, 1024, 1e6} {
		// logDelta multiplies by α−1: at α = 1e6 the round trip loses
		// ~α·ulp(ε) in ln δ, so it gets a matching tolerance.
		tol := 1e-8 + 8*a*0x1p-52*1e4
		for _, rdp := range []float64{0, 1e-9, 0.01, 0.7, 12, 1e4} {
			for _, delta := range []float64{1e-300, 1e-12, 1e-5, 0.1, 0.9} {
				std := rdp + math.Log(1/delta)/(a-1)
				imp := math.Max(0, rdp+math.Log((a-1)/a)-(math.Log(delta)+math.Log(a))/(a-1))
				assertRel(t, "standard", ConversionStandard.Epsilon(rdp, a, delta), std, 1e-13)
				if got := ConversionImproved.Epsilon(rdp, a, delta); math.Abs(got-imp) > 1e-12*math.Max(1, math.Abs(imp)) {
					t.Errorf("improved(ρ=%g, α=%g, δ=%g) = %.15g, want %.15g", rdp, a, delta, got, imp)
				}
				if ConversionImproved.Epsilon(rdp, a, delta) > ConversionStandard.Epsilon(rdp, a, delta) {
					t.Errorf("improved above standard at ρ=%g α=%g δ=%g", rdp, a, delta)
				}
				for _, c := range []Conversion{ConversionStandard, ConversionImproved} {
					e := c.Epsilon(rdp, a, delta)
					if e <= 0 || e > 1e6 {
						continue
					}
					back := math.Exp(c.logDelta(rdp, a, e))
					if math.Abs(math.Log(back/delta)) > tol {
						t.Errorf("%v: logDelta(Epsilon) at ρ=%g α=%g δ=%g gives %g", c, rdp, a, delta, back)
					}
				}
			}
		}
	}
	// Infinite RDP stays infinite; invalid inputs are NaN, never a number.
	for _, c := range []Conversion{ConversionStandard, ConversionImproved} {
		if !math.IsInf(c.Epsilon(math.Inf(1), 2, 1e-5), 1) {
			t.Errorf("%v: +Inf RDP must give +Inf", c)
		}
		for _, bad := range [][3]float64{{math.NaN(), 2, 1e-5}, {1, math.NaN(), 1e-5}, {1, 2, math.NaN()}, {1, 2, 0}, {1, 2, 1}, {1, 1, 1e-5}, {-1e-300, 2, 1e-5}} {
			if v := c.Epsilon(bad[0], bad[1], bad[2]); !math.IsNaN(v) {
				t.Errorf("%v.Epsilon%v = %v, want NaN", c, bad, v)
			}
		}
	}
	if v := Conversion(5).Epsilon(1, 2, 1e-5); !math.IsNaN(v) {
		t.Errorf("unknown conversion gave %v, want NaN", v)
	}
}

// TestAuditSGMAccountantMonotone guards the accountant against
// non-monotonicities that would let a caller get a smaller ε by asking for
// MORE privacy loss: ε decreases in the noise and
// increases in the number of steps and the sampling rate.
func TestAuditSGMAccountantMonotone(t *testing.T) {
	eps := func(q, z float64, steps int) float64 {
		a, _ := NewRDP()
		if err := a.Compose(PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}); err != nil {
			t.Fatal(err)
		}
		e, _ := a.Epsilon(1e-5)
		return e
	}
	qs := []float64{0.001, 0.01, 0.1}
	zs := []float64{0.6, 0.9, 1.3, 2, 4}
	steps := []int{1, 30, 1000}
	table := make(map[[3]int]float64)
	for i, q := range qs {
		for j, z := range zs {
			for k, s := range steps {
				table[[3]int{i, j, k}] = eps(q, z, s)
			}
		}
	}
	const slack = 1e-12
	for i := range qs {
		for j := range zs {
			for k := range steps {
				v := table[[3]int{i, j, k}]
				if math.IsNaN(v) || v < 0 {
					t.Fatalf("ε = %v", v)
				}
				if i > 0 && v < table[[3]int{i - 1, j, k}]*(1-slack) {
					t.Errorf("ε decreases in q at q=%g z=%g steps=%d", qs[i], zs[j], steps[k])
				}
				if j > 0 && v > table[[3]int{i, j - 1, k}]*(1+slack) {
					t.Errorf("ε increases in z at q=%g z=%g steps=%d", qs[i], zs[j], steps[k])
				}
				if k > 0 && v < table[[3]int{i, j, k - 1}]*(1-slack) {
					t.Errorf("ε decreases in steps at q=%g z=%g steps=%d", qs[i], zs[j], steps[k])
				}
			}
		}
	}
}

// TestAuditGDPDeltaVsHockeyStickIntegral guards the exact Gaussian δ(ε; μ)
// against a transcription error in Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2): it is
// compared with the hockey-stick divergence ∫ (p − e^ε q)₊ of N(μ,1) against
// N(0,1), integrated numerically (Balle & Wang 2018; Dong, Roth & Su 2019).
func TestAuditGDPDeltaVsHockeyStickIntegral(t *testing.T) {
	for _, tc := range [][2]float64{{0.5, 1}, {1, 3}, {2, 5}, {3, 10}, {0.2, 0.5}, {5, 20}, {1, 0}, {0.05, 0.1}} {
		mu, eps := tc[0], tc[1]
		// (p − e^ε q)(x) = φ(x−μ)·(1 − e^{ε − (μx − μ²/2)}), positive for
		// x > x* = ε/μ + μ/2.
		xs := eps/mu + mu/2
		logf := func(x float64) float64 {
			r := eps - (mu*x - mu*mu/2) // ≤ 0 on the range
			return -0.5*(x-mu)*(x-mu) - 0.5*math.Log(2*math.Pi) + math.Log(-math.Expm1(r))
		}
		want := math.Exp(auditSimpsonLog(logf, xs+1e-12, xs+mu+40, 200000))
		assertRel(t, "δ(ε="+ftoa(eps)+"; μ="+ftoa(mu)+")", GDPDelta(mu, eps), want, 1e-6)
	}
}

// auditNormalSurvival returns Φ(−t).
func auditNormalSurvival(t float64) float64 { return 0.5 * math.Erfc(t/math.Sqrt2) }

// TestAuditGDPEpsilonLargeMuRegression is the regression test for the
// cancellation bug fixed in logGDPDelta: for large μ, e^ε·Φ(−ε/μ − μ/2) was
// computed as exp(ε + ln Φ(·)), where ε and ln Φ(·) nearly cancel; the
// rounding error (a few ulps of ε) made the difference e^la − e^lb come out
// as 0 or too small, so the bisection reported ε BELOW the truth (μ = 1e10,
// δ = 1e-12: 4.99999993e19 instead of 5.00000000703e19; δ = 0.5 gave
// 4.99999992e19 instead of ≈ 5e19 − 1). Writing ε = μ²/2 + μt, the true δ is at least
// Φ(−t) − φ(t)/(t+μ) (Mills' ratio), which gives a lower bound on the true ε
// that holds whatever the numerics.
func TestAuditGDPEpsilonLargeMuRegression(t *testing.T) {
	for _, mu := range []float64{10, 1e4, 1e8, 1e10, 1e12} {
		for _, delta := range []float64{0.5, 1e-5, 1e-12} {
			eps, err := GDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			tt := (eps - mu*mu/2) / mu
			// Resolution of tt: a few ulps of ε, divided by μ.
			res := 4 * math.Nextafter(eps, math.Inf(1)) / mu * 0x1p-52
			tt += res
			lowerDelta := auditNormalSurvival(tt) - math.Exp(-tt*tt/2)/math.Sqrt(2*math.Pi)/(tt+mu)
			if lowerDelta > delta*(1+1e-6) {
				t.Errorf("μ=%g δ=%g: ε = %.17g (t = %.6g) is below the true ε: δ(ε) ≥ %.6g", mu, delta, eps, tt, lowerDelta)
			}
		}
	}
	// The same failure at the other end: μ so small that Φ(μ/2) and
	// Φ(−μ/2) round to the same number made δ(0) = 0, hence ε = 0 for any
	// δ, although δ(0; μ) ≈ 0.4μ > 1e-300.
	eps, err := GDPEpsilon(1e-17, 1e-300)
	if err != nil {
		t.Fatal(err)
	}
	if !(eps > 0) {
		t.Errorf("GDPEpsilon(1e-17, 1e-300) = %v, want > 0", eps)
	}
	if d := GDPDelta(1e-17, eps); d > 1e-300 {
		t.Errorf("δ(ε=%g; μ=1e-17) = %g above 1e-300", eps, d)
	}
	// δ(∞) = 0 (it was NaN, with no error, from GDP.Delta).
	if d := GDPDelta(1, math.Inf(1)); d != 0 {
		t.Errorf("GDPDelta(1, +Inf) = %v, want 0", d)
	}
	g := NewGDP()
	_ = g.Compose(GDPEvent{Mu: 2})
	if d, err := g.Delta(math.Inf(1)); err != nil || d != 0 {
		t.Errorf("GDP.Delta(+Inf) = %v, %v; want 0", d, err)
	}
}

// TestAuditGDPEpsilonNeverBelowRoot guards the root finder over a wide grid:
// the returned ε satisfies δ(ε) ≤ δ, and for every μ the exact ε lies
// below the RDP closed form μ²/2 + μ·sqrt(2 ln(1/δ)) (a valid upper bound)
// and above the numerics-free lower bound of the regression test below.
func TestAuditGDPEpsilonNeverBelowRoot(t *testing.T) {
	for _, mu := range []float64{1e-6, 1e-3, 0.05, 0.4, 1, 3, 10, 40, 300} {
		for _, delta := range []float64{1e-300, 1e-50, 1e-10, 1e-5, 0.01, 0.4} {
			eps, err := GDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(eps) || eps < 0 {
				t.Fatalf("μ=%g δ=%g: ε = %v", mu, delta, eps)
			}
			if d := GDPDelta(mu, eps); d > delta*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: δ(ε=%g) = %g above the target", mu, delta, eps, d)
			}
			if rdp := mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta)); eps > rdp*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: ε = %g above the RDP bound %g", mu, delta, eps, rdp)
			}
			// δ(ε) ≥ Φ(−t) − φ(t)/(t+μ) with ε = μ²/2 + μt: a numerics-free
			// check that ε is not below the root.
			tt := (eps - mu*mu/2) / mu
			if tt+mu > 0 {
				lb := auditNormalSurvival(tt) - math.Exp(-tt*tt/2)/math.Sqrt(2*math.Pi)/(tt+mu)
				if lb > delta*(1+1e-6) && eps > 0 {
					t.Errorf("μ=%g δ=%g: ε = %g is below the root (δ(ε) ≥ %g)", mu, delta, eps, lb)
				}
			}
		}
	}
}

// auditFakeAccountant is an Accountant that reports whatever eps says, to
// drive the calibration through broken accountants.
type auditFakeAccountant struct {
	eps    func() (float64, error)
	ledger []Event
}

func (a *auditFakeAccountant) Name() string                     { return "fake" }
func (a *auditFakeAccountant) Supports(Event) bool              { return true }
func (a *auditFakeAccountant) Compose(e Event) error            { a.ledger = append(a.ledger, e); return nil }
func (a *auditFakeAccountant) Epsilon(float64) (float64, error) { return a.eps() }
func (a *auditFakeAccountant) Ledger() []Event                  { return a.ledger }

// TestAuditCalibrationAdversarial guards the calibration contract — the
// returned noise is one whose ε was verified ≤ target, and an unreachable
// target or a failing accountant is an error, never a silently returned
// noise level — including when ε is not monotone in the noise (where a
// bisection that returned its midpoint or low end would overshoot).
func TestAuditCalibrationAdversarial(t *testing.T) {
	// Non-monotone ε(noise): a wiggly μ(n).
	wiggly := func(n float64) float64 { return (1 + 0.6*math.Sin(25*math.Log(n))) / n }
	events := func(n float64) []Event { return []Event{GDPEvent{Mu: wiggly(n)}} }
	for _, target := range []float64{0.3, 1, 4} {
		for _, newAcct := range []func() (Accountant, error){
			func() (Accountant, error) { return NewGDP(), nil },
			func() (Accountant, error) { return NewRDP() },
		} {
			n, err := calibrateWith(target, 1e-5, events, newAcct)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := newAcct()
			_ = a.Compose(events(n)[0])
			if e, _ := a.Epsilon(1e-5); !(e <= target) {
				t.Errorf("%s: non-monotone ε: noise %g gives ε %g above the target %g", a.Name(), n, e, target)
			}
		}
	}
	// Broken accountants: NaN, +Inf and errors must all end in an error.
	gauss := func(z float64) []Event { return []Event{GaussianEvent{Multiplier: z, Count: 1}} }
	boom := errors.New("dp: boom")
	for name, eps := range map[string]func() (float64, error){
		"NaN":   func() (float64, error) { return math.NaN(), nil },
		"+Inf":  func() (float64, error) { return math.Inf(1), nil },
		"error": func() (float64, error) { return 0.1, boom },
	} {
		z, err := calibrateWith(1, 1e-5, gauss, func() (Accountant, error) { return &auditFakeAccountant{eps: eps}, nil })
		if err == nil {
			t.Errorf("accountant returning %s: calibration returned z=%g without an error", name, z)
		}
	}
	// Events that become invalid at some noise probed by the search (here
	// z ≥ 3, reached while widening the bracket): the error surfaces.
	_, err := calibrateWith(1, 1e-5, func(z float64) []Event {
		if z >= 3 {
			return []Event{GaussianEvent{Multiplier: -z, Count: 1}}
		}
		return gauss(z)
	}, func() (Accountant, error) { return NewGDP(), nil })
	if err == nil {
		t.Error("a Compose error during the search must be returned")
	}
	// Constructor failure.
	if _, err := calibrateWith(1, 1e-5, gauss, func() (Accountant, error) { return nil, boom }); err == nil {
		t.Error("constructor error must be returned")
	}
	// Unreachable targets: error, not MaxNoise. (The standard conversion
	// has ε ≥ ln(1/δ)/(α_max − 1) at any noise, and the accountant searches
	// orders up to 2^20, so ε = 1e-6 at δ = 1e-5 is out of reach; the
	// improved conversion and the exact GDP route can reach any ε > 0.)
	if z, err := calibrateGaussian(1e-6, 1e-5, 1, "rdp-standard"); err == nil {
		t.Errorf("rdp-standard: ε=1e-6 is out of reach of orders ≤ 2^20: got z=%g without an error", z)
	}
	if z, err := calibrateGaussian(1e-14, 1e-5, 1, "gdp"); err != nil {
		t.Error(err)
	} else if g := NewGDP(); g.Compose(GaussianEvent{Multiplier: z, Count: 1}) == nil {
		if e, _ := g.Epsilon(1e-5); e > 1e-14 {
			t.Errorf("gdp: z=%g gives ε=%g above 1e-14", z, e)
		}
	}
	if z, err := (calibration{MaxNoise: 10}).noise(0.1, 1e-5, gauss, func() (Accountant, error) { return NewGDP(), nil }); err == nil {
		t.Errorf("MaxNoise=10 cannot reach ε=0.1: got z=%g", z)
	}
	// Invalid settings and inputs.
	for _, c := range []calibration{{Lo: -1}, {Hi: math.NaN()}, {RelTol: -1}, {MaxNoise: math.Inf(1)}, {MinNoise: 2}} {
		if _, err := c.noise(1, 1e-5, gauss, func() (Accountant, error) { return NewGDP(), nil }); err == nil {
			t.Errorf("settings %+v: want an error", c)
		}
	}
}

// TestAuditCalibratePoissonGaussianConservative guards DP-SGD calibration
// (whose ε curve goes through the fractional series and the refinement) on
// settings beyond ProGAP's node-level table (spec_progap_test.go): the
// returned z always meets the target
// with a fresh default accountant, and tightly.
func TestAuditCalibratePoissonGaussianConservative(t *testing.T) {
	for _, tc := range []struct {
		q     float64
		steps int
		eps   float64
		delta float64
	}{
		{0.004, 3000, 0.5, 1e-6},
		{0.05, 200, 2, 1e-5},
		{0.01, 10, 30, 1e-7},
	} {
		convs := []Conversion{ConversionImproved, ConversionStandard}
		if tc.eps > 10 {
			convs = convs[:1] // slow: orders near 1, many series terms
		}
		for _, conv := range convs {
			z, err := calibratePoissonGaussian(tc.q, tc.eps, tc.delta, tc.steps, conv)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := NewRDP(WithConversion(conv))
			_ = a.Compose(PoissonGaussianEvent{Rate: tc.q, Multiplier: z, Steps: tc.steps})
			got, _ := a.Epsilon(tc.delta)
			if !(got <= tc.eps) || got < tc.eps*(1-1e-6) {
				t.Errorf("%+v %v: z=%g gives ε=%.12g for target %g", tc, conv, z, got, tc.eps)
			}
		}
	}
}

// TestAuditPureEvents guards the pure-DP path: amplification by Poisson
// subsampling ln(1 + q(e^ε − 1)) against a direct evaluation, its basic
// properties (≥ qε, ≤ ε, increasing in q, q = 1 is the identity), that the
// RDP accountant applies it (and only for 0 < Rate < 1), and that its
// inverse never hands out a per-run ε whose amplification exceeds the
// target by more than rounding.
func TestAuditPureEvents(t *testing.T) {
	for _, eps := range []float64{1e-8, 0.01, 0.5, 1, 3, 20, 700} {
		prev := 0.0
		for _, q := range []float64{1e-9, 1e-3, 0.1, 0.5, 0.99, 1} {
			got, err := AmplifiedEpsilon(eps, q)
			if err != nil {
				t.Fatal(err)
			}
			direct := math.Log1p(q * math.Expm1(eps)) // no overflow for ε ≤ 700
			assertRel(t, "amplify", got, direct, 1e-12)
			if got < q*eps*(1-1e-15) || got > eps*(1+1e-15) || got < prev {
				t.Errorf("amplify(ε=%g, q=%g) = %g outside [qε, ε] or not increasing in q", eps, q, got)
			}
			prev = got
			inner, err := InnerEpsilon(got, q)
			if err != nil {
				t.Fatal(err)
			}
			back, _ := AmplifiedEpsilon(inner, q)
			if back > got*(1+1e-14) {
				t.Errorf("InnerEpsilon(%g, q=%g) = %g amplifies back to %g", got, q, inner, back)
			}
		}
	}
	// Rate 0 and 1 mean no subsampling; 0 < Rate < 1 is amplified.
	run := func(e Event) float64 {
		a, _ := NewRDP(WithOrders(3.5), WithoutRefinement())
		if err := a.Compose(e); err != nil {
			t.Fatal(err)
		}
		return a.Curve()[0]
	}
	full := run(PureEvent{Epsilon: 2, Count: 5})
	if one := run(Composed{Count: 5, Event: Poisson{Rate: 1, Event: PureEvent{Epsilon: 2, Count: 1}}}); one != full {
		t.Errorf("Rate 1 (%v) differs from Rate 0 (%v)", one, full)
	}
	amp, _ := AmplifiedEpsilon(2, 0.2)
	assertRel(t, "amplified pure RDP", run(Composed{Count: 5, Event: Poisson{Rate: 0.2, Event: PureEvent{Epsilon: 2, Count: 1}}}), 5*math.Min(amp, 3.5*amp*amp/2), 1e-15)
	if a, b := run(Poisson{Rate: 0.2, Event: PureEvent{Epsilon: 2, Count: 1}}), run(PureEvent{Epsilon: amp, Count: 1}); a != b {
		t.Errorf("Poisson-sampled pure RDP %v, want that of the amplified ε %v", a, b)
	}
	// Pure ε-DP is not GDP: the exact accountant must refuse it.
	if err := NewGDP().Compose(PureEvent{Epsilon: 1, Count: 1}); err == nil {
		t.Error("GDP accountant accepted a pure-DP event")
	}
}

// TestAuditValidation guards the input checks: every invalid parameter
// (zero, negative, NaN, ±Inf, out-of-range rates and probabilities) is an
// error at the door, so it can never flow into a formula and come out as a
// small ε.
func TestAuditValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, e := range []float64{0, math.Copysign(0, -1), -1, nan, math.Inf(-1)} {
		if CheckEpsilon(e) == nil {
			t.Errorf("CheckEpsilon(%v) accepted", e)
		}
	}
	for _, d := range []float64{0, math.Copysign(0, -1), -1e-10, 1, 1 + 1e-16*2, nan, inf, math.Inf(-1)} {
		if CheckDelta(d) == nil {
			t.Errorf("CheckDelta(%v) accepted", d)
		}
	}
	if CheckDelta(5e-324) != nil || CheckDelta(math.Nextafter(1, 0)) != nil {
		t.Error("CheckDelta rejected a valid δ")
	}
	for _, q := range []float64{0, -0.1, math.Nextafter(1, 2), nan, inf} {
		if CheckRate(q) == nil {
			t.Errorf("CheckRate(%v) accepted", q)
		}
	}
	for _, z := range []float64{0, -1, nan, inf, math.Inf(-1)} {
		if CheckMultiplier(z) == nil {
			t.Errorf("CheckMultiplier(%v) accepted", z)
		}
	}
	bad := []Event{
		GaussianEvent{Multiplier: inf, Count: 1},
		GaussianEvent{Multiplier: 1, Count: -1},
		PoissonGaussianEvent{Rate: nan, Multiplier: 1, Steps: 1},
		PoissonGaussianEvent{Rate: 0.1, Multiplier: nan, Steps: 1},
		PoissonGaussianEvent{Rate: 0.1, Multiplier: 1, Steps: 0},
		GDPEvent{Mu: nan},
		GDPEvent{Mu: -1},
		PureEvent{Epsilon: nan, Count: 1},
		PureEvent{Epsilon: inf, Count: 1},
		PureEvent{Epsilon: 1, Count: 0},
		Composed{Count: 1, Event: Poisson{Rate: nan, Event: PureEvent{Epsilon: 1, Count: 1}}},
		Composed{Count: 1, Event: Poisson{Rate: 1.5, Event: PureEvent{Epsilon: 1, Count: 1}}},
		ComposedEvent{Events: []Event{ComposedEvent{}}},
		ComposedEvent{Events: []Event{GDPEvent{Mu: 1}, ComposedEvent{Events: []Event{GDPEvent{Mu: nan}}}}},
	}
	for _, e := range bad {
		for _, name := range AccountantNames() {
			a, _ := NewAccountant(name)
			if err := a.Compose(e); err == nil {
				t.Errorf("%s accepted %v", name, e)
			}
			if eps, _ := a.Epsilon(1e-5); eps != 0 {
				t.Errorf("%s: rejected %v left ε = %v", name, e, eps)
			}
		}
	}
	r, _ := NewRDP()
	g := NewGDP()
	for _, d := range []float64{nan, 0, 1} {
		if _, err := r.Epsilon(d); err == nil {
			t.Errorf("RDP.Epsilon(%v) accepted", d)
		}
		if _, err := g.Epsilon(d); err == nil {
			t.Errorf("GDP.Epsilon(%v) accepted", d)
		}
	}
	for _, e := range []float64{nan, -1} {
		if _, err := r.Delta(e); err == nil {
			t.Errorf("RDP.Delta(%v) accepted", e)
		}
		if _, err := g.Delta(e); err == nil {
			t.Errorf("GDP.Delta(%v) accepted", e)
		}
	}
	for _, args := range [][2]float64{{nan, 0.5}, {1, nan}, {inf, 0.5}, {-1, 0.5}} {
		if _, err := AmplifiedEpsilon(args[0], args[1]); err == nil {
			t.Errorf("AmplifiedEpsilon%v accepted", args)
		}
		if _, err := InnerEpsilon(args[0], args[1]); err == nil {
			t.Errorf("InnerEpsilon%v accepted", args)
		}
	}
	for _, args := range [][2]float64{{nan, 1e-5}, {-1, 1e-5}, {1, nan}, {1, 0}} {
		if _, err := GDPEpsilon(args[0], args[1]); err == nil {
			t.Errorf("GDPEpsilon%v accepted", args)
		}
	}
	if v := GDPDelta(nan, 1); !math.IsNaN(v) {
		t.Errorf("GDPDelta(NaN, 1) = %v", v)
	}
	if v := SubsampledGaussianRDP(0.1, 1, nan); !math.IsNaN(v) {
		t.Errorf("SubsampledGaussianRDP(α=NaN) = %v", v)
	}
}

// TestAuditDeltaAutoBoundaries guards the δ "auto" rule at every
// power-of-ten boundary: δ = 10^−(number of digits) is always strictly below
// 1/units (ProGAP §5.3 and CARIBOU §6: δ "smaller than the inverse number"
// of private units).
func TestAuditDeltaAutoBoundaries(t *testing.T) {
	p := 1
	for d := 1; d <= 15; d++ { // units exact in float64
		for _, units := range []int{p, p + 1, 10*p - 1} {
			got, err := DeltaAuto(units)
			if err != nil {
				t.Fatal(err)
			}
			if want := math.Pow10(-d); got != want {
				t.Errorf("DeltaAuto(%d) = %g, want %g", units, got, want)
			}
			if !(got < 1/float64(units)) {
				t.Errorf("DeltaAuto(%d) = %g not below 1/units", units, got)
			}
		}
		p *= 10
	}
	if got, err := DeltaAuto(math.MaxInt); err != nil || !(got < 1/float64(math.MaxInt)) {
		t.Errorf("DeltaAuto(MaxInt) = %g, %v", got, err)
	}
}

// auditMomentZ returns the z-scores of the sample mean and variance against
// the claimed N(mean, variance) law (fourth central moment 3σ⁴).
func auditMomentZ(x []float64, mean, variance float64) (zMean, zVar float64) {
	m, v := meanVar(x)
	n := float64(len(x))
	return (m - mean) / math.Sqrt(variance/n), (v - variance) / math.Sqrt(2*variance*variance/n)
}

// auditNormalChi2 bins x at standard-normal quantiles (tails included) and
// returns the χ² p-value.
func auditNormalChi2(x []float64) float64 {
	edges := []float64{-3.5, -3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}
	std := distuv.UnitNormal
	probs := make([]float64, len(edges)+1)
	prev := 0.0
	for i, e := range edges {
		c := std.CDF(e)
		probs[i] = c - prev
		prev = c
	}
	probs[len(edges)] = 1 - prev
	obs := make([]int, len(probs))
	for _, v := range x {
		k := 0
		for k < len(edges) && v >= edges[k] {
			k++
		}
		obs[k]++
	}
	return chiSquarePValue(obs, probs)
}

// TestAuditSourceNormal guards that Source.Normal is N(0, 1) — mean,
// variance, KS and a tail-sensitive χ² — and, just as important, that these
// checks have power: the same checks reject a std of 0.9, 1.1 or even 0.97,
// a mean of 0.05, and a unit-variance law with the wrong tails, so a broken
// sampler (wrong scale → wrong σ → wrong ε) cannot pass them.
func TestAuditSourceNormal(t *testing.T) {
	const n = 100000
	src := NewSource(2024)
	x := make([]float64, n)
	for i := range x {
		x[i] = src.Normal()
	}
	accept := func(y []float64) bool {
		zm, zv := auditMomentZ(y, 0, 1)
		_, pks := ksPValue(y, distuv.UnitNormal.CDF)
		return math.Abs(zm) < 5 && math.Abs(zv) < 5 && pks > 1e-4 && auditNormalChi2(y) > 1e-4
	}
	if !accept(x) {
		zm, zv := auditMomentZ(x, 0, 1)
		_, pks := ksPValue(x, distuv.UnitNormal.CDF)
		t.Fatalf("Source.Normal fails N(0,1): z(mean)=%.2f z(var)=%.2f KS p=%.3g χ² p=%.3g", zm, zv, pks, auditNormalChi2(x))
	}
	transformed := func(f func(float64) float64) []float64 {
		y := make([]float64, n)
		for i, v := range x {
			y[i] = f(v)
		}
		return y
	}
	for name, f := range map[string]func(float64) float64{
		"std 0.9":   func(v float64) float64 { return 0.9 * v },
		"std 1.1":   func(v float64) float64 { return 1.1 * v },
		"std 0.97":  func(v float64) float64 { return 0.97 * v },
		"mean 0.05": func(v float64) float64 { return v + 0.05 },
	} {
		if accept(transformed(f)) {
			t.Errorf("the normality checks accept %s: they have no power", name)
		}
	}
	// Unit-variance Laplace (heavier tails) built from the same source.
	lap := make([]float64, n)
	ls := NewSource(99)
	for i := range lap {
		lap[i] = Laplace{Scale: 1 / math.Sqrt2}.draw(ls)
	}
	if accept(lap) {
		t.Error("the normality checks accept a unit-variance Laplace law")
	}
}

// TestAuditSourceSplitIndependence guards Split: siblings, parent and child,
// and different seeds give streams that share no 64-bit outputs and whose
// normal draws are uncorrelated, and a child's stream does not depend on how
// much the parent has drawn.
func TestAuditSourceSplitIndependence(t *testing.T) {
	const n = 20000
	parent := NewSource(5)
	a, b := parent.Split("x"), parent.Split("x")
	c := NewSource(6)
	seen := make(map[uint64]string, 4*n)
	for name, s := range map[string]*Source{"parent": NewSource(5), "child a": NewSource(5).Split("x"), "sibling b": b, "seed 6": c} {
		for i := 0; i < n; i++ {
			v := s.Uint64()
			if other, ok := seen[v]; ok && other != name {
				t.Fatalf("%s and %s share the output %#x", name, other, v)
			}
			seen[v] = name
		}
	}
	corr := func(s1, s2 *Source) float64 {
		var sxy, sxx, syy float64
		for i := 0; i < n; i++ {
			x, y := s1.Normal(), s2.Normal()
			sxy += x * y
			sxx += x * x
			syy += y * y
		}
		return sxy / math.Sqrt(sxx*syy)
	}
	limit := 5 / math.Sqrt(n)
	for name, pair := range map[string][2]*Source{
		"siblings":        {NewSource(8).Split("a"), func() *Source { s := NewSource(8); s.Split("a"); return s.Split("a") }()},
		"parent/child":    {NewSource(8), NewSource(8).Split("a")},
		"adjacent seeds":  {NewSource(8), NewSource(9)},
		"labels a/b":      {NewSource(8).Split("a"), NewSource(8).Split("b")},
		"grandchild":      {NewSource(8).Split("a"), NewSource(8).Split("a").Split("a")},
		"seed 0, max":     {NewSource(0), NewSource(math.MaxUint64)},
		"same label, gen": {a, NewSource(5).Split("y")},
	} {
		if r := corr(pair[0], pair[1]); math.Abs(r) > limit {
			t.Errorf("%s: correlation %.4f beyond %.4f", name, r, limit)
		}
	}
	// A child's stream depends on the seed, label and split count only.
	p1, p2 := NewSource(11), NewSource(11)
	for i := 0; i < 1000; i++ {
		p2.Normal()
	}
	if p1.Split("k").Uint64() != p2.Split("k").Uint64() {
		t.Error("a child's stream depends on how much the parent has drawn")
	}
}

// TestAuditRandomLedgers guards against NaN or order-dependent surprises on
// ledgers nobody wrote a table for: random mixes of every event type (fixed
// seed) never give a NaN or negative ε, ε never decreases when an event is
// added (a larger ledger must not look cheaper, even through the local
// refinement), and ε never increases with δ.
func TestAuditRandomLedgers(t *testing.T) {
	r := NewSource(77)
	u := r.Uniform
	randEvent := func() Event {
		switch int(u() * 6) {
		case 0:
			return GaussianEvent{Multiplier: math.Exp(u()*6 - 2), Count: 1 + int(u()*50)}
		case 1:
			return PoissonGaussianEvent{Rate: math.Exp(-2 - u()*7), Multiplier: 0.4 + u()*5, Steps: 1 + int(u()*5000)}
		case 2:
			return GDPEvent{Mu: math.Exp(u()*8 - 6)}
		case 3:
			eps, count, rate := math.Exp(u()*8-5), 1+int(u()*10), []float64{0, 1, u()}[int(u()*3)]
			if rate == 0 || rate >= 1 {
				return PureEvent{Epsilon: eps, Count: count}
			}
			return Composed{Count: count, Event: Poisson{Rate: rate, Event: PureEvent{Epsilon: eps, Count: 1}}}
		case 4:
			c := math.Exp(u()*8 - 8)
			return RDPEvent{Name: "c·α^1.5", Curve: func(a float64) float64 { return c * a * math.Sqrt(a) }}
		}
		return ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 3, Count: 2}, PoissonGaussianEvent{Rate: 0.01, Multiplier: 1, Steps: 10}}}
	}
	for it := 0; it < 40; it++ {
		conv := ConversionImproved
		if u() < 0.5 {
			conv = ConversionStandard
		}
		acct, _ := NewRDP(WithConversion(conv))
		prev := 0.0
		for k := 0; k < 1+int(u()*4); k++ {
			e := randEvent()
			if err := acct.Compose(e); err != nil {
				t.Fatal(err)
			}
			eps, err := acct.Epsilon(1e-6)
			if err != nil || math.IsNaN(eps) || eps < 0 {
				t.Fatalf("ledger %v: ε = %v, %v", acct.Ledger(), eps, err)
			}
			if eps < prev*(1-1e-12) {
				t.Errorf("ε decreased from %v to %v after adding %v", prev, eps, e)
			}
			prev = eps
			last := math.Inf(1)
			for _, d := range []float64{1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.5} {
				e2, _ := acct.Epsilon(d)
				if e2 > last*(1+1e-12) {
					t.Errorf("ledger %v: ε increases with δ at δ=%g", acct.Ledger(), d)
				}
				last = e2
			}
		}
	}
}
