package dp

import (
	"github.com/dpgnn/dpgnn/internal/testutil"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/internal/vec"
	"gonum.org/v1/gonum/stat/distuv"
)

// Exactness tests of the samplers other than the ziggurat: each checks
// probabilities the accounting relies on (per branch, per cell) against
// their analytic values within a 5σ binomial band, with enough draws that a
// deviation of about 1 % of a cell's probability is caught.

// TestExactUniformWords: Uniform's map from a word is the midpoint
// (k+½)/2⁵² of the word's top 52 bits, exactly, for every word including
// the extremes; it is never 0 or 1, and the all-ones word (which gave
// exactly 1 with a 53-bit grid, hence +Inf Laplace and Gumbel draws) gives a
// finite Gumbel and Laplace draw. The law is symmetric: vec.UnitOpen(^w) =
// 1 − vec.UnitOpen(w) exactly.
func TestExactUniformWords(t *testing.T) {
	words := []uint64{0, 1, 1<<12 - 1, 1 << 12, 1<<63 - 1, 1 << 63, 1<<63 + 1<<12, ^uint64(0) - 1<<12, ^uint64(0) - 1, ^uint64(0)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		words = append(words, r.Uint64())
	}
	for _, w := range words {
		if u := vec.UnitOpen(w); !(u > 0 && u < 1) {
			t.Fatalf("vec.UnitOpen(%#x) = %v, outside (0, 1)", w, u)
		}
	}
	for _, w := range words {
		u := vec.UnitOpen(w)
		if k := u*(1<<52) - 0.5; k != float64(w>>12) {
			t.Fatalf("vec.UnitOpen(%#x) = %v = (%v+½)/2⁵², want k = %d", w, u, k, w>>12)
		}
		if m := vec.UnitOpen(^w); m != 1-u {
			t.Fatalf("vec.UnitOpen(^%#x) = %v, want 1 − %v = %v", w, m, u, 1-u)
		}
	}
	top := vec.UnitOpen(^uint64(0))
	if g := -math.Log(-math.Log(top)); math.IsInf(g, 0) || math.IsNaN(g) {
		t.Errorf("Gumbel of the largest uniform %v is %v", top, g)
	}
	if l := -math.Log1p(-2 * (top - 0.5)); math.IsInf(l, 0) || math.IsNaN(l) {
		t.Errorf("Laplace of the largest uniform %v is %v", top, l)
	}
	if e := -math.Log(top); !(e > 0) {
		t.Errorf("Exponential of the largest uniform %v is %v, want > 0", top, e)
	}
	// Source.Uniform is vec.UnitOpen of the stream's next word.
	a, b := NewSource(5), NewSource(5)
	for i := range 1000 {
		if x, y := a.Uniform(), vec.UnitOpen(b.Uint64()); x != y {
			t.Fatalf("draw %d: Uniform %v, vec.UnitOpen of the word %v", i, x, y)
		}
	}
}

// TestExactLaplaceBranches: each sign's branch of Laplace.draw has
// mass ½ and tail P(±X > t) = ½·e^{−t/b}; draws are finite, within the
// grid's range b·52·ln 2 on both sides.
func TestExactLaplaceBranches(t *testing.T) {
	const n = 2_000_000
	l := Laplace{Scale: 0.7}
	x, err := l.Sample(n, NewSource(101))
	if err != nil {
		t.Fatal(err)
	}
	ts := []float64{0.05, 0.5, 1, 2, 4, 8}
	var neg int
	pos, lo := make([]int, len(ts)), make([]int, len(ts))
	limit := l.Scale * 52 * math.Ln2
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > limit {
			t.Fatalf("Laplace draw %v", v)
		}
		if v < 0 {
			neg++
		}
		for i, s := range ts {
			if v > s*l.Scale {
				pos[i]++
			}
			if v < -s*l.Scale {
				lo[i]++
			}
		}
	}
	testutil.ExactBinom(t, "P(X < 0)", neg, n, 0.5)
	for i, s := range ts {
		p := 0.5 * math.Exp(-s)
		testutil.ExactBinom(t, "P(X > "+ftoa(s)+"b)", pos[i], n, p)
		testutil.ExactBinom(t, "P(X < −"+ftoa(s)+"b)", lo[i], n, p)
	}
}

