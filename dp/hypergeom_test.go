package dp

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// asglVectors are ASGL's Theorem 2 test vectors (appendix; R = R_{N,L}):
// want is the float64 reference of the team's notes, accurate to ~5e-7
// only (cancellation in a plain log-sum), exact the mpmath value at 50
// digits.
var asglVectors = []struct {
	alpha, sigma float64
	nTr, bd, r   int
	want, exact  float64
}{
	{2, 1.0, 10, 4, 3, 0.249919957816, 0.249919957816},
	{2, 4.0, 10000, 256, 121, 5.36915591347e-05, 5.36915352212629e-5},
	{8, 4.0, 10000, 256, 121, 2.14932442199e-04, 0.000214932438781364},
	{32, 4.0, 10000, 256, 121, 8.71486383823e-04, 0.00087148638304665},
	{2, 1.0, 1000, 128, 13, 0.0253576878412, 0.0253576878410867},
	{10, 2.0, 1000, 128, 13, 0.0406303876235, 0.0406303876235342},
}

func thm2(nTr, bd, r int, sigma float64, steps int) HypergeomGaussian {
	return HypergeomGaussian{Population: nTr, Batch: bd, Occurrences: r, Multiplier: sigma, Change: 1, Steps: steps}
}

func mustStepRDP(t *testing.T, h HypergeomGaussian, alpha float64) float64 {
	t.Helper()
	g, err := h.StepRDP(alpha)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestHypergeomPMF(t *testing.T) {
	b, err := HypergeomPMF(10, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.0 / 6, 1.0 / 2, 3.0 / 10, 1.0 / 30}
	if len(b) != len(want) {
		t.Fatalf("β = %v, want %v", b, want)
	}
	for i := range want {
		assertRel(t, "β_i (10, 3, 4)", b[i], want[i], 1e-14)
	}
	b, err = HypergeomPMF(10000, 121, 256)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 122 {
		t.Fatalf("len β = %d, want 122", len(b))
	}
	for i, w := range []float64{0.0425459848, 0.1369393626, 0.2176802336, 0.2278413581, 0.1766379949} {
		assertAbs(t, "β_i (1e4, 121, 256)", b[i], w, 6e-11)
	}
	sum := 0.0
	for _, v := range b {
		sum += v
	}
	assertAbs(t, "Σβ", sum, 1, 1e-12)
	// Lower end of the support: 8 draws of 10 with 5 marked contain ≥ 3.
	b, _ = HypergeomPMF(10, 5, 8)
	if b[0] != 0 || b[1] != 0 || b[2] != 0 || b[3] == 0 {
		t.Errorf("support of (10, 5, 8): %v", b)
	}
	// Exact: C(5,3)C(5,5)/C(10,8) = 10/45.
	assertRel(t, "β_3 (10, 5, 8)", b[3], 10.0/45, 1e-14)
	for _, bad := range []struct {
		n, k, d int
		msg     string
	}{
		{0, 0, 1, "population 0"}, {10, 3, 0, "0 draws"}, {10, 3, 11, "11 draws"},
		{10, -1, 4, "-1 marked"}, {10, 11, 4, "11 marked"},
	} {
		if _, err := HypergeomPMF(bad.n, bad.k, bad.d); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("HypergeomPMF(%d, %d, %d) error %v, want one naming %q", bad.n, bad.k, bad.d, err, bad.msg)
		}
	}
}

