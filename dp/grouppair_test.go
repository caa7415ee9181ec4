package dp

import (
	"math"
	"testing"
)

// TestGroupPairOneDeletionIsSGM: with one deletion and no insertion the pair
// is the Poisson-subsampled Gaussian, whose RDP (Mironov, Talwar & Zhang)
// must lie in the certified bracket, at integer and fractional orders.
func TestGroupPairOneDeletionIsSGM(t *testing.T) {
	for _, c := range []struct{ q, s float64 }{{0.01, 1.1}, {0.2782, 26.46}, {0.5, 2}, {1, 3}} {
		g := GroupPair{Rate: c.q, Deleted: 1, Noise: c.s, Steps: 1}
		for _, a := range []float64{1.5, 2, 3.7, 8, 32, 200} {
			lo, hi, err := g.ExactStepRDP(a)
			if err != nil {
				t.Fatal(err)
			}
			want := SubsampledGaussianRDP(c.q, c.s, a)
			if !(lo <= want*(1+1e-12) && want <= hi*(1+1e-12)) {
				t.Errorf("q=%g s=%g α=%g: bracket [%.12g, %.12g] misses the sampled Gaussian's %.12g", c.q, c.s, a, lo, hi, want)
			}
			if hi-lo > 1e-3*want+1e-12 {
				t.Errorf("q=%g s=%g α=%g: bracket [%.12g, %.12g] wider than 0.1%%", c.q, c.s, a, lo, hi)
			}
		}
	}
}

// Brute-force references: max(D_α(P‖Q), D_α(Q‖P)) by mpmath.quad at 50
// digits (/usr/bin/python3 with python3-mpmath 1.2.1):
//
//	wp = binom.pmf(k, nd, q) at means −k, wq = binom.pmf(j, ni, q) at +j, std s
//	D = log(quad(P(x)^a Q(x)^(1−a), [−inf, −20s, 0, 20s, inf]))/(a−1), both ways
var groupPairRef = []struct {
	q      float64
	nd, ni int
	s, a   float64
	pq, qp float64
}{
	{0.3, 2, 1, 1.5, 2.0, 0.38308918515477053, 0.29086932319868936},
	{0.3, 2, 1, 1.5, 5.5, 2.4136331747339685, 0.7725414492597591},
	{0.2782415136, 3, 2, 26.46010119, 8.0, 0.011073913883702968, 0.011026394928765497},
	{0.1, 1, 2, 2.0, 3.0, 0.03146754759119183, 0.035785862221693644},
	{0.5, 3, 0, 3.0, 12.0, 3.8184942014501764, 0.7739043433841535},
}

func TestGroupPairMatchesBruteForce(t *testing.T) {
	for _, c := range groupPairRef {
		g := GroupPair{Rate: c.q, Deleted: c.nd, Inserted: c.ni, Noise: c.s, Steps: 1}
		lo, hi, err := g.ExactStepRDP(c.a)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Max(c.pq, c.qp)
		if !(lo <= want*(1+1e-9) && want <= hi*(1+1e-9)) || hi-lo > 1e-3*want {
			t.Errorf("%+v: bracket [%.12g, %.12g], mpmath %.12g", c, lo, hi, want)
		}
	}
}

// TestGroupPairNeverLooser: for DPAR-like node pairs the curve used
// (StepRDP) is at most joint convexity, which is at most today's
// Occurrences-over-Poisson bound (R examples, Change 2, same noise std), at
// default orders up to 1024 (every ninth).
func TestGroupPairNeverLooser(t *testing.T) {
	for _, c := range []struct {
		q     float64
		r     int
		noise float64
	}{{0.2782415136, 3, 26.46010119}, {0.05, 2, 3}, {0.5, 4, 10}, {0.01, 1, 1}} {
		g := NodeGroupPair(c.q, c.r, c.noise, 10)
		today := oldGroup(c.q, c.r, c.noise/float64(c.r), 2, 10)
		orders := DefaultOrders()
		for i := 0; i < len(orders) && orders[i] <= 1024; i += 9 {
			a := orders[i]
			got, err := g.StepRDP(a)
			if err != nil {
				t.Fatal(err)
			}
			jc, _ := g.JointConvexityStepRDP(a)
			old, _ := today.StepRDP(a)
			if got > jc || jc > old*(1+1e-12) {
				t.Errorf("q=%g R=%d noise=%g α=%g: StepRDP %.6g, joint convexity %.6g, today %.6g", c.q, c.r, c.noise, a, got, jc, old)
			}
		}
	}
}

func TestGroupPairValidate(t *testing.T) {
	for _, g := range []GroupPair{
		{Rate: 0, Deleted: 1, Noise: 1, Steps: 1},
		{Rate: 0.1, Noise: 1, Steps: 1},
		{Rate: 0.1, Deleted: -1, Inserted: 2, Noise: 1, Steps: 1},
		{Rate: 0.1, Deleted: 1, Noise: 0, Steps: 1},
		{Rate: 0.1, Deleted: 1, Noise: 1, Steps: 0},
	} {
		if g.Validate() == nil {
			t.Errorf("%+v accepted", g)
		}
		if _, err := g.RDPEvent(); err == nil {
			t.Errorf("%+v: RDPEvent accepted", g)
		}
	}
	g := NodeGroupPair(0.1, 3, 5, 7)
	if g.Deleted != 3 || g.Inserted != 2 {
		t.Errorf("NodeGroupPair = %+v", g)
	}
	if _, _, err := g.ExactStepRDP(1); err == nil {
		t.Error("order 1 accepted")
	}
	ev, err := g.RDPEvent()
	if err != nil || ev.Count != 7 {
		t.Fatalf("RDPEvent = %v, %v", ev, err)
	}
	want, _ := g.StepRDP(4)
	if got := ev.Curve(4); got != want {
		t.Errorf("curve(4) = %g, StepRDP %g", got, want)
	}
}
