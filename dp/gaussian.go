package dp

import (
	"errors"
	"fmt"
)

var errNilSource = errors.New("dp: nil noise source")

// Gaussian is the Gaussian mechanism: it adds i.i.d. N(0, Std()²) noise to
// every coordinate of a query with L2 sensitivity Sensitivity.
//
// Multiplier is the noise multiplier z (dimensionless): the noise standard
// deviation divided by the L2 sensitivity. The two are kept apart so that the
// accountant only ever sees z (GaussianEvent) and the sensitivity is never
// applied twice. The zero Multiplier adds no noise (a non-private run, e.g.
// ε = ∞); accountants refuse an event with z = 0.
type Gaussian struct {
	Multiplier  float64 // z = std / sensitivity, ≥ 0
	Sensitivity float64 // L2 sensitivity Δ of the query, ≥ 0
}

// Std returns the noise standard deviation σ = Multiplier × Sensitivity.
func (g Gaussian) Std() float64 { return g.Multiplier * g.Sensitivity }

// Validate reports whether the configuration is usable.
func (g Gaussian) Validate() error {
	if err := CheckNonNegativeFinite("Gaussian noise multiplier", g.Multiplier); err != nil {
		return err
	}
	return CheckNonNegativeFinite("Gaussian sensitivity", g.Sensitivity)
}

// AddNoise adds independent N(0, Std()²) noise to every element of x in
// place, drawing from src.
func (g Gaussian) AddNoise(x []float64, src *Source) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if src == nil {
		return errNilSource
	}
	std := g.Std()
	if std == 0 {
		return nil
	}
	e := make([]float64, len(x))
	src.FillNormal(e)
	for i, v := range e {
		x[i] += std * v
	}
	return nil
}

// Sample returns n independent N(0, Std()²) draws.
func (g Gaussian) Sample(n int, src *Source) ([]float64, error) {
	if n < 0 {
		return nil, fmt.Errorf("dp: negative sample count %d", n)
	}
	x := make([]float64, n)
	if err := g.AddNoise(x, src); err != nil {
		return nil, err
	}
	return x, nil
}

// Event returns the accounting event for count releases of this mechanism
// (each on a query of sensitivity Sensitivity).
func (g Gaussian) Event(count int) GaussianEvent {
	return GaussianEvent{Multiplier: g.Multiplier, Count: count}
}