// TestHypergeomGaussianGamma checks γ(α) of ASGL's Theorem 2 (with the
// 1/(α−1) restored) against the reference vectors, a hand computation, full
// batches, an independent exact-β computation, and its monotonicity.
func TestHypergeomGaussianGamma(t *testing.T) {
	for _, tc := range asglVectors {
		got := mustStepRDP(t, thm2(tc.nTr, tc.bd, tc.r, tc.sigma, 1), tc.alpha)
		assertRel(t, "γ vs float64 reference", got, tc.want, 5e-7)
		assertRel(t, "γ vs mpmath", got, tc.exact, 1e-11)
	}
	assertRel(t, "γ hand check", mustStepRDP(t, thm2(10, 4, 3, 1, 1), 2),
		math.Log(1.0/6+0.5*math.Exp(1.0/9)+0.3*math.Exp(4.0/9)+math.E/30), 1e-14)
	// Full batch: i = R always, γ = α/(2z²) whatever Change (z is the std
	// over R·Change·C: the Gaussian of multiplier z).
	assertRel(t, "full batch", mustStepRDP(t, thm2(50, 50, 13, 1, 1), 4), 2, 1e-13)
	h := thm2(50, 50, 13, 1, 1)
	h.Change = 2
	assertRel(t, "full batch, change 2", mustStepRDP(t, h, 4), 2, 1e-13)
	// R above the population: every subgraph may differ; β has all its mass
	// at i = N_tr = B_d, and the noise keeps its scale σ·R·C.
	assertRel(t, "R > N_tr", mustStepRDP(t, thm2(20, 20, 40, 1, 1), 3), 3.0*20*20/(2*40*40), 1e-13)
	// One convention: the curve depends on z alone, Change only scales
	// the std (z·R·Change·C); the paper's σ = z·Change at change 2 is
	// the curve of σ/2 at change 1.
	for _, alpha := range []float64{1.5, 2, 7.25, 40} {
		h2 := thm2(1000, 128, 13, 1, 1)
		h2.Change = 2
		assertRel(t, "change 2 at z", mustStepRDP(t, h2, alpha), mustStepRDP(t, thm2(1000, 128, 13, 1, 1), alpha), 1e-13)
		if s := h2.NoiseStd(1); s != 2*13 {
			t.Errorf("change 2, z 1, R 13: noise std %g, want 26", s)
		}
	}
	// Independent computation with exact β (math/big) on a case with a
	// lower support bound above 0.
	for _, alpha := range []float64{1.25, 2, 3.5, 16} {
		n, r, bd, sigma := 30, 13, 24, 1.5
		total := binomRat(n, bd)
		s := 0.0
		for i := 0; i <= min(r, bd); i++ {
			num := new(big.Rat).Mul(binomRat(r, i), binomRat(n-r, bd-i))
			beta, _ := new(big.Rat).Quo(num, total).Float64()
			fi := float64(i)
			s += beta * math.Exp(alpha*(alpha-1)*fi*fi/(2*sigma*sigma*float64(r*r)))
		}
		assertRel(t, "γ vs exact β", mustStepRDP(t, thm2(n, bd, r, sigma, 1), alpha), math.Log(s)/(alpha-1), 1e-12)
	}
	// Monotone: up in α and B_d, down in σ.
	prev := 0.0
	for _, alpha := range []float64{1.01, 1.5, 2, 3, 8, 32, 128, 1024, 1e5} {
		g := mustStepRDP(t, thm2(10000, 256, 121, 4, 1), alpha)
		if !(g > prev) || math.IsNaN(g) {
			t.Errorf("γ(α=%g) = %g not above γ at the previous order %g", alpha, g, prev)
		}
		prev = g
	}
	prev = 0
	for _, bd := range []int{1, 16, 128, 256, 1024, 10000} {
		g := mustStepRDP(t, thm2(10000, bd, 121, 4, 1), 8)
		if !(g > prev) {
			t.Errorf("γ(B_d=%d) = %g not above %g", bd, g, prev)
		}
		prev = g
	}
	prev = math.Inf(1)
	for _, sigma := range []float64{0.5, 1, 2, 4, 8} {
		g := mustStepRDP(t, thm2(10000, 256, 121, sigma, 1), 8)
		if !(g < prev) {
			t.Errorf("γ(σ=%g) = %g not below %g", sigma, g, prev)
		}
		prev = g
	}
	// Vanishing exponents underflow to 0, never NaN.
	if g := mustStepRDP(t, thm2(10000, 256, 121, 1e160, 1), 1.5); g != 0 {
		t.Errorf("γ at σ = 1e160 = %g, want 0", g)
	}
	// Huge orders overflow to +Inf, never NaN.
	if g := mustStepRDP(t, thm2(100, 50, 40, 0.01, 1), 1e300); !math.IsInf(g, 1) {
		t.Errorf("γ at α = 1e300 = %g, want +Inf", g)
	}
}

func binomRat(n, k int) *big.Rat {
	if k < 0 || k > n {
		return new(big.Rat)
	}
	return new(big.Rat).SetInt(new(big.Int).Binomial(int64(n), int64(k)))
}

