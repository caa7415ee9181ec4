package nn

import (
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	"math"
)

// Optimizer updates parameter slices in place from gradient slices. Both
// are indexed like Model.Params. Gradients are read, never modified, so a
// caller may pass privatised copies.
type Optimizer interface {
	Step(params, grads [][]float64)
}

// Adam is PyTorch's Adam (Kingma & Ba 2015, with bias correction) with
// weight decay added to the gradient as an L2 term (torch.optim.Adam's
// weight_decay, not AdamW).
type Adam struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64

	t    int
	m, v [][]float64
	// The step in progress, which each parameter's update (made once, so
	// that a step allocates no closure) reads.
	params, grads [][]float64
	coef          vec.AdamCoef
	update        []func(lo, hi int)
}

// NewAdam returns Adam with the usual defaults (β=(0.9, 0.999), ε=1e-8).
func NewAdam(lr, weightDecay float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay}
}

// Step applies one Adam update.
func (a *Adam) Step(params, grads [][]float64) {
	if a.m == nil {
		a.m = make([][]float64, len(params))
		a.v = make([][]float64, len(params))
		for i, p := range params {
			a.m[i] = make([]float64, len(p))
			a.v[i] = make([]float64, len(p))
		}
	}
	a.t++
	c1 := 1 - math.Pow(a.Beta1, float64(a.t))
	c2 := 1 - math.Pow(a.Beta2, float64(a.t))
	a.coef = vec.AdamCoef{WeightDecay: a.WeightDecay, Beta1: a.Beta1, Beta2: a.Beta2, Step: a.LR / c1, Corr2: c2, Eps: a.Eps}
	a.params, a.grads = params, grads
	for len(a.update) < len(params) {
		i := len(a.update)
		a.update = append(a.update, func(lo, hi int) {
			vec.AdamStep(a.params[i][lo:hi], a.grads[i][lo:hi], a.m[i][lo:hi], a.v[i][lo:hi], a.coef)
		})
	}
	for i, p := range params {
		// element-wise, so large parameters are split over the cores
		parallel.Rows(len(p), 16*len(p), a.update[i])
	}
	a.params, a.grads = nil, nil
}

// SGD is plain gradient descent with optional momentum and L2 weight decay
// (torch.optim.SGD semantics).
type SGD struct {
	LR, Momentum, WeightDecay float64
	buf                       [][]float64
}

// Step applies one SGD update.
func (s *SGD) Step(params, grads [][]float64) {
	if s.buf == nil && s.Momentum != 0 {
		s.buf = make([][]float64, len(params))
		for i, p := range params {
			s.buf[i] = make([]float64, len(p))
		}
	}
	for i, p := range params {
		for j := range p {
			g := grads[i][j] + s.WeightDecay*p[j]
			if s.Momentum != 0 {
				s.buf[i][j] = s.Momentum*s.buf[i][j] + g
				g = s.buf[i][j]
			}
			p[j] -= s.LR * g
		}
	}
}

// ParamValues returns aliased value slices of every parameter of m (in a
// slice the next call reuses).
func (m *Model) ParamValues() [][]float64 {
	if len(m.values) != len(m.Params) {
		m.values = make([][]float64, len(m.Params))
	}
	out := m.values
	for i, p := range m.Params {
		out[i] = p.Value()
	}
	return out
}
