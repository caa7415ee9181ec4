package dp

import (
	"math"
	"math/big"
	"testing"
	"time"
)

// highNoiseEvent is the high-noise DP-SGD case of the accounting-looseness
// issue: with orders only up to 1024 the accountant over-reported ε by 158%
// (improved conversion: 0.01071 for 0.004145) and 157% (standard: 0.01846
// for 0.007180), the optimum being at α = 2965.
var highNoiseEvent = PoissonGaussianEvent{Rate: 1.459e-5, Multiplier: 11.54, Steps: 385733}

const highNoiseDelta = 8.7e-9

// refSGMLogA is ln A_n of the sampled Gaussian summed term by term over all
// i ≤ n, as 1 + Σ_{i≥2} p_i (e^{c_i} − 1) with log-binomials from
// math.Lgamma: independent of logBinom and of logAInt's truncation (and
// about 1e-11 relative less accurate at n ≈ 3000).
func refSGMLogA(q, z float64, n int) float64 {
	lq, l1q, w := math.Log(q), math.Log1p(-q), 1/(2*z*z)
	lgN, _ := math.Lgamma(float64(n) + 1)
	acc := math.Inf(-1)
	for i := 2; i <= n; i++ {
		fi := float64(i)
		lgI, _ := math.Lgamma(fi + 1)
		lgR, _ := math.Lgamma(float64(n-i) + 1)
		c := (fi*fi - fi) * w
		acc = logAdd(acc, lgN-lgI-lgR+fi*lq+float64(n-i)*l1q+logExpm1(c))
	}
	return log1pExp(acc)
}

// TestRDPHighNoiseLargeOrders: the default accountant finds the optimum of
// the high-noise case beyond the old grid end (α = 1024), within a few % of
// the true continuous optimum, computed here independently by a dense scan
// of the exact curve; and its value at the reported order matches a 40-digit
// mpmath evaluation.
func TestRDPHighNoiseLargeOrders(t *testing.T) {
	e := highNoiseEvent
	steps := float64(e.Steps)
	// mpmath, 40 digits, at α = 2965 (the float64 inputs above).
	mp := map[Conversion]float64{ConversionStandard: 0.0071799465143537645026, ConversionImproved: 0.0041453771289265550418}
	// The grid only (old default grid: 152 orders up to 1024).
	oldGrid := DefaultOrders()[:152]
	if oldGrid[151] != 1024 {
		t.Fatalf("old grid ends at %v", oldGrid[151])
	}
	// Dense scan of the exact curve over integer orders; every α in
	// [k, k+step] has RDP ≥ RDP(k) (RDP is non-decreasing in α), which gives
	// a lower bound on the continuous optimum over [1025, 6000].
	type pt struct{ k, step, rho float64 }
	var scan []pt
	for k := 1025; k < 6000; {
		step := 25
		if k >= 2800 && k < 3100 {
			step = 1
		}
		scan = append(scan, pt{float64(k), float64(step), steps * refSGMLogA(e.Rate, e.Multiplier, k) / float64(k-1)})
		k += step
	}
	lnInvDelta := math.Log(1 / highNoiseDelta)
	for _, conv := range []Conversion{ConversionStandard, ConversionImproved} {
		start := time.Now()
		a, _ := NewRDP(WithConversion(conv))
		if err := a.Compose(e); err != nil {
			t.Fatal(err)
		}
		eps, order, err := a.EpsilonAndOrder(highNoiseDelta)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		old, _ := NewRDP(WithConversion(conv), WithOrders(oldGrid...), WithoutRefinement())
		_ = old.Compose(e)
		epsOld, _ := old.Epsilon(highNoiseDelta)

		scanMin, lower := math.Inf(1), math.Inf(1)
		for _, p := range scan {
			scanMin = math.Min(scanMin, conv.Epsilon(p.rho, p.k, highNoiseDelta))
			// Lower bound of the conversion over α ∈ [k, k+step].
			hi := p.k + p.step
			var lb float64
			if conv == ConversionStandard {
				lb = p.rho + lnInvDelta/(hi-1)
			} else {
				lb = p.rho + math.Log1p(-1/p.k) + (lnInvDelta-math.Log(hi))/(hi-1)
			}
			lower = math.Min(lower, lb)
		}
		// Orders outside the scan cannot do better: below 1025 the
		// conversion term alone exceeds ε, above 6000 the RDP alone does.
		if c := conv.Epsilon(0, 1025, highNoiseDelta); c <= eps {
			t.Errorf("%v: orders below 1025 not excluded (%g ≤ %g)", conv, c, eps)
		}
		if r := scan[len(scan)-1].rho; r <= eps {
			t.Errorf("%v: orders above 6000 not excluded (%g ≤ %g)", conv, r, eps)
		}
		t.Logf("%v: ε = %.10g at α = %g (old grid: %.10g; scan minimum %.10g, continuous optimum ≥ %.10g) in %v",
			conv, eps, order, epsOld, scanMin, lower, elapsed)
		if eps > scanMin*(1+1e-9) {
			t.Errorf("%v: ε = %.12g above the scanned minimum %.12g", conv, eps, scanMin)
		}
		if eps < lower*(1-1e-9) || eps > lower*1.03 {
			t.Errorf("%v: ε = %.12g not within 3%% above the continuous optimum's lower bound %.12g", conv, eps, lower)
		}
		if order < 2900 || order > 3100 {
			t.Errorf("%v: order %g, want near 2965", conv, order)
		}
		if order == 2965 {
			assertRel(t, "ε at α = 2965 vs mpmath ("+conv.String()+")", eps, mp[conv], 1e-10)
		}
		if eps > epsOld/2 {
			t.Errorf("%v: ε = %g is not well below the old grid's %g", conv, eps, epsOld)
		}
		// The grid alone (now reaching 131073) is within 12.5% in α−1.
		g, _ := NewRDP(WithConversion(conv), WithoutRefinement())
		_ = g.Compose(e)
		eg, _ := g.Epsilon(highNoiseDelta)
		if eg < eps || eg > eps*1.15 {
			t.Errorf("%v: grid-only ε = %g vs refined %g", conv, eg, eps)
		}
		// Delta inverts Epsilon at large orders too.
		if d, _ := a.Delta(eps); d > highNoiseDelta*(1+1e-9) || d < highNoiseDelta*0.99 {
			t.Errorf("%v: Delta(Epsilon(δ)) = %g, want %g", conv, d, highNoiseDelta)
		}
	}
}