// TestHypergeomGaussianEvent checks the conversion example (T = 1000 steps
// of each discriminator, so 2T = 2000 composed steps; σ = 4, N_tr = 1e4,
// B_d = 256, R = R_{3,4} = 121, δ = 1e-5, standard conversion).
func TestHypergeomGaussianEvent(t *testing.T) {
	event, err := thm2(10000, 256, 121, 4, 2000).Event()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(event.String(), "population=10000") || !strings.Contains(event.String(), "count=2000") {
		t.Errorf("event label %q", event)
	}
	at8, _ := NewRDP(WithOrders(8), WithConversion(ConversionStandard), WithoutRefinement())
	if err := at8.Compose(event); err != nil {
		t.Fatal(err)
	}
	assertRel(t, "2Tγ at α=8", at8.Curve()[0], 0.429864884, 5e-8)
	eps, _ := at8.Epsilon(1e-5)
	assertRel(t, "ε at α=8", eps, 2.07456852, 1e-8)
	list, _ := NewRDP(WithOrders(1.5, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64),
		WithConversion(ConversionStandard), WithoutRefinement())
	if err := list.Compose(event); err != nil {
		t.Fatal(err)
	}
	eps, order, _ := list.EpsilonAndOrder(1e-5)
	assertRel(t, "best ε over the list", eps, 1.62953523, 1e-8)
	if order != 16 {
		t.Errorf("best order %v, want 16", order)
	}
	// The default accountant can only do better.
	def, _ := NewRDP(WithConversion(ConversionStandard))
	if err := def.Compose(event); err != nil {
		t.Fatal(err)
	}
	if e, _ := def.Epsilon(1e-5); e > 1.62953523 {
		t.Errorf("default grid ε %v above the list's", e)
	}
	for _, name := range []string{"rdp", "rdp-standard"} {
		e, err := EpsilonOf(name, []Event{event}, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if !(e <= 1.62953523) || e < 1 {
			t.Errorf("%s ε = %v, want in [1, 1.6295] (finer orders only help)", name, e)
		}
	}
	// Composing 200 one-step events equals one 200-step event.
	one, _ := thm2(10000, 256, 121, 4, 1).Event()
	many, _ := thm2(10000, 256, 121, 4, 200).Event()
	a, _ := NewRDP(WithConversion(ConversionStandard))
	for range 200 {
		if err := a.Compose(one); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := NewRDP(WithConversion(ConversionStandard))
	_ = b.Compose(many)
	ea, _ := a.Epsilon(1e-5)
	eb, _ := b.Epsilon(1e-5)
	assertRel(t, "200 × 1 step vs 200 steps", ea, eb, 1e-9)
	// NoiseStd: σ·R·C.
	assertRel(t, "noise std", thm2(10000, 256, 121, 4, 1).NoiseStd(0.5), 242, 1e-15)
}

func TestHypergeomGaussianValidate(t *testing.T) {
	ok := thm2(10000, 256, 121, 4, 10)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod func(*HypergeomGaussian)
		msg string
	}{
		{func(h *HypergeomGaussian) { h.Population = 0 }, "population N_tr = 0"},
		{func(h *HypergeomGaussian) { h.Batch = 0 }, "batch B_d = 0"},
		{func(h *HypergeomGaussian) { h.Batch = 10001 }, "batch B_d = 10001"},
		{func(h *HypergeomGaussian) { h.Occurrences = 0 }, "occurrence bound R = 0"},
		{func(h *HypergeomGaussian) { h.Multiplier = 0 }, "hypergeometric Gaussian z"},
		{func(h *HypergeomGaussian) { h.Multiplier = math.NaN() }, "hypergeometric Gaussian z"},
		{func(h *HypergeomGaussian) { h.Change = 0 }, "change per subgraph"},
		{func(h *HypergeomGaussian) { h.Steps = 0 }, "steps"},
		{func(h *HypergeomGaussian) { h.Population, h.Batch, h.Occurrences = 1<<22, 1<<21, 1<<21 }, "mixture terms"},
	} {
		h := ok
		tc.mod(&h)
		err := h.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: error %v, want one naming %q", h, err, tc.msg)
		}
		if _, err := h.Event(); err == nil {
			t.Errorf("%+v: Event accepted invalid parameters", h)
		}
	}
	if _, err := ok.StepRDP(1); err == nil {
		t.Error("StepRDP(α = 1): want an error")
	}
}