// TestExactExponential: P(E > t) = e^{−t}.
func TestExactExponential(t *testing.T) {
	const n = 2_000_000
	src := NewSource(102)
	ts := []float64{0.01, 0.1, 0.5, 1, 2, 5, 10}
	c := make([]int, len(ts))
	for range n {
		e := src.Exponential()
		if !(e > 0) || math.IsInf(e, 0) {
			t.Fatalf("Exponential draw %v", e)
		}
		for i, s := range ts {
			if e > s {
				c[i]++
			}
		}
	}
	for i, s := range ts {
		testutil.ExactBinom(t, "P(E > "+ftoa(s)+")", c[i], n, math.Exp(-s))
	}
}

// TestExactGumbelCDF: P(G ≤ x) = exp(−e^{−x/β}) over both tails.
func TestExactGumbelCDF(t *testing.T) {
	const n = 2_000_000
	g := Gumbel{Scale: 1.3}
	x, err := g.Sample(n, NewSource(103))
	if err != nil {
		t.Fatal(err)
	}
	zs := []float64{-2, -1, 0, 0.5, 1, 3, 6, 9}
	c := make([]int, len(zs))
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("Gumbel draw %v", v)
		}
		for i, z := range zs {
			if v <= z*g.Scale {
				c[i]++
			}
		}
	}
	for i, z := range zs {
		testutil.ExactBinom(t, "P(G ≤ "+ftoa(z)+"β)", c[i], n, math.Exp(-math.Exp(-z)))
	}
}

// TestExactGumbelTopKPeeling: one-shot Gumbel top-3 returns ordered
// triples with the law of three exponential-mechanism rounds without
// replacement, cell by cell (24 cells, tied scores included).
func TestExactGumbelTopKPeeling(t *testing.T) {
	u := []float64{0, 0.3, 0.3, 1.2}
	const scale, k, n = 0.5, 3, 300_000
	m := len(u)
	p := testutil.Softmax(u, scale)
	src := NewSource(104)
	counts := map[[3]int]int{}
	for range n {
		idx, err := GumbelTopK(u, k, scale, src)
		if err != nil {
			t.Fatal(err)
		}
		counts[[3]int{idx[0], idx[1], idx[2]}]++
	}
	cells := 0
	for i := range m {
		for j := range m {
			for l := range m {
				if i == j || j == l || i == l {
					continue
				}
				cells++
				pr := p[i] * p[j] / (1 - p[i]) * p[l] / (1 - p[i] - p[j])
				testutil.ExactBinom(t, "top-3 = ("+itoa(i)+","+itoa(j)+","+itoa(l)+")", counts[[3]int{i, j, l}], n, pr)
			}
		}
	}
	if len(counts) > cells {
		t.Errorf("%d distinct outputs, at most %d are valid (a repeated index)", len(counts), cells)
	}
}

