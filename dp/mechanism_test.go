package dp

import (
	"github.com/dpgnn/dpgnn/internal/testutil"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

const (
	statN     = 20000
	statAlpha = 1e-3 // reject a law at p < statAlpha (fixed seeds: stable)
)

func TestGaussianMechanism(t *testing.T) {
	g := Gaussian{Multiplier: 1.5, Sensitivity: 2}
	if g.Std() != 3 {
		t.Fatalf("Std = %v, want 3", g.Std())
	}
	x, err := g.Sample(statN, NewSource(11))
	if err != nil {
		t.Fatal(err)
	}
	s := g.Std()
	testutil.CheckMoments(t, "Gaussian", x, 0, s*s, 3*s*s*s*s)
	if _, p := ksPValue(x, distuv.Normal{Mu: 0, Sigma: s}.CDF); p < statAlpha {
		t.Errorf("Gaussian noise fails KS against N(0, %g²): p = %g", s, p)
	}

	// AddNoise adds, in place, noise at the claimed scale to every element.
	base := make([]float64, statN)
	for i := range base {
		base[i] = float64(i % 7)
	}
	y := append([]float64(nil), base...)
	if err := g.AddNoise(y, NewSource(12)); err != nil {
		t.Fatal(err)
	}
	diff := make([]float64, len(y))
	for i := range y {
		diff[i] = y[i] - base[i]
		if diff[i] == 0 {
			t.Fatalf("element %d got no noise", i)
		}
	}
	testutil.CheckMoments(t, "Gaussian AddNoise", diff, 0, s*s, 3*s*s*s*s)

	// Zero multiplier: no noise; the event is still refused by accountants.
	z := append([]float64(nil), base...)
	if err := (Gaussian{Multiplier: 0, Sensitivity: 1}).AddNoise(z, NewSource(1)); err != nil {
		t.Fatal(err)
	}
	for i := range z {
		if z[i] != base[i] {
			t.Fatal("zero multiplier changed the input")
		}
	}
	if ev := g.Event(3); ev != (GaussianEvent{Multiplier: 1.5, Count: 3}) {
		t.Errorf("Event = %v", ev)
	}

	for _, bad := range []Gaussian{{-1, 1}, {math.NaN(), 1}, {1, -1}, {math.Inf(1), 1}} {
		if err := bad.AddNoise(z, NewSource(1)); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	if err := g.AddNoise(z, nil); err == nil {
		t.Error("nil source: want an error")
	}
	if _, err := g.Sample(-1, NewSource(1)); err == nil {
		t.Error("negative n: want an error")
	}
}

func TestLaplaceMechanism(t *testing.T) {
	l, err := LaplaceForEpsilon(0.5, 0.35) // b = 0.7
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "scale", l.Scale, 0.7, 1e-15)
	assertRel(t, "epsilon", l.Epsilon(0.35), 0.5, 1e-15)
	x, err := l.Sample(statN, NewSource(21))
	if err != nil {
		t.Fatal(err)
	}
	b := l.Scale
	testutil.CheckMoments(t, "Laplace", x, 0, 2*b*b, 24*b*b*b*b)
	cdf := func(v float64) float64 {
		if v < 0 {
			return 0.5 * math.Exp(v/b)
		}
		return 1 - 0.5*math.Exp(-v/b)
	}
	if _, p := ksPValue(x, cdf); p < statAlpha {
		t.Errorf("Laplace noise fails KS: p = %g", p)
	}
	ev, err := l.Event(0.35, 4)
	if err != nil || ev.Count != 4 || !relClose(ev.Epsilon, 0.5, 1e-15) {
		t.Errorf("Event = %v, %v", ev, err)
	}
	if _, err := LaplaceForEpsilon(0, 1); err == nil {
		t.Error("epsilon 0: want an error")
	}
	if _, err := (Laplace{Scale: -1}).Sample(3, NewSource(1)); err == nil {
		t.Error("negative scale: want an error")
	}
	if _, err := (Laplace{}).Event(1, 1); err == nil {
		t.Error("zero scale has no finite epsilon: want an error")
	}
}

func TestGumbelNoise(t *testing.T) {
	g := Gumbel{Scale: 1.3}
	x, err := g.Sample(statN, NewSource(31))
	if err != nil {
		t.Fatal(err)
	}
	const eulerGamma = 0.5772156649015329
	v := math.Pi * math.Pi * g.Scale * g.Scale / 6
	testutil.CheckMoments(t, "Gumbel", x, eulerGamma*g.Scale, v, 5.4*v*v)
	cdf := func(y float64) float64 { return math.Exp(-math.Exp(-y / g.Scale)) }
	if _, p := ksPValue(x, cdf); p < statAlpha {
		t.Errorf("Gumbel noise fails KS: p = %g", p)
	}
}

// TestGumbelTopKIsExponentialMechanism: one-shot Gumbel top-K has the law
// of K rounds of the exponential mechanism without replacement (Durfee &
// Rogers 2019).
func TestGumbelTopKIsExponentialMechanism(t *testing.T) {
	u := []float64{0, 0.5, 1, 1.5, 0.2}
	const scale = 0.8
	p := testutil.Softmax(u, scale)
	src := NewSource(51)

	counts := make([]int, len(u))
	for n := 0; n < statN; n++ {
		idx, err := GumbelTopK(u, 1, scale, src)
		if err != nil {
			t.Fatal(err)
		}
		counts[idx[0]]++
	}
	if pv := chiSquarePValue(counts, p); pv < statAlpha {
		t.Errorf("K=1 selection frequencies %v do not match softmax %v: p = %g", counts, p, pv)
	}

	// K=2: ordered pair (i, j) has probability p_i · p_j / (1 − p_i).
	m := len(u)
	pairCounts := make([]int, m*m)
	pairProbs := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if i != j {
				pairProbs[i*m+j] = p[i] * p[j] / (1 - p[i])
			}
		}
	}
	for n := 0; n < statN; n++ {
		idx, err := GumbelTopK(u, 2, scale, src)
		if err != nil {
			t.Fatal(err)
		}
		pairCounts[idx[0]*m+idx[1]]++
	}
	var obs []int
	var probs []float64
	for c, pr := range pairProbs {
		if pr > 0 {
			obs = append(obs, pairCounts[c])
			probs = append(probs, pr)
		} else if pairCounts[c] != 0 {
			t.Fatalf("an index was selected twice")
		}
	}
	if pv := chiSquarePValue(obs, probs); pv < statAlpha {
		t.Errorf("K=2 ordered pairs do not match peeling EM: p = %g", pv)
	}
}

