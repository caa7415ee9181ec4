package dp

import (
	"fmt"
	"math"
)

// Laplace is the Laplace mechanism: it adds i.i.d. Laplace noise with scale
// Scale (density exp(−|x|/b)/(2b), variance 2b²) to every coordinate.
//
// For a query with L1 sensitivity Δ₁ one release is (Δ₁/Scale)-DP (pure);
// LaplaceForEpsilon builds the mechanism for a target ε. The zero Scale adds
// no noise.
type Laplace struct {
	Scale float64 // b, in the units of the query, ≥ 0
}

// LaplaceForEpsilon returns the Laplace mechanism that makes one release of
// a query with L1 sensitivity l1Sensitivity ε-DP: Scale = l1Sensitivity/ε.
func LaplaceForEpsilon(eps, l1Sensitivity float64) (Laplace, error) {
	if err := CheckPositiveFinite("epsilon", eps); err != nil {
		return Laplace{}, err
	}
	if err := CheckPositiveFinite("L1 sensitivity", l1Sensitivity); err != nil {
		return Laplace{}, err
	}
	return Laplace{Scale: l1Sensitivity / eps}, nil
}

// Validate reports whether the configuration is usable.
func (l Laplace) Validate() error {
	return CheckNonNegativeFinite("Laplace scale", l.Scale)
}

// Epsilon returns the pure-DP ε of one release on a query with L1
// sensitivity l1Sensitivity: l1Sensitivity/Scale (+Inf when Scale is 0).
func (l Laplace) Epsilon(l1Sensitivity float64) float64 {
	return l1Sensitivity / l.Scale
}

// Event returns the accounting event for count releases on a query with L1
// sensitivity l1Sensitivity.
func (l Laplace) Event(l1Sensitivity float64, count int) (PureEvent, error) {
	if err := CheckPositiveFinite("Laplace scale", l.Scale); err != nil {
		return PureEvent{}, err
	}
	if err := CheckPositiveFinite("L1 sensitivity", l1Sensitivity); err != nil {
		return PureEvent{}, err
	}
	e := PureEvent{Epsilon: l.Epsilon(l1Sensitivity), Count: count}
	return e, e.Validate()
}

// AddNoise adds independent Laplace(Scale) noise to every element of x in
// place. It uses the inverse CDF on an open-interval uniform, so the draw is
// always finite.
func (l Laplace) AddNoise(x []float64, src *Source) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if src == nil {
		return errNilSource
	}
	if l.Scale == 0 {
		return nil
	}
	for i := range x {
		x[i] += l.draw(src)
	}
	return nil
}

// Draw returns one Laplace(Scale) draw from src (src must not be nil).
func (l Laplace) Draw(src *Source) float64 { return l.draw(src) }

func (l Laplace) draw(src *Source) float64 {
	u := src.Uniform() - 0.5 // (−½, ½), never exactly ±½
	if u < 0 {
		return l.Scale * math.Log1p(2*u)
	}
	return -l.Scale * math.Log1p(-2*u)
}

// Sample returns n independent Laplace(Scale) draws.
func (l Laplace) Sample(n int, src *Source) ([]float64, error) {
	if n < 0 {
		return nil, fmt.Errorf("dp: negative sample count %d", n)
	}
	x := make([]float64, n)
	if err := l.AddNoise(x, src); err != nil {
		return nil, err
	}
	return x, nil
}