// TestExactFixedSampleSubsets: every size-subset of [0, n) is
// equally likely, cell by cell.
func TestExactFixedSampleSubsets(t *testing.T) {
	src := NewSource(105)
	for _, tc := range []struct{ n, size, subsets, draws int }{
		{6, 3, 20, 200_000}, {5, 4, 5, 50_000}, {7, 1, 7, 70_000}, {9, 2, 36, 180_000},
	} {
		counts := map[uint64]int{}
		for range tc.draws {
			s, err := FixedSample(src, tc.n, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			var mask uint64
			for _, v := range s {
				if v < 0 || v >= tc.n || mask&(1<<v) != 0 {
					t.Fatalf("sample %v of %d", s, tc.n)
				}
				mask |= 1 << v
			}
			if len(s) != tc.size {
				t.Fatalf("sample %v, want %d items", s, tc.size)
			}
			counts[mask]++
		}
		if len(counts) != tc.subsets {
			t.Errorf("n=%d size=%d: %d distinct subsets, want %d", tc.n, tc.size, len(counts), tc.subsets)
		}
		for mask, c := range counts {
			testutil.ExactBinom(t, "FixedSample n="+itoa(tc.n)+" size="+itoa(tc.size)+" subset "+itoa(int(mask)), c, tc.draws, 1/float64(tc.subsets))
		}
	}
}

// TestExactPoissonSample: each index is kept with probability q, the
// batch size is Binomial(n, q) and neighbouring indices are kept together
// with probability q² (independence; the sampler draws the gaps between
// kept indices), at a large q over few indices and a small one over many;
// q = 0 keeps nothing and q = 1 everything.
func TestExactPoissonSample(t *testing.T) {
	for _, tc := range []struct {
		n     int
		q     float64
		draws int
	}{{8, 0.3, 1_000_000}, {300, 0.02, 200_000}} {
		n, q, draws := tc.n, tc.q, tc.draws
		src := NewSource(106 + uint64(n))
		kept := make([]int, n)
		pairs := make([]int, n-1)
		sizes := make([]int, n+1)
		for range draws {
			s := PoissonSample(src, n, q)
			for k, v := range s {
				if v < 0 || v >= n || (k > 0 && s[k-1] >= v) {
					t.Fatalf("sample %v", s)
				}
				kept[v]++
				if k > 0 && s[k-1] == v-1 {
					pairs[v-1]++
				}
			}
			sizes[len(s)]++
		}
		name := func(what string, i int) string { return "n=" + itoa(n) + ": " + what + " " + itoa(i) }
		total, together := 0, 0
		for i, c := range kept {
			if n <= 8 || i < 3 || i >= n-3 { // the first and last indices alone
				testutil.ExactBinom(t, name("P(index kept)", i), c, draws, q)
			}
			total += c
		}
		for _, c := range pairs {
			together += c
		}
		testutil.ExactBinom(t, name("P(kept), all indices", n), total, n*draws, q)
		testutil.ExactBinom(t, name("P(i and i+1 kept), all pairs", n-1), together, (n-1)*draws, q*q)
		b := distuv.Binomial{N: float64(n), P: q}
		for s, c := range sizes {
			if p := b.Prob(float64(s)); p > 1e-4 {
				testutil.ExactBinom(t, name("P(batch size)", s), c, draws, p)
			}
		}
	}
	src := NewSource(106)
	if s := PoissonSample(src, 1000, 0); len(s) != 0 {
		t.Errorf("q = 0 kept %v", s)
	}
	if s := PoissonSample(src, 1000, 1); len(s) != 1000 {
		t.Errorf("q = 1 kept %d of 1000", len(s))
	}
	if s := PoissonSample(src, 0, 0.5); len(s) != 0 {
		t.Errorf("n = 0 kept %v", s)
	}
}

// TestExactCandidatesDraw: inversion draws every K with its pmf,
// cell by cell, for the Poisson and truncated negative binomial laws.
func TestExactCandidatesDraw(t *testing.T) {
	const n = 200_000
	for i, c := range []Candidates{
		{Kind: "poisson", Mu: 3}, {Kind: "poisson", Mu: 0.4},
		{Kind: "negbin", Eta: 1, Gamma: 0.25}, {Kind: "negbin", Eta: 0, Gamma: 0.2},
		{Kind: "negbin", Eta: -0.5, Gamma: 0.3}, {Kind: "negbin", Eta: 2.5, Gamma: 0.4},
	} {
		src := NewSource(120 + uint64(i))
		counts := map[int]int{}
		for range n {
			counts[c.Draw(src)]++
		}
		top := 0
		for k := range counts {
			top = max(top, k)
		}
		rest, restP := 0, 0.0
		for k := 0; k <= top; k++ {
			p := c.pmf(k)
			if p < 1e-3 {
				rest += counts[k]
				restP += p
				continue
			}
			testutil.ExactBinom(t, c.String()+" P(K="+itoa(k)+")", counts[k], n, p)
		}
		testutil.ExactBinom(t, c.String()+" small cells", rest, n, restP)
	}
}
