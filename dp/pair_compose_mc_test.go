package dp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPairPLDComposedAboveMonteCarlo checks the composed PLD of large
// group pairs (where its composition once returned ε = 0) against an
// estimate that shares none of its code paths: δ_T(ε) = E[(1 − e^{ε−ΣL})₊]
// over T independent steps, L the exact pair's privacy loss (no binomial
// tail truncation, no noise snap, no loss clip, no grid) at a draw from
// P (direction 0) or Q (direction 1, loss negated). The accountant's δ
// (the larger direction) must not fall below either estimate by more than
// five standard errors. Noise levels are picked so that δ(ε) is between
// about 1e-3 and 0.5 at the ε tried, where the estimate is informative.
func TestPairPLDComposedAboveMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo over large pairs")
	}
	const n = 16000
	for _, c := range []struct {
		q        float64
		del, ins int
		noise    float64
		steps    int
	}{
		{0.0394, 169, 169, 25, 20},
		{0.1, 60, 59, 12, 3},
	} {
		g := GroupPair{Rate: c.q, Deleted: c.del, Inserted: c.ins, Noise: c.noise, Steps: 1}
		acct, err := NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		gs := g
		gs.Steps = c.steps
		if err := acct.ComposeGroupPair(gs); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		p := g.pair()
		rng := rand.New(rand.NewPCG(uint64(c.del), uint64(c.steps)))
		// Summed losses of n runs of T steps, per direction.
		sums := [2][]float64{make([]float64, n), make([]float64, n)}
		for dir := range 2 {
			pp := p
			if dir == 1 {
				pp = p.swap()
			}
			cnt := c.del
			if dir == 1 {
				cnt = c.ins
			}
			for i := range n {
				var s float64
				for range c.steps {
					k := 0
					for range cnt {
						if rng.Float64() < c.q {
							k++
						}
					}
					x := -float64(k) + pp.s*rng.NormFloat64()
					l, _ := pp.loss(x)
					s += l
				}
				sums[dir][i] = s
			}
		}
		tried := 0
		for _, eps := range []float64{0.5, 1, 2, 4, 8} {
			got, err := acct.Delta(eps)
			if err != nil {
				t.Fatal(err)
			}
			for dir := range 2 {
				var m, m2 float64
				for _, s := range sums[dir] {
					v := math.Max(0, -math.Expm1(eps-s))
					m += v
					m2 += v * v
				}
				m /= n
				se := math.Sqrt(math.Max(0, m2/n-m*m) / n)
				if m > 1e-3 && m < 0.5 {
					tried++
				}
				if got < m-5*se {
					t.Errorf("%+v ε=%g dir %d: accountant δ %.4g below the Monte Carlo %.4g ± %.2g", c, eps, dir, got, m, se)
				}
				if testing.Verbose() {
					fmt.Printf("%+v ε=%g dir %d: pld δ %.4g, Monte Carlo %.4g ± %.2g\n", c, eps, dir, got, m, se)
				}
			}
		}
		if tried == 0 {
			t.Errorf("%+v: no ε with an informative δ (between 1e-3 and 0.5): pick another noise", c)
		}
	}
}