// TestRDPLowNoiseUnchanged: where the optimum order lies well inside the old
// grid (ProGAP's node-level rows of spec_progap_test.go, common DP-SGD
// settings, a Gaussian composition), ε and the order are those of the
// accountant before the grid was extended (values recorded from it), to 1e-9.
func TestRDPLowNoiseUnchanged(t *testing.T) {
	type row struct {
		name          string
		events        []Event
		delta         float64
		improved, std float64
	}
	var rows []row
	for i, r := range []struct {
		n, b, epochs int
		z            float64
		k            int
		delta        float64
	}{{19804, 256, 10, 1.0, 2, 1e-5}, {19804, 256, 10, 2.0, 5, 1e-5}, {87534, 2048, 5, 0.8, 1, 1e-5}, {1343048, 4096, 10, 1.5, 3, 1e-7}} {
		want := [][2]float64{
			{8.4722010010062938, 9.2584085635690592},
			{5.9143533121637111, 6.5596552363953879},
			{8.5678106083912517, 9.429793868917292},
			{6.8578203827603534, 7.4240539011320319},
		}[i]
		q := float64(r.b) / float64(r.n)
		rows = append(rows, row{"progap N=" + itoa(r.n), progapNodeEvents(r.z, r.k, r.epochs*r.n/r.b, q), r.delta, want[0], want[1]})
	}
	rows = append(rows,
		row{"dpsgd q=0.01 z=1.1 T=1000", []Event{PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 1000}}, 1e-5, 1.7117143312379919, 2.0820707352163446},
		row{"dpsgd q=0.004 z=1 T=3000", []Event{PoissonGaussianEvent{Rate: 0.004, Multiplier: 1, Steps: 3000}}, 1e-6, 1.6473307141891969, 2.0052990686848222},
		row{"dpsgd q=0.05 z=2 T=200", []Event{PoissonGaussianEvent{Rate: 0.05, Multiplier: 2, Steps: 200}}, 1e-5, 1.7212851207107649, 2.0535251466261446},
		row{"gaussian z=5 K=3", []Event{GaussianEvent{Multiplier: 5, Count: 3}}, 1e-5, 1.4454083429281961, 1.7222581362691098},
	)
	for _, r := range rows {
		for _, c := range []struct {
			conv Conversion
			want float64
		}{{ConversionImproved, r.improved}, {ConversionStandard, r.std}} {
			a, _ := NewRDP(WithConversion(c.conv))
			if err := ComposeAll(a, r.events); err != nil {
				t.Fatal(err)
			}
			eps, _ := a.Epsilon(r.delta)
			assertRel(t, r.name+" ("+c.conv.String()+")", eps, c.want, 1e-9)
		}
	}
}

