package nn

import (
	"fmt"
	"math"
)

// GradCheckResult is the worst disagreement between a parameter's symbolic
// gradient and central finite differences.
type GradCheckResult struct {
	Param    string
	Checked  int     // number of entries compared
	MaxRel   float64 // worst relative error |g−fd| / max(|g|, |fd|, floor)
	MaxAbs   float64
	WorstIdx int
}

// GradCheck compares, for every parameter of a compiled model, the symbolic
// gradient of the loss with fourth-order central finite differences (step h, e.g. 1e-4) in
// evaluation mode (no dropout). At most maxPerParam entries of each
// parameter are checked (spread evenly; 0 means all). The relative error is
// |g−fd| / max(|g|, |fd|, floor) with floor = max(1e-6, 1e-3·max_j |g_j|)
// over the parameter: the stencil's rounding error is about 1e-12 for
// losses of order 1, so entries whose gradient is tiny next to the rest of
// their tensor are compared on the tensor's scale (a wrong gradient is
// wrong by the order of the gradient itself, which this still catches).
const gradFloor = 1e-6

func (m *Model) GradCheck(h float64, maxPerParam int) ([]GradCheckResult, error) {
	if _, err := m.StepMode(false); err != nil {
		return nil, err
	}
	grads, err := m.Grads()
	if err != nil {
		return nil, err
	}
	sym := make([][]float64, len(grads))
	for i, g := range grads {
		sym[i] = append([]float64(nil), g...)
	}
	var out []GradCheckResult
	for i, p := range m.Params {
		vals := p.Value()
		res := GradCheckResult{Param: p.Name}
		stride := 1
		if maxPerParam > 0 && len(vals) > maxPerParam {
			stride = len(vals) / maxPerParam
		}
		floor := gradFloor
		for _, g := range sym[i] {
			floor = math.Max(floor, 1e-3*math.Abs(g))
		}
		for j := 0; j < len(vals); j += stride {
			orig := vals[j]
			var f [4]float64
			for k, off := range [4]float64{2, 1, -1, -2} {
				vals[j] = orig + off*h
				if f[k], err = m.StepMode(false); err != nil {
					vals[j] = orig
					return nil, err
				}
			}
			vals[j] = orig
			// fourth-order central stencil: error O(h⁴)
			fd := (-f[0] + 8*f[1] - 8*f[2] + f[3]) / (12 * h)
			g := sym[i][j]
			abs := math.Abs(g - fd)
			rel := abs / math.Max(math.Max(math.Abs(g), math.Abs(fd)), floor)
			if math.IsNaN(rel) {
				return nil, fmt.Errorf("nn: gradient check of %s[%d]: NaN (symbolic %v, numeric %v)", p.Name, j, g, fd)
			}
			if rel > res.MaxRel {
				res.MaxRel, res.WorstIdx = rel, j
			}
			res.MaxAbs = math.Max(res.MaxAbs, abs)
			res.Checked++
		}
		out = append(out, res)
	}
	// leave the model's gradients consistent with its parameters
	if _, err := m.StepMode(false); err != nil {
		return nil, err
	}
	return out, nil
}
