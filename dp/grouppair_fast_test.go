package dp

import (
	"fmt"
	"math"
	"testing"
)

// refProfile is a deliberately plain δ_{P‖Q}(ε) of a mixture pair: every
// component summed (no skipping), the root of L(x) = ε by bisection from a
// wide bracket, the CDFs summed over every component. The fast path
// (sweepProfile: skipped terms, warm-started Newton, clipped range) must
// never fall below it.
func refProfile(m mixPair, eps float64) float64 {
	full := func(x float64, means, logw []float64) float64 {
		best := math.Inf(-1)
		for i, mu := range means {
			t := (x - mu) / m.s
			best = math.Max(best, logw[i]-t*t/2)
		}
		var s float64
		for i, mu := range means {
			t := (x - mu) / m.s
			s += math.Exp(logw[i] - t*t/2 - best)
		}
		return best + math.Log(s)
	}
	loss := func(x float64) float64 { return full(x, m.pm, m.pl) - full(x, m.qm, m.ql) }
	a, b := -1e4*m.s, 1e4*m.s
	if !(loss(a) > eps) || !(loss(b) < eps) {
		// ε outside the range of L on the bracket: δ is (about) 0 or 1 − e^ε.
		if loss(b) >= eps {
			return math.Max(0, -math.Expm1(eps))
		}
		return 0
	}
	for range 300 {
		x := (a + b) / 2
		if loss(x) > eps {
			a = x
		} else {
			b = x
		}
	}
	x := (a + b) / 2
	cdf := func(means, logw []float64) float64 {
		var s float64
		for i, mu := range means {
			s += math.Exp(logw[i] + logNormCDF((x-mu)/m.s))
		}
		return s
	}
	return cdf(m.pm, m.pl) - math.Exp(eps)*cdf(m.qm, m.ql) + m.tp
}

// TestGroupPairPLDDominatesReference: the discretised PLD of the group pair
// as the accountant builds it (both directions) dominates the plain
// reference profile at ε on and between grid points, for node pairs of
// R = 3 … 169 examples, at noise levels from far below to above what a
// calibration picks (the smallest makes the loss range exceed pldMaxLoss,
// so the clipped range is tested too), and its profile is at most the reference one grid step lower
// (δ(ε − d), plus 1e-12) inside the discretised range. A
// shortcut that loses mass (skipping a live term, a root found short, a
// clip that drops the tail instead of moving it to +∞) fails it.
func TestGroupPairPLDDominatesReference(t *testing.T) {
	const d = 1e-3
	for _, c := range []struct {
		q          float64
		del, ins   int
		noise      float64
		checkClose bool
	}{
		{0.0394, 3, 3, 9.86, true},
		{0.2782, 3, 2, 15, true},
		{0.0394, 6, 6, 12, true},
		{0.0394, 41, 41, 40, true},
		{0.0394, 169, 169, 160, true},
		{0.0394, 41, 41, 0.3, false}, // loss range far beyond pldMaxLoss
		{0.5, 3, 0, 0.5, false},      // a one-sided pair at tiny noise
	} {
		g := GroupPair{Rate: c.q, Deleted: c.del, Inserted: c.ins, Noise: c.noise, Steps: 1}
		src := newMixSrc(g.pair())
		for dir := range 2 {
			pmf, err := src.build(dir, d)
			if err != nil {
				t.Fatalf("%+v dir %d: %v", c, dir, err)
			}
			p := src.dirPair(dir)
			lo, hi := p.lossRange()
			var worst float64
			for _, eps := range []float64{-2, -0.5, -0.01, 0, 0.003, 0.0105, 0.07, 0.3, 0.77, 1.5, 3, 8, 25, 39.99, 45, 80} {
				ref := refProfile(p, eps)
				got := pmf.delta(eps)
				if got < ref-1e-15 {
					t.Errorf("%+v dir %d ε=%g: discretised δ %.17g below the reference %.17g", c, dir, eps, got, ref)
				}
				// Close: connect-the-dots is below the profile shifted by
				// one grid step, δ(ε − d), inside the discretised range.
				if c.checkClose && eps > lo+d && eps < hi-d {
					if ex := got - refProfile(p, eps-d); ex > worst {
						worst = ex
					}
				}
			}
			if worst > 1e-12 {
				t.Errorf("%+v dir %d: discretised δ up to %.3g above the reference one grid step lower", c, dir, worst)
			}
		}
	}
}