// TestRDPRefinementBeyondGrid: when the best grid order is the last one,
// refinement looks beyond it; WithoutRefinement does not; the search stops
// at maxRefineOrder.
func TestRDPRefinementBeyondGrid(t *testing.T) {
	const z, delta = 50.0, 1e-9
	l := math.Log(1 / delta)
	small := integerOrders(2, 64)
	r, _ := NewRDP(WithOrders(small...), WithConversion(ConversionStandard))
	g, _ := NewRDP(WithOrders(small...), WithConversion(ConversionStandard), WithoutRefinement())
	for _, a := range []*RDP{r, g} {
		_ = a.Compose(GaussianEvent{Multiplier: z, Count: 1})
	}
	eps, order, _ := r.EpsilonAndOrder(delta)
	assertRel(t, "closed form beyond the grid", eps, 1/(2*z*z)+math.Sqrt(2*l)/z, 1e-10)
	assertRel(t, "optimal order beyond the grid", order, 1+z*math.Sqrt(2*l), 1e-4)
	epsG, orderG, _ := g.EpsilonAndOrder(delta)
	if orderG != 64 || epsG != ConversionStandard.Epsilon(64/(2*z*z), 64, delta) {
		t.Errorf("grid only: ε=%v at order %v, want the value at 64", epsG, orderG)
	}
	// A subsampled Gaussian beyond a small grid: integer orders only above
	// 1024, and the same optimum as the default grid.
	s, _ := NewRDP(WithOrders(small...), WithConversion(ConversionStandard))
	_ = s.Compose(highNoiseEvent)
	eps, order, _ = s.EpsilonAndOrder(highNoiseDelta)
	d, _ := NewRDP(WithConversion(ConversionStandard))
	_ = d.Compose(highNoiseEvent)
	want, _ := d.Epsilon(highNoiseDelta)
	if order != math.Trunc(order) || eps > want*(1+1e-9) {
		t.Errorf("SGM beyond a small grid: ε=%.12g at α=%v, want ≤ %.12g at an integer order", eps, order, want)
	}
	// Huge noise: the optimum (α ≈ 4.8e8) is beyond the cap.
	h, _ := NewRDP(WithConversion(ConversionStandard))
	_ = h.Compose(GaussianEvent{Multiplier: 1e8, Count: 1})
	eps, order, _ = h.EpsilonAndOrder(1e-5)
	if order != maxRefineOrder {
		t.Errorf("huge noise: order %v, want the cap %v", order, float64(maxRefineOrder))
	}
	assertRel(t, "ε at the cap", eps, ConversionStandard.Epsilon(order/(2e16), order, 1e-5), 1e-12)
}

// logBinomBig is ln C(n, k) from the exact integer.
func logBinomBig(n, k int) float64 {
	c := new(big.Int).Binomial(int64(n), int64(k))
	f := new(big.Float).SetInt(c)
	mant := new(big.Float)
	exp := f.MantExp(mant)
	m, _ := mant.Float64()
	return math.Log(m) + float64(exp)*math.Ln2
}

func TestLogBinom(t *testing.T) {
	for _, n := range []int{1, 2, 5, 15, 16, 17, 31, 100, 1000, 2965, 20000} {
		for _, k := range []int{0, 1, 2, 3, 7, 15, 16, 40, n / 3, n/2 - 1, n / 2, n - 17, n - 1, n} {
			if k < 0 || k > n {
				continue
			}
			got, want := logBinom(n, k), logBinomBig(n, k)
			if math.Abs(got-want) > 4e-15*math.Max(1, math.Abs(want)) {
				t.Errorf("logBinom(%d, %d) = %.17g, want %.17g", n, k, got, want)
			}
		}
	}
}

// sgmLargeOrderReference: ln A_n (integer n) from mpmath at 50 digits, with
// q and z the float64 values shown.
var sgmLargeOrderReference = []struct {
	q, z float64
	n    int
	want float64
}{
	{1.459e-05, 11.54, 2965, 7.0551875449045969135e-6},
	{1.459e-05, 11.54, 2966, 0.00018759453263267665461},
	{1.459e-05, 11.54, 131073, 63043722.706919677944},
	{0.01, 1.1, 1000, 408204.74716938374282},
	{0.01, 1.1, 65537, 1774505146.3334214383},
	{0.3, 30, 10000, 43510.621130662663908},
	{0.3, 30, 131073, 9386636.2592852532535},
	{0.5, 1e6, 100, 1.2375000000307828125e-9},
	{0.5, 1e6, 65537, 0.00053687911279629449394},
	{0.001, 5, 2049, 69773.049433365601223},
	{0.9, 3, 4097, 931863.44907846099686},
	{0.01, 100, 131073, 255412.92213620295643},
	{1e-09, 10, 100000, 47927173.416305358891},
}

