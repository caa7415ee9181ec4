package vec

import "fmt"

// AdamCoef are the per-step constants of an Adam update (AdamStep).
type AdamCoef struct {
	WeightDecay, Beta1, Beta2 float64
	Step                      float64 // lr / (1 − β₁ᵗ)
	Corr2                     float64 // 1 − β₂ᵗ
	Eps                       float64
}

// AdamStep applies one Adam update to p with gradient g and moments m, v
// (all of one length), element by element in this order:
//
//	gⱼ ← g[j] + wd·p[j]
//	m[j] ← β₁·m[j] + (1−β₁)·gⱼ
//	v[j] ← β₂·v[j] + (1−β₂)·gⱼ·gⱼ
//	p[j] ← p[j] − step·m[j] / (√(v[j]/corr2) + ε)
//
// four elements at a time with AVX where the CPU has it; every operation
// is the same IEEE operation as the scalar loop's, so the result is
// bit-identical to it.
func AdamStep(p, g, m, v []float64, c AdamCoef) {
	n := len(p)
	if len(g) < n || len(m) < n || len(v) < n {
		panic(fmt.Sprintf("vec: AdamStep with %d parameters but %d, %d, %d gradients and moments", n, len(g), len(m), len(v)))
	}
	done := adam(p, g, m, v, c)
	adamGo(p[done:], g[done:n], m[done:n], v[done:n], c)
}

func adamGo(p, g, m, v []float64, c AdamCoef) {
	b1, b2, wd, eps, step, c2 := c.Beta1, c.Beta2, c.WeightDecay, c.Eps, c.Step, c.Corr2
	for j := range p {
		gj := g[j] + float64(wd*p[j])
		m[j] = float64(b1*m[j]) + float64((1-b1)*gj)
		v[j] = float64(b2*v[j]) + float64(float64((1-b2)*gj)*gj)
		p[j] -= float64(step*m[j]) / (sqrtF(v[j]/c2) + eps)
	}
}
