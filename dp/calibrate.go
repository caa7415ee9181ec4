package dp

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// calibration configures CalibrateNoise's bisection; the zero value uses
// the defaults (dp's tests set other brackets and accountants through it).
// Noise is whatever the events function takes: usually a noise multiplier
// z, but anything the ε is decreasing in works.
type calibration struct {
	Lo, Hi   float64 // initial bracket (default 1e-3 and 1), widened as needed
	RelTol   float64 // stop when hi/lo − 1 ≤ RelTol (default 1e-9)
	MaxNoise float64 // unreachable above this (default 1e12)
	MinNoise float64 // stop shrinking the bracket below this (default 1e-12)
}

func (c calibration) withDefaults() (calibration, error) {
	if c.Lo == 0 {
		c.Lo = 1e-3
	}
	if c.Hi == 0 {
		c.Hi = 1
	}
	if c.RelTol == 0 {
		c.RelTol = 1e-9
	}
	if c.MaxNoise == 0 {
		c.MaxNoise = 1e12
	}
	if c.MinNoise == 0 {
		c.MinNoise = 1e-12
	}
	if !(c.Lo > 0 && c.Hi > c.Lo && c.RelTol > 0 && c.MaxNoise >= c.Hi && c.MinNoise > 0 && c.MinNoise <= c.Lo) ||
		math.IsInf(c.MaxNoise, 1) {
		return c, fmt.Errorf("dp: invalid calibration settings %+v", c)
	}
	return c, nil
}

// ComposeAll composes the events into acct in order.
func ComposeAll(acct Accountant, events []Event) error {
	for _, e := range events {
		if err := acct.Compose(e); err != nil {
			return err
		}
	}
	return nil
}

// EpsilonOf is the ε at delta that a fresh accountant of the given name
// (see NewAccountant) reports after composing the events.
func EpsilonOf(accountant string, events []Event, delta float64) (float64, error) {
	acct, err := NewAccountant(accountant)
	if err != nil {
		return 0, err
	}
	if err := ComposeAll(acct, events); err != nil {
		return 0, err
	}
	return acct.Epsilon(delta)
}

// CalibrateNoise is dp's one noise calibration, the search behind every
// calibrated mechanism (a plan's multiplier in methods/run, DP-APPR's
// strict scales, ASGL's paper σ, `dpgnn account`): the smallest noise level
// z, to a relative 1e-9 and never below it, whose events(z) composed by a
// fresh accountant of the given name (NewAccountant: gdp, rdp,
// rdp-standard, pld) give ε ≤ targetEps·(1 − CalibrationMargin) at delta. The
// events are what the mechanism releases at noise z, each in multiples of
// its own sensitivity (a GaussianEvent for K releases of the Gaussian
// mechanism, a PoissonGaussianEvent for T DP-SGD steps at rate q, a
// HypergeomGaussian's event, any composition of them), so z is a noise
// multiplier — std over sensitivity — unless the events read it otherwise
// (DP-APPR's EM scale β). See calibration.noise for the search (for pld,
// calibratePLD: the same contract, found in fewer PLD evaluations). An unknown
// accountant is refused before anything else.
func CalibrateNoise(targetEps, delta float64, accountant string, events func(z float64) []Event) (float64, error) {
	if _, err := NewAccountant(accountant); err != nil {
		return 0, err
	}
	if strings.EqualFold(accountant, "pld") {
		return calibratePLD(targetEps, delta, events)
	}
	return calibration{}.noise(targetEps, delta, events, func() (Accountant, error) { return NewAccountant(accountant) })
}

// Accountant is the name of the RDP accountant (NewAccountant) that
// converts with c: "rdp" (improved) or "rdp-standard"; "" (which
// NewAccountant refuses) for an unknown conversion.
func (c Conversion) Accountant() string {
	switch c {
	case ConversionImproved:
		return "rdp"
	case ConversionStandard:
		return "rdp-standard"
	}
	return ""
}

// CalibrationMargin is the relative safety margin of calibration: the
// search aims at targetEps·(1 − CalibrationMargin) rather than targetEps, so
// the ε of the returned noise stays below targetEps when it is recomputed
// later in a slightly different way — events composed in another order or
// grouping, another summation of the same terms, another refinement path —
// whose floating-point results differ from the calibration's in the last
// digits. It costs a relative ~1e-9 of ε, far below any budget's precision.
const CalibrationMargin = 1e-9

// noise returns a noise level n with ε(n) ≤ targetEps·(1 − CalibrationMargin)
// at delta, where ε(n) is the ε a fresh accountant from newAccountant
// reports after composing events(n). ε must be decreasing in the noise. The
// search is a conservative bisection (ProGAP's code instead minimises
// |ε(z) − target| with Brent's method and may overshoot the target; see
// bisect): widen [Lo, Hi] by factors of 2, Hi up to MaxNoise and Lo down to
// MinNoise, until ε(Hi) ≤ aim < ε(Lo), aim = targetEps·(1 − CalibrationMargin),
// then bisect in log space until Hi/Lo − 1 ≤ RelTol, and return Hi — the
// conservative end, whose ε was checked with a fresh accountant, so the
// returned noise never exceeds the budget, with the margin to spare for a
// later recomputation. When even the smallest noise tried (≥ MinNoise)
// meets aim, that noise is returned. An ε that is NaN is treated as over
// budget.
//
// targetEps = +Inf returns 0 (no noise), and so does an events function that
// returns no events (e.g. edge-level ProGAP with K = 0). It fails for targetEps ≤ 0 or NaN,
// delta ∉ (0, 1), a target not reachable with noise ≤ MaxNoise, and any
// error from newAccountant or Compose.
func (c calibration) noise(targetEps, delta float64, events func(noise float64) []Event, newAccountant func() (Accountant, error)) (float64, error) {
	if err := CheckEpsilon(targetEps); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if events == nil || newAccountant == nil {
		return 0, errors.New("dp: calibration needs an events function and an accountant constructor")
	}
	if math.IsInf(targetEps, 1) {
		return 0, nil
	}
	c, err := c.withDefaults()
	if err != nil {
		return 0, err
	}
	aim := targetEps * (1 - CalibrationMargin)
	// within reports whether noise n meets the budget (with the margin).
	within := func(n float64) (bool, error) {
		acct, err := newAccountant()
		if err != nil {
			return false, err
		}
		if acct == nil {
			return false, errors.New("dp: calibration: accountant constructor returned nil")
		}
		if err := ComposeAll(acct, events(n)); err != nil {
			return false, err
		}
		eps, err := acct.Epsilon(delta)
		if err != nil {
			return false, err
		}
		return eps <= aim, nil
	}
	if len(events(c.Hi)) == 0 {
		return 0, nil // nothing private is released: no noise needed
	}
	n, err := bisect(within, c.Lo, c.Hi, safeAbove,
		bisectOpts{log: true, relTol: c.RelTol, minLo: c.MinNoise, maxHi: c.MaxNoise})
	if errors.Is(err, errNoSafeValue) {
		return 0, fmt.Errorf("dp: target epsilon %g at delta %g is not reachable with noise up to %g", targetEps, delta, c.MaxNoise)
	}
	return n, err
}