// TestSubsampledGaussianRDPLargeOrders guards the sampled-Gaussian RDP at
// the large orders the default grid and the refinement now reach: against
// mpmath; against the full term-by-term sum (the truncated sum adds bounds,
// so it may only be above, and only by rounding); fractional orders finite,
// between their integer neighbours and continuous; extreme inputs +Inf or a
// valid value, never NaN.
func TestSubsampledGaussianRDPLargeOrders(t *testing.T) {
	for _, tc := range sgmLargeOrderReference {
		// The 2966 row is ill-conditioned in z (a relative 1e-16 change in
		// z moves it by ~1e-12).
		assertRel(t, "ln A vs mpmath", logAInt(tc.q, tc.z, tc.n), tc.want, 5e-12)
	}
	for _, q := range []float64{1e-300, 1.459e-5, 0.01, 0.3, 0.9} {
		for _, z := range []float64{0.3, 1, 11.54, 100, 1e6} {
			for _, n := range []int{65, 66, 1000, 2965, 10000, 65537} {
				s := sgmIntSum{n: n, fn: float64(n), lq: math.Log(q), l1q: math.Log1p(-q), w: 1 / (2 * z * z)}
				full := math.Inf(-1)
				for i := 2; i <= n; i++ {
					full = logAdd(full, s.u(i))
				}
				want := log1pExp(full)
				got := logAInt(q, z, n)
				if math.IsNaN(got) || got < want*(1-1e-14) || got > want*(1+1e-13) {
					t.Errorf("q=%g z=%g n=%d: truncated %.17g, full %.17g", q, z, n, got, want)
				}
				if n <= 2965 && z >= 1 {
					// Independent of logBinom: Lgamma differences.
					assertRel(t, "ln A vs the Lgamma sum", got, refSGMLogA(q, z, n), 1e-9)
				}
			}
		}
	}
	for _, c := range []struct{ q, z float64 }{{1.459e-5, 11.54}, {0.01, 1.1}, {0.3, 30}, {0.5, 1e3}} {
		for _, k := range []float64{2965, 10000, 100000} {
			atK := SubsampledGaussianRDP(c.q, c.z, k)
			atK1 := SubsampledGaussianRDP(c.q, c.z, k+1)
			mid := SubsampledGaussianRDP(c.q, c.z, k+0.5)
			if math.IsNaN(mid) || mid < atK*(1-1e-9) || mid > atK1*(1+1e-9) {
				t.Errorf("q=%g z=%g: RDP(%g) = %.12g not between RDP(%g) = %.12g and RDP(%g) = %.12g", c.q, c.z, k+0.5, mid, k, atK, k+1, atK1)
			}
			if k <= 10000 {
				assertRel(t, "continuity above an integer", SubsampledGaussianRDP(c.q, c.z, k+1e-9), atK, 1e-6)
			}
		}
	}
	// Fractional orders beyond the series' reach: +Inf, not NaN.
	if v := SubsampledGaussianRDP(0.01, 10, 2e6+0.5); !math.IsInf(v, 1) {
		t.Errorf("α = 2e6+0.5: %v, want +Inf", v)
	}
	// Extreme inputs at large integer orders.
	for _, alpha := range []float64{65537, 131073, 1 << 20} {
		if v := SubsampledGaussianRDP(0.01, 1e-160, alpha); !math.IsInf(v, 1) {
			t.Errorf("z=1e-160, α=%g: %v, want +Inf", alpha, v)
		}
		if v := SubsampledGaussianRDP(0.01, 1e6, alpha); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("z=1e6, α=%g: %v, want a finite value ≥ 0", alpha, v)
		}
		for _, q := range []float64{5e-324, 1e-12, 0.5, 1 - 1e-9} {
			for _, z := range []float64{1e-6, 0.5, 10, 1e4} {
				v := SubsampledGaussianRDP(q, z, alpha)
				lb := math.Max(0, alpha*math.Log(q)/(alpha-1)+alpha/(2*z*z))
				if math.IsNaN(v) || v < lb*(1-1e-12) {
					t.Errorf("q=%g z=%g α=%g: %v below the bound %v", q, z, alpha, v, lb)
				}
			}
		}
	}
}

// BenchmarkRDPEpsilon times a fresh accountant's Compose + Epsilon, the unit
// of work of one calibration step.
func BenchmarkRDPEpsilon(b *testing.B) {
	for _, c := range []struct {
		name  string
		e     Event
		delta float64
	}{
		{"high-noise", highNoiseEvent, highNoiseDelta},
		{"dpsgd", PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 1000}, 1e-5},
		{"progap", ComposedEvent{Events: progapNodeEvents(1, 2, 773, 256.0/19804)}, 1e-5},
		{"gaussian", GaussianEvent{Multiplier: 5, Count: 3}, 1e-5},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, _ := NewRDP()
				_ = a.Compose(c.e)
				if _, err := a.Epsilon(c.delta); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
