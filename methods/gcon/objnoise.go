package gcon

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
)

// SampleObjectiveNoise draws GCON's noise matrix B ∈ R^{d×c} (row-major):
// c independent columns b_j, each with density ∝ exp(−β‖b_j‖₂) (GammaNorm
// with rate β and dimension d; GCON Alg. 2, Eq. 14). β = +Inf (no privacy
// needed, or edges unused) gives B = 0. Columns are drawn in order from
// src.
func SampleObjectiveNoise(d, c int, beta float64, src *dp.Source) ([]float64, error) {
	if err := dp.CheckCount("objective-perturbation dimension", d); err != nil {
		return nil, err
	}
	if err := dp.CheckCount("objective-perturbation columns", c); err != nil {
		return nil, err
	}
	b := make([]float64, d*c)
	if math.IsInf(beta, 1) {
		return b, nil
	}
	g := GammaNorm{Beta: beta, Dim: d}
	for j := 0; j < c; j++ {
		col, err := g.Sample(src)
		if err != nil {
			return nil, fmt.Errorf("gcon: objective-perturbation noise column %d: %w", j, err)
		}
		for r, v := range col {
			b[r*c+j] = v
		}
	}
	return b, nil
}