func TestGumbelTopKExactAndErrors(t *testing.T) {
	scores := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	got, err := GumbelTopK(scores, 3, 0, NewSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{5, 7, 4}; !equalInts(got, want) {
		t.Errorf("exact top-3 = %v, want %v", got, want)
	}
	got, _ = GumbelTopK([]float64{1, 2, 2, 0}, 2, 0, NewSource(1))
	if want := []int{1, 2}; !equalInts(got, want) {
		t.Errorf("ties: got %v, want %v (lower index first)", got, want)
	}
	for _, tc := range []struct {
		name   string
		scores []float64
		k      int
		scale  float64
		src    *Source
	}{
		{"k=0", scores, 0, 1, NewSource(1)},
		{"k>n", scores, 9, 1, NewSource(1)},
		{"NaN score", []float64{1, math.NaN()}, 1, 1, NewSource(1)},
		{"Inf score", []float64{1, math.Inf(1)}, 1, 1, NewSource(1)},
		{"negative scale", scores, 1, -1, NewSource(1)},
		{"nil source", scores, 1, 1, nil},
	} {
		if _, err := GumbelTopK(tc.scores, tc.k, tc.scale, tc.src); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGumbelTopKCost checks DPAR's Corollary 1 (δ = 1e-4) in the code's and
// the paper's forms, and the EM-I Gumbel scales of DPAR's calibration chain
// (TestDPARCalibrationChain); reference values recomputed from the formulas.
func TestGumbelTopKCost(t *testing.T) {
	const delta = 1e-4
	for _, tc := range []struct {
		k    int
		epsC float64 // the code's per-round ε (scale = 2Δ/ε_c)
		want float64
	}{
		{2, 0.1, 0.2},
		{4, 1.3, 5.2},
		{32, 0.1, 2.5877502068814504},
	} {
		const sens = 0.001
		got, err := GumbelTopKEpsilon(2*sens/tc.epsC, sens, tc.k, delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "code form", got, tc.want, 1e-12)
		// Paper form: scale Δ/ε with 2·min{Kε, Kε·tanh(ε) + ε·sqrt(2K ln(1/δ))}.
		e := tc.epsC / 2
		k := float64(tc.k)
		paper := 2 * math.Min(k*e, k*e*(math.Exp(2*e)-1)/(math.Exp(2*e)+1)+e*math.Sqrt(2*k*math.Log(1/delta)))
		assertRel(t, "paper form", got, paper, 1e-12)
	}
	// Calibration chain: per-row ε_v and δ_v → EM-I Gumbel scale β (K = 2,
	// C2 = 0.001).
	for _, tc := range []struct{ epsV, want float64 }{{0.133123, 3.004746e-2}, {0.922226, 4.337332e-3}} {
		scale, err := GumbelTopKScale(tc.epsV, 7.936508e-5, 2, 0.001)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "EM-I Gumbel scale", scale, tc.want, 5e-6) // ε_v is given to 6 digits
		c, _ := GumbelTopKEpsilon(scale, 0.001, 2, 7.936508e-5)
		if c > tc.epsV || c < tc.epsV*(1-1e-9) {
			t.Errorf("round trip: cost %v for target %v", c, tc.epsV)
		}
	}
	if got, _ := GumbelTopKEpsilon(1, 1, 3, 0); got != 6 {
		t.Errorf("delta 0: got %v, want basic composition 6", got)
	}
	for _, bad := range [][4]float64{{0, 1, 1, 1e-4}, {1, 0, 1, 1e-4}, {1, 1, 0, 1e-4}, {1, 1, 1, 1}, {1, 1, 1, -1}} {
		if _, err := GumbelTopKEpsilon(bad[0], bad[1], int(bad[2]), bad[3]); err == nil {
			t.Errorf("GumbelTopKEpsilon%v: want an error", bad)
		}
	}
	if _, err := GumbelTopKScale(0, 1e-4, 2, 1); err == nil {
		t.Error("GumbelTopKScale(eps 0): want an error")
	}
}
