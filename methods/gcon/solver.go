package gcon

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Problem is GCON's perturbed objective (Eq. 13), which separates into c
// strongly convex problems, one per class column θ_j ∈ R^d (GCON, proof of Lemma 7):
//
//	f_j(θ) = (1/n1) Σ_i ℓ(z_iᵀθ; y_ij) + (μ/2)‖θ‖² + (1/n1) b_jᵀθ,  μ = Λ + Λ'.
//
// Z holds the n1 training rows (n1×d, row-major), Y the one-hot targets
// (n1×c), B the noise (d×c, row-major; nil for none).
type Problem struct {
	Z       []float64
	Y       []float64
	B       []float64
	N1, D   int
	Classes int
	Loss    Loss
	Mu      float64 // Λ + Λ' > 0
}

func (p *Problem) validate() error {
	switch {
	case p.N1 < 1 || p.D < 1 || p.Classes < 1:
		return fmt.Errorf("gcon: empty problem (n1=%d, d=%d, c=%d)", p.N1, p.D, p.Classes)
	case len(p.Z) != p.N1*p.D:
		return fmt.Errorf("gcon: Z has %d values, want %d×%d", len(p.Z), p.N1, p.D)
	case len(p.Y) != p.N1*p.Classes:
		return fmt.Errorf("gcon: Y has %d values, want %d×%d", len(p.Y), p.N1, p.Classes)
	case p.B != nil && len(p.B) != p.D*p.Classes:
		return fmt.Errorf("gcon: B has %d values, want %d×%d", len(p.B), p.D, p.Classes)
	case !(p.Mu > 0) || math.IsInf(p.Mu, 1):
		return fmt.Errorf("gcon: μ = Λ+Λ' must be positive and finite, got %v", p.Mu)
	}
	return nil
}

func (p *Problem) b(j int) []float64 {
	out := make([]float64, p.D)
	if p.B != nil {
		for r := 0; r < p.D; r++ {
			out[r] = p.B[r*p.Classes+j]
		}
	}
	return out
}

// Objective returns f_j(θ).
func (p *Problem) Objective(j int, theta []float64) float64 {
	n1 := float64(p.N1)
	var f float64
	for i := 0; i < p.N1; i++ {
		f += p.Loss.Value(dot(p.Z[i*p.D:(i+1)*p.D], theta), p.Y[i*p.Classes+j])
	}
	f /= n1
	bj := p.b(j)
	f += 0.5*p.Mu*dot(theta, theta) + dot(bj, theta)/n1
	return f
}

// Gradient returns ∇f_j(θ) = (1/n1) Σ ℓ'(z_iᵀθ) z_i + μθ + b_j/n1.
func (p *Problem) Gradient(j int, theta []float64) []float64 {
	g := make([]float64, p.D)
	for i := 0; i < p.N1; i++ {
		zi := p.Z[i*p.D : (i+1)*p.D]
		w := p.Loss.D1(dot(zi, theta), p.Y[i*p.Classes+j])
		for r, v := range zi {
			g[r] += w * v
		}
	}
	n1 := float64(p.N1)
	bj := p.b(j)
	for r := range g {
		g[r] = g[r]/n1 + p.Mu*theta[r] + bj[r]/n1
	}
	return g
}

// hessian returns ∇²f_j(θ) = (1/n1) Σ ℓ”(z_iᵀθ) z_i z_iᵀ + μI.
func (p *Problem) hessian(j int, theta []float64) *mat.SymDense {
	d := p.D
	// Convex losses have ℓ'' ≥ 0: then H = AᵀA/n1 + μI with rows
	// a_i = √w_i·z_i, one BLAS rank-k update (several times faster than the
	// loop below, which handles any sign).
	a := make([]float64, 0, p.N1*d)
	rows := 0
	for i := 0; i < p.N1; i++ {
		zi := p.Z[i*d : (i+1)*d]
		w := p.Loss.D2(dot(zi, theta), p.Y[i*p.Classes+j])
		if w < 0 {
			return p.hessianLoop(j, theta)
		}
		if w == 0 {
			continue
		}
		sw := math.Sqrt(w)
		for _, v := range zi {
			a = append(a, sw*v)
		}
		rows++
	}
	var h mat.SymDense
	if rows == 0 {
		h.ReuseAsSym(d)
	} else {
		h.SymOuterK(1/float64(p.N1), mat.NewDense(rows, d, a).T())
	}
	for r := 0; r < d; r++ {
		h.SetSym(r, r, h.At(r, r)+p.Mu)
	}
	return &h
}