// TestSweepProfileMatchesProfile: the warm-started sweep (invLossNear)
// gives the same δ as the search from scratch (profile) at every grid
// point, to 1e-13 absolute and relative, in increasing order as ctdPMF asks
// and also out of order (which falls back to the search).
func TestSweepProfileMatchesProfile(t *testing.T) {
	for _, g := range []GroupPair{
		{Rate: 0.0394, Deleted: 3, Inserted: 3, Noise: 2.9, Steps: 1},
		{Rate: 0.0394, Deleted: 41, Inserted: 41, Noise: 39.5, Steps: 1},
		{Rate: 0.2782, Deleted: 3, Inserted: 2, Noise: 1.1, Steps: 1},
	} {
		for dir, p := range []mixPair{g.pair(), g.pair().swap()} {
			f := p.sweepProfile()
			lo, hi := p.lossRange()
			iLo, iHi, err := gridRange(lo, hi, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			check := func(i int) {
				eps := float64(i) * 1e-3
				v, _ := f(eps)
				w, _ := p.profile(eps)
				if math.Abs(v-w) > 1e-13*(1+math.Abs(w)) {
					t.Errorf("%v dir %d ε=%g: sweep %.17g, search %.17g", g, dir, eps, v, w)
				}
			}
			for i := iLo; i <= iHi; i++ {
				check(i)
			}
			for i := iHi; i >= iLo; i -= 97 {
				check(i)
			}
		}
	}
}

// TestExactHiSnappedIsUpperBound: the memoised anchor value, computed at
// the noise snapped down to exactHi's grid, is never below the certified
// lower end at the unsnapped noise (the data-processing argument in
// exactHi's doc: a shortcut that snapped up, or dropped the snap's
// direction, fails here at noise levels just below a grid level), and it
// is within 5 % of the precise upper end from order 4 up (35 % below).
func TestExactHiSnappedIsUpperBound(t *testing.T) {
	for _, s := range []float64{2.9, 9.86, math.Exp2(3 + 17.0/pairNoiseSteps), math.Nextafter(math.Exp2(3+17.0/pairNoiseSteps), 0), 40} {
		if v := snapNoise(s); !(v <= s && v > s/math.Exp2(1.0/pairNoiseSteps)*(1-1e-15)) {
			t.Errorf("snapNoise(%.17g) = %.17g, want the grid level at or just below", s, v)
		}
		g := GroupPair{Rate: 0.0394, Deleted: 3, Inserted: 3, Noise: s, Steps: 1}
		for _, a := range []float64{1.19, 2, 4.36, 17, 65} {
			lo, hi, err := g.ExactStepRDP(a)
			if err != nil {
				t.Fatal(err)
			}
			v := g.exactHi(a)
			if v < lo {
				t.Errorf("s=%.17g α=%g: snapped %.12g below the exact lower end %.12g", s, a, v, lo)
			}
			// Accuracy of the accountant's anchors (1024 cells, 8192 below
			// order 2, noise snapped by ≤ 0.07 %): within 5 % from order 4
			// up, where calibrations at ε ≥ 1 take their minimum, and
			// within 35 % below (joint convexity takes over where tighter).
			tol := 1.35
			if a >= 4 {
				tol = 1.05
			}
			if v > hi*tol+1e-12 {
				t.Errorf("s=%.17g α=%g: snapped %.12g more than ×%g the exact upper end %.12g", s, a, v, tol, hi)
			}
		}
	}
}

// BenchmarkCalibrateSageGroupPair: one cold calibration (caches emptied)
// of sage's default-shaped plan, 508 Poisson steps at rate 0.0394 (1,624
// training nodes, batch 64, 20 epochs), ε = 8, δ = 1e-4, one unit changing
// R = 1 + D examples (Change 2: R deletions and R insertions), under pld
// (the pair's PLD) and rdp (occurrence curve, joint convexity and the
// pair's certified RDP):
//
//	go test ./dp -run '^$' -bench CalibrateSageGroupPair -benchtime 1x
func BenchmarkCalibrateSageGroupPair(b *testing.B) {
	for _, acct := range []string{"pld", "rdp"} {
		for _, r := range []int{3, 6, 41, 169} {
			b.Run(fmt.Sprintf("%s/R=%d", acct, r), func(b *testing.B) {
				events := func(s float64) []Event {
					return []Event{Composed{Count: 508, Event: Occurrences{R: r, Change: 2,
						Event: Poisson{Rate: 0.039408867, Event: GaussianEvent{Multiplier: s / float64(2*r), Count: 1}}}}}
				}
				for b.Loop() {
					clearPairCaches()
					if _, err := CalibrateNoise(8, 1e-4, acct, events); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// clearPairCaches empties the group pair's and PLD's memo tables.
func clearPairCaches() {
	pairRDPCache.Lock()
	clear(pairRDPCache.m)
	pairRDPCache.Unlock()
	pmfCache.reset()
	pldEpsCache.reset()
}
