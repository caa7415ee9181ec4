package nn

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestGhostNormBoundsExactNorm: the ghost norm of a sample of several
// rows is never below its exact squared gradient norm ‖Σ_r aᵣᵀδᵣ‖²
// (computed in 400-bit arithmetic), also where the Gram form cancels in
// float64 — large features in rows whose δ are nearly opposite (the fourth
// outside audit of issue 38: 2^40 features gave a computed norm of 0 and
// an unclipped sample), and where the squares underflow (the fifth: features
// near 2^−537 gave 0) — and it stays within a relative 1e-9 of the exact
// norm where nothing cancels or underflows. Before the bound it was
// max(s, 0): 0 in both.
func TestGhostNormBoundsExactNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		m, in, out := 1+rng.IntN(4), 1+rng.IntN(4), 1+rng.IntN(3)
		scale := math.Ldexp(1, rng.IntN(61)) // up to 2^60: cancellation
		if trial%5 == 4 {
			scale = math.Ldexp(1, -530-rng.IntN(60)) // squares in the subnormal range: underflow
		}
		cancel := trial%2 == 0
		a, d := make([]float64, m*in), make([]float64, m*out)
		for r := 0; r < m; r++ {
			for i := 0; i < in; i++ {
				a[r*in+i] = scale * (1 + rng.Float64())
				if cancel && r > 0 {
					a[r*in+i] = a[i] // identical rows…
				}
			}
			for j := 0; j < out; j++ {
				d[r*out+j] = rng.NormFloat64()
				if cancel && r > 0 {
					// …with δ summing to nearly 0
					d[r*out+j] = -d[j]/float64(m-1) + math.Ldexp(rng.NormFloat64(), -30)
				}
			}
		}
		groups := &RowGroups{Of: make([]int, m), Samples: 1}
		op := &groupGramOp{groups: groups, dense: true, name: "t"}
		got, err := op.UsePreallocDo(nil, tensor.New(tensor.WithShape(m, in), tensor.WithBacking(a)), tensor.New(tensor.WithShape(m, out), tensor.WithBacking(d)))
		if err != nil {
			t.Fatal(err)
		}
		norm := got.(*tensor.Dense).Float64s()[0]
		exact := new(big.Float).SetPrec(400)
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				g := new(big.Float).SetPrec(400)
				for r := 0; r < m; r++ {
					p := new(big.Float).SetPrec(400).SetFloat64(a[r*in+i])
					p.Mul(p, new(big.Float).SetPrec(400).SetFloat64(d[r*out+j]))
					g.Add(g, p)
				}
				exact.Add(exact, g.Mul(g, g))
			}
		}
		want, _ := exact.Float64()
		// below 2^−1000 (a gradient norm under 2^−500, far below any clip
		// bound) the squared norm may round to 0: the clip factor is 1 either way
		tiny := new(big.Float).SetPrec(400).SetMantExp(big.NewFloat(1), -1000)
		if new(big.Float).SetPrec(400).SetFloat64(norm).Cmp(exact) < 0 && exact.Cmp(tiny) > 0 {
			t.Fatalf("trial %d (m %d, scale 2^%d, cancel %v): ghost norm %g below the exact %g", trial, m, int(math.Log2(scale)), cancel, norm, want)
		}
		if !cancel && trial%5 != 4 && norm > want*(1+1e-9) {
			t.Errorf("trial %d: ghost norm %g, exact %g: more than 1e-9 above where nothing cancels", trial, norm, want)
		}
	}
}