// hessianLoop is the Hessian of column j by direct summation.
func (p *Problem) hessianLoop(j int, theta []float64) *mat.SymDense {
	d := p.D
	h := make([]float64, d*d)
	for i := 0; i < p.N1; i++ {
		zi := p.Z[i*d : (i+1)*d]
		w := p.Loss.D2(dot(zi, theta), p.Y[i*p.Classes+j])
		if w == 0 {
			continue
		}
		for r := 0; r < d; r++ {
			wr := w * zi[r]
			if wr == 0 {
				continue
			}
			row := h[r*d : (r+1)*d]
			for s := r; s < d; s++ {
				row[s] += wr * zi[s]
			}
		}
	}
	n1 := float64(p.N1)
	for r := 0; r < d; r++ {
		for s := r; s < d; s++ {
			h[r*d+s] /= n1
			h[s*d+r] = h[r*d+s]
		}
		h[r*d+r] += p.Mu
	}
	return mat.NewSymDense(d, h)
}

// SolveResult reports the exact solve.
type SolveResult struct {
	Theta    []float64 // d×c row-major
	GradNorm []float64 // ‖∇f_j‖₂ at the returned θ_j
	Iters    []int     // Newton iterations per column
}

// MaxGradNorm is the largest per-column gradient norm.
func (r SolveResult) MaxGradNorm() float64 {
	var m float64
	for _, g := range r.GradNorm {
		m = math.Max(m, g)
	}
	return m
}

// Solve minimises every f_j by Newton's method with Armijo backtracking from
// θ = 0, until ‖∇f_j‖₂ ≤ tol (objective perturbation's guarantee is for the
// exact minimiser, pitfall P1). f_j is μ-strongly convex, so
// ‖θ − θ*‖ ≤ ‖∇f_j‖/μ. It stops early, without error, when round-off
// prevents further progress; check GradNorm.
func (p *Problem) Solve(tol float64) (SolveResult, error) {
	if err := p.validate(); err != nil {
		return SolveResult{}, err
	}
	res := SolveResult{Theta: make([]float64, p.D*p.Classes), GradNorm: make([]float64, p.Classes), Iters: make([]int, p.Classes)}
	for j := 0; j < p.Classes; j++ {
		th, gn, it, err := p.solveColumn(j, tol)
		if err != nil {
			return SolveResult{}, fmt.Errorf("gcon: column %d: %w", j, err)
		}
		for r := 0; r < p.D; r++ {
			res.Theta[r*p.Classes+j] = th[r]
		}
		res.GradNorm[j], res.Iters[j] = gn, it
	}
	return res, nil
}

func (p *Problem) solveColumn(j int, tol float64) ([]float64, float64, int, error) {
	d := p.D
	theta := make([]float64, d)
	f := p.Objective(j, theta)
	g := p.Gradient(j, theta)
	gn := norm(g)
	var chol mat.Cholesky
	step := mat.NewVecDense(d, nil)
	it := 0
	for ; it < 200 && gn > tol; it++ {
		if ok := chol.Factorize(p.hessian(j, theta)); !ok {
			return nil, 0, it, fmt.Errorf("Hessian is not positive definite")
		}
		if err := chol.SolveVecTo(step, mat.NewVecDense(d, g)); err != nil {
			return nil, 0, it, err
		}
		dir := step.RawVector().Data // θ_new = θ − t·dir
		slope := dot(g, dir)         // > 0
		t := 1.0
		next := make([]float64, d)
		accepted := false
		// A decrease of 1e-4·slope below f's round-off cannot be seen:
		// skip the halvings (each costs a pass over the rows) and go to the
		// gradient test below.
		searchable := slope > 1e-12*math.Max(1, math.Abs(f))
		for ls := 0; searchable && ls < 60; ls++ {
			for r := range next {
				next[r] = theta[r] - t*dir[r]
			}
			fn := p.Objective(j, next)
			if fn <= f-1e-4*t*slope {
				accepted = true
				f = fn
				break
			}
			t /= 2
		}
		if !accepted {
			// Round-off: a full Newton step near the optimum may not lower f
			// measurably. Accept it if it lowers the gradient norm.
			for r := range next {
				next[r] = theta[r] - dir[r]
			}
			gn2 := norm(p.Gradient(j, next))
			if gn2 >= gn {
				break
			}
			f = p.Objective(j, next)
		}
		theta = next
		g = p.Gradient(j, theta)
		gn = norm(g)
	}
	return theta, gn, it, nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }
