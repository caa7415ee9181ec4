package dp

import "math"

// Test shorthands for CalibrateNoise over the events of one mechanism (the
// special-purpose calibrators these replace were deleted: every caller now
// states its events to CalibrateNoise).

// calibrateGaussian calibrates count releases of the Gaussian mechanism.
func calibrateGaussian(eps, delta float64, count int, accountant string) (float64, error) {
	return CalibrateNoise(eps, delta, accountant, func(z float64) []Event { return []Event{GaussianEvent{Multiplier: z, Count: count}} })
}

// calibratePoissonGaussian calibrates steps DP-SGD steps at rate q under
// the RDP accountant with conversion conv.
func calibratePoissonGaussian(rate, eps, delta float64, steps int, conv Conversion) (float64, error) {
	return CalibrateNoise(eps, delta, conv.Accountant(), func(z float64) []Event {
		return []Event{PoissonGaussianEvent{Rate: rate, Multiplier: z, Steps: steps}}
	})
}

// calibrateWith is the search with the default settings and any
// accountant constructor (fakes, custom orders).
func calibrateWith(eps, delta float64, events func(float64) []Event, newAccountant func() (Accountant, error)) (float64, error) {
	return calibration{}.noise(eps, delta, events, newAccountant)
}

// calibrateHypergeomGaussian calibrates h's multiplier (h.Multiplier is
// ignored) under the RDP accountant with conversion conv, as ASGL's paper
// accounting does: h is validated first, and a curve that fails at some z
// fails the calibration.
func calibrateHypergeomGaussian(eps, delta float64, h HypergeomGaussian, conv Conversion) (float64, error) {
	h.Multiplier = 1
	if err := h.Validate(); err != nil {
		return 0, err
	}
	var curveErr error
	z, err := CalibrateNoise(eps, delta, conv.Accountant(), func(z float64) []Event {
		h.Multiplier = z
		e, err := h.Event()
		if err != nil {
			curveErr = err
			return []Event{RDPEvent{Name: "invalid", Curve: func(float64) float64 { return math.Inf(1) }}}
		}
		return []Event{e}
	})
	if curveErr != nil {
		return 0, curveErr
	}
	return z, err
}
