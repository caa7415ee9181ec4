package dp

import (
	"errors"
	"math"
)

// pldCoarseFactor is how much coarser than the final grid the bracketing
// stage of calibratePLD works.
const pldCoarseFactor = 100

// calibratePLD returns a noise level n (anything ε is decreasing in,
// usually a noise multiplier) whose ε under a fresh PLD accountant with the
// given options (NewPLD(opts...)) after composing events(n) is at most
// targetEps·(1 − CalibrationMargin) at delta — the same contract as
// calibration.noise with the "pld" accountant, found faster:
//
//  1. a bisection to a relative 1e-3 with a grid 100× coarser (cheap, and
//     its answer is safe on the fine grid too up to rounding: the coarse
//     grid's points are fine-grid points, and connecting fewer dots of a
//     convex profile lies higher);
//  2. a safeguarded secant search (secantSafe) on ln ε(ln n) on a grid 10×
//     coarser than the final one, to a relative 1e-4, then on the final
//     grid in a bracket of relative width 2e-3 below that, to 1e-7.
//
// It returns hi, a noise level at which the fine accountant was evaluated
// and met the aim, so the result never exceeds the budget whatever the
// search did. targetEps = +Inf returns 0, as does an events function with
// no events. Errors as calibration.noise.
func calibratePLD(targetEps, delta float64, events func(noise float64) []Event, opts ...PLDOption) (float64, error) {
	if err := CheckEpsilon(targetEps); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if events == nil {
		return 0, errors.New("dp: calibration needs an events function")
	}
	if math.IsInf(targetEps, 1) {
		return 0, nil
	}
	fine, err := NewPLD(opts...)
	if err != nil {
		return 0, err
	}
	d := fine.d
	coarseD := math.Min(1, d*pldCoarseFactor)
	newCoarse := func() (Accountant, error) { return NewPLD(WithDiscretization(coarseD)) }
	if len(events(1)) == 0 {
		return 0, nil
	}
	hi, err := calibration{RelTol: 1e-3}.noise(targetEps, delta, events, newCoarse)
	if err != nil {
		return 0, err
	}
	aim := targetEps * (1 - CalibrationMargin)
	// logGap returns ln ε(n) − ln aim on grid step g (+Inf for ε = ∞).
	logGap := func(g float64) func(n float64) (float64, error) {
		return func(n float64) (float64, error) {
			a, err := NewPLD(WithDiscretization(g))
			if err != nil {
				return 0, err
			}
			if err := ComposeAll(a, events(n)); err != nil {
				return 0, err
			}
			e, err := a.Epsilon(delta)
			if err != nil {
				return 0, err
			}
			if e <= 0 {
				return math.Inf(-1), nil
			}
			return math.Log(e) - math.Log(aim), nil
		}
	}
	// A middle grid 10× coarser narrows the bracket cheaply; the final grid
	// then needs a few evaluations in a bracket of relative width 2e-3.
	midD := math.Min(1, d*10)
	if midD < coarseD {
		if hi, err = secantSafe(logGap(midD), hi, 1.05, 1e-4); err != nil {
			return 0, err
		}
	}
	return secantSafe(logGap(d), hi, 1.002, 1e-7)
}

// secantSafe searches for the crossing of a decreasing gap(n) (≤ 0: n meets
// the aim) near hi, which should be safe (it is moved up by 1% until it
// is). It brackets the crossing in [hi/ratio, hi] (moving down by ×1.5 while
// the lower end is safe), then iterates a secant step on ln n, aimed a
// quarter of the tolerance above the secant root (or just below hi when
// that is next to it), each iterate replacing the end on its side, with
// bisection when the step lands near lo, until hi/lo − 1 ≤ tol. It returns
// hi, always a point where gap was evaluated and ≤ 0. A gap that is NaN
// counts as over budget (+Inf), as in calibration.noise.
func secantSafe(rawGap func(float64) (float64, error), hi, ratio, tol float64) (float64, error) {
	gap := func(n float64) (float64, error) {
		g, err := rawGap(n)
		if math.IsNaN(g) {
			g = math.Inf(1)
		}
		return g, err
	}
	gHi, err := gap(hi)
	if err != nil {
		return 0, err
	}
	for gHi > 0 {
		if hi *= 1.01; hi > 1e12 {
			return 0, errors.New("dp: PLD calibration: no safe noise level up to 1e12")
		}
		if gHi, err = gap(hi); err != nil {
			return 0, err
		}
	}
	lo := hi / ratio
	gLo, err := gap(lo)
	if err != nil {
		return 0, err
	}
	for gLo <= 0 {
		hi, gHi = lo, gLo
		if lo /= 1.5; lo < 1e-12 {
			return hi, nil
		}
		if gLo, err = gap(lo); err != nil {
			return 0, err
		}
	}
	// Aim just above the secant root (so the iterate is likely safe and
	// becomes hi), and, when that is next to hi, just below hi (so that a
	// failing iterate closes the bracket).
	t := math.Log1p(tol)
	for it := 0; it < 100 && hi/lo-1 > tol; it++ {
		x0, x1 := math.Log(lo), math.Log(hi)
		w := x1 - x0
		next := math.Sqrt(lo * hi)
		if !math.IsInf(gLo, 0) && !math.IsInf(gHi, 0) && gLo != gHi {
			x := x1 - gHi*w/(gHi-gLo) + t/4
			if x > x1-t/2 {
				x = x1 - 0.9*t
			}
			if x > x0+0.01*w || w < 3*t {
				next = math.Exp(math.Max(x, x0+t/4))
			}
		}
		g, err := gap(next)
		if err != nil {
			return 0, err
		}
		if g <= 0 {
			hi, gHi = next, g
		} else {
			lo, gLo = next, g
		}
	}
	return hi, nil
}
