package dp

import (
	"fmt"
	"math"
)

// CheckEpsilon returns an error unless eps is a valid privacy budget: a
// positive number. +Inf is accepted and means "no privacy".
func CheckEpsilon(eps float64) error {
	if math.IsNaN(eps) || eps <= 0 {
		return fmt.Errorf("dp: epsilon must be positive, got %g", eps)
	}
	return nil
}

// CheckDelta returns an error unless delta lies in the open interval (0, 1).
func CheckDelta(delta float64) error {
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return fmt.Errorf("dp: delta must lie in (0, 1), got %g", delta)
	}
	return nil
}

// CheckRate returns an error unless q is a sampling rate in (0, 1].
func CheckRate(q float64) error {
	if math.IsNaN(q) || q <= 0 || q > 1 {
		return fmt.Errorf("dp: sampling rate must lie in (0, 1], got %g", q)
	}
	return nil
}

// CheckMultiplier returns an error unless z is a positive, finite noise
// multiplier (noise standard deviation divided by L2 sensitivity).
func CheckMultiplier(z float64) error {
	if math.IsNaN(z) || z <= 0 || math.IsInf(z, 1) {
		return fmt.Errorf("dp: noise multiplier must be positive and finite, got %g", z)
	}
	return nil
}

// CheckCount returns an error unless n (a composition count or number of
// steps) is at least 1. what names the quantity in the message.
func CheckCount(what string, n int) error {
	if n < 1 {
		return fmt.Errorf("dp: %s must be at least 1, got %d", what, n)
	}
	return nil
}

// CheckPositiveFinite is the shared check for positive finite parameters.
func CheckPositiveFinite(what string, x float64) error {
	if math.IsNaN(x) || x <= 0 || math.IsInf(x, 1) {
		return fmt.Errorf("dp: %s must be positive and finite, got %g", what, x)
	}
	return nil
}

// CheckNonNegativeFinite is the shared check for parameters where 0 means
// "no noise" (a non-private, deterministic mechanism).
func CheckNonNegativeFinite(what string, x float64) error {
	if math.IsNaN(x) || x < 0 || math.IsInf(x, 1) {
		return fmt.Errorf("dp: %s must be non-negative and finite, got %g", what, x)
	}
	return nil
}

// UnsupportedEventError is returned by Accountant.Compose for an event the
// accountant cannot account for.
type UnsupportedEventError struct {
	Accountant string // the accountant's Name
	Event      Event  // the offending event (possibly nested in a ComposedEvent)
	Hint       string // what to use instead, if anything
}

func (e *UnsupportedEventError) Error() string {
	msg := fmt.Sprintf("dp: accountant %q does not support event %s", e.Accountant, e.Event)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}
