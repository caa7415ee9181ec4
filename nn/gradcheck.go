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
	// Moved counts the entries that agreed better after their value was
	// moved by kinkShift·h (see GradCheck): crossed kinks, or rounding.
	Moved int
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
//
// Kinks. SELU, ReLU and norms are not differentiable everywhere; when one
// of the model's pre-activations lies within 2h of a kink, the stencil
// straddles it and disagrees with the (one-sided) symbolic gradient by the
// jump, at any step small enough to be accurate elsewhere. An entry whose
// relative error exceeds moveAbove is therefore checked once more with
// its value moved by kinkShift·h (symbolic gradient recomputed there), and
// the smaller of the two errors counts. A wrong symbolic gradient is wrong
// at both points; a crossed kink is not crossed again.
const (
	gradFloor = 1e-6
	moveAbove = 1e-7
	kinkShift = 10
)

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
			abs, rel, err := m.compareEntry(p, j, h, sym[i][j], floor)
			if err != nil {
				return nil, err
			}
			if rel > moveAbove {
				orig := vals[j]
				vals[j] = orig + kinkShift*h
				g2, err := m.gradEntry(i, j)
				var abs2, rel2 float64
				if err == nil {
					abs2, rel2, err = m.compareEntry(p, j, h, g2, floor)
				}
				vals[j] = orig
				if err != nil {
					return nil, err
				}
				if rel2 < rel {
					abs, rel = abs2, rel2
					res.Moved++
				}
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

// gradEntry is the symbolic gradient of parameter i's entry j at the
// parameters' current values.
func (m *Model) gradEntry(i, j int) (float64, error) {
	if _, err := m.StepMode(false); err != nil {
		return 0, err
	}
	grads, err := m.Grads()
	if err != nil {
		return 0, err
	}
	return grads[i][j], nil
}

// compareEntry compares the symbolic gradient g of entry j of parameter p
// with the fourth-order central difference at step h around the
// entry's current value, returning the absolute and relative errors.
func (m *Model) compareEntry(p *Param, j int, h, g, floor float64) (abs, rel float64, err error) {
	vals := p.Value()
	orig := vals[j]
	var f [4]float64
	for k, off := range [4]float64{2, 1, -1, -2} {
		vals[j] = orig + off*h
		if f[k], err = m.StepMode(false); err != nil {
			vals[j] = orig
			return 0, 0, err
		}
	}
	vals[j] = orig
	// fourth-order central stencil: error O(h⁴)
	fd := (-f[0] + 8*f[1] - 8*f[2] + f[3]) / (12 * h)
	abs = math.Abs(g - fd)
	rel = abs / math.Max(math.Max(math.Abs(g), math.Abs(fd)), floor)
	if math.IsNaN(rel) {
		return 0, 0, fmt.Errorf("nn: gradient check of %s[%d]: NaN (symbolic %v, numeric %v)", p.Name, j, g, fd)
	}
	return abs, rel, nil
}