// TestCalibrateHypergeomGaussian checks that calibration returns the
// smallest σ within the budget.
func TestCalibrateHypergeomGaussian(t *testing.T) {
	h := thm2(10000, 256, 121, 0, 2000)
	for _, conv := range []Conversion{ConversionStandard, ConversionImproved} {
		for _, target := range []float64{1, 1.62953523, 4} {
			z, err := calibrateHypergeomGaussian(target, 1e-5, h, conv)
			if err != nil {
				t.Fatal(err)
			}
			epsAt := func(z float64) float64 {
				hz := h
				hz.Multiplier = z
				e, err := hz.Event()
				if err != nil {
					t.Fatal(err)
				}
				a, _ := NewRDP(WithConversion(conv))
				_ = a.Compose(e)
				eps, _ := a.Epsilon(1e-5)
				return eps
			}
			if e := epsAt(z); e > target {
				t.Errorf("%v target %g: σ = %g gives ε = %g above the target", conv, target, z, e)
			}
			if e := epsAt(z * (1 - 1e-6)); e <= target {
				t.Errorf("%v target %g: σ = %g is not the smallest (ε(0.999999σ) = %g)", conv, target, z, e)
			}
			if conv == ConversionStandard && target == 1.62953523 && !(z > 3.9 && z <= 4) {
				t.Errorf("σ for the example's ε = %g, want in (3.9, 4]", z)
			}
		}
	}
	if z, err := calibrateHypergeomGaussian(math.Inf(1), 1e-5, h, ConversionStandard); err != nil || z != 0 {
		t.Errorf("ε = ∞: σ = %v, %v; want 0", z, err)
	}
	bad := h
	bad.Batch = 0
	if _, err := calibrateHypergeomGaussian(1, 1e-5, bad, ConversionStandard); err == nil {
		t.Error("calibration accepted B_d = 0")
	}
}

func TestFixedSample(t *testing.T) {
	src := NewSource(7)
	const n, size, rounds = 20, 5, 20000
	counts := make([]int, n)
	for range rounds {
		s, err := FixedSample(src, n, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != size {
			t.Fatalf("sample %v has %d items, want %d", s, len(s), size)
		}
		for k, v := range s {
			if v < 0 || v >= n || (k > 0 && s[k-1] >= v) {
				t.Fatalf("sample %v: out of range, unsorted or repeated", s)
			}
			counts[v]++
		}
	}
	probs := make([]float64, n)
	for i := range probs {
		probs[i] = 1.0 / n
	}
	if p := chiSquarePValue(counts, probs); p < 1e-4 {
		t.Errorf("inclusion counts %v not uniform (p = %g)", counts, p)
	}
	// Pairs: every 2-subset of {0..3} equally likely for size 2 of 4.
	pairs := map[[2]int]int{}
	for range 12000 {
		s, _ := FixedSample(src, 4, 2)
		pairs[[2]int{s[0], s[1]}]++
	}
	obs := make([]int, 0, 6)
	for _, c := range pairs {
		obs = append(obs, c)
	}
	if len(obs) != 6 {
		t.Fatalf("saw %d distinct pairs, want 6", len(obs))
	}
	if p := chiSquarePValue(obs, []float64{1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6}); p < 1e-4 {
		t.Errorf("pair counts %v not uniform (p = %g)", pairs, p)
	}
	if s, err := FixedSample(src, 5, 5); err != nil || len(s) != 5 || s[4] != 4 {
		t.Errorf("full sample %v, %v", s, err)
	}
	if s, err := FixedSample(src, 5, 0); err != nil || len(s) != 0 {
		t.Errorf("empty sample %v, %v", s, err)
	}
	for _, bad := range [][2]int{{5, 6}, {5, -1}, {-1, 0}} {
		if _, err := FixedSample(src, bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), "fixed-size sample") {
			t.Errorf("FixedSample(n=%d, size=%d): error %v", bad[0], bad[1], err)
		}
	}
}

// TestHypergeomGaussianStepLedger: Event is Composed{Steps, Step}, and a
// plan declaring Event is met by exactly Steps one-step records (Step).
func TestHypergeomGaussianStepLedger(t *testing.T) {
	h := thm2(10000, 256, 121, 4, 5)
	whole, err := h.Event()
	if err != nil {
		t.Fatal(err)
	}
	step, err := h.Step()
	if err != nil || whole != (Composed{Count: 5, Event: step}) || strings.Contains(step.String(), "steps") {
		t.Fatalf("step event %v (%v), whole %v", step, err, whole)
	}
	ew, _ := EpsilonOf("rdp", []Event{whole}, 1e-5)
	each, _ := EpsilonOf("rdp", []Event{step, step, step, step, step}, 1e-5)
	assertRel(t, "5 steps vs the composed event", each, ew, 1e-12)
	plan := &Plan{Level: "node", Epsilon: math.Inf(1), Delta: 1e-5, Accountant: "rdp",
		Releases: []Planned{{Name: "d", Event: whole}}}
	l := NewLedger()
	for k := 1; k <= 6; k++ {
		l.Record("d", step)
		err := plan.Check(l)
		if (k == 5) != (err == nil) {
			t.Errorf("%d one-step records against 5 planned steps: %v", k, err)
		}
	}
}
