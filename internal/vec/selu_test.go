package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exp is within 2 units in the last place of math.Exp on [expLow, 709],
// 0 below expLow, NaN for NaN.
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for i := 0; i < 200000; i++ {
		x := expLow + rng.Float64()*(709-expLow)
		if i%2 == 0 {
			x = -rng.ExpFloat64() * 3 // SELU's range: mostly small negatives
		}
		got, want := exp(x), math.Exp(x)
		ulps := math.Abs(got-want) / (math.Nextafter(want, math.Inf(1)) - want)
		worst = max(worst, ulps)
	}
	if worst > 2 {
		t.Errorf("exp is %v ulp from math.Exp at worst, want ≤ 2", worst)
	}
	if exp(expLow-1e-9) != 0 || exp(-1e6) != 0 || !math.IsNaN(exp(math.NaN())) || exp(0) != 1 {
		t.Errorf("exp below expLow, of NaN or of 0: %v %v %v %v", exp(expLow-1e-9), exp(-1e6), exp(math.NaN()), exp(0))
	}
}

// The SELU kernels (512-bit, where the CPU has it, and 256-bit) equal the
// scalar Go versions bit for bit (so results do not depend on the CPU), on
// random values and special ones.
func TestSELUKernelsMatchGo(t *testing.T) {
	if !useAVX || !hasAVX2 {
		t.Skip("no AVX2: the Go versions are the kernels")
	}
	saved := hasAVX512
	defer func() { hasAVX512 = saved }()
	for _, wide := range []bool{true, false} {
		if wide && !saved {
			continue
		}
		hasAVX512 = wide
		t.Run(map[bool]string{true: "512", false: "256"}[wide], testSELUKernels)
	}
}

func testSELUKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []float64{0, math.Copysign(0, -1), -1e-300, 1e-300, expLow, math.Nextafter(expLow, -1000), -745, -1e6,
		math.NaN(), math.Inf(-1), math.Inf(1), 700, -0.5 * math.Ln2, 0.5 * math.Ln2}
	for _, n := range []int{4, 7, 36, 1003} {
		x, dy := make([]float64, n), randRows(rng, n)
		for i := range x {
			x[i] = rng.NormFloat64() * math.Exp(2*rng.NormFloat64())
			if k := i % 37; k < len(special) { // at every position of a block
				x[i] = special[k]
			}
		}
		got := make([]float64, n)
		SELU(got, x)
		for i := range x {
			if w := seluGo(x[i]); math.Float64bits(got[i]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(got[i])) {
				t.Fatalf("SELU(%v) = %v, Go %v", x[i], got[i], w)
			}
		}
		SELUGrad(got, x, dy)
		for i := range x {
			if w := seluGradGo(x[i], dy[i]); math.Float64bits(got[i]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(got[i])) {
				t.Fatalf("SELU'(%v)·%v = %v, Go %v", x[i], dy[i], got[i], w)
			}
		}
	}
}

// BenchmarkSELU: one SELU over a 2708×32 hidden layer.
func BenchmarkSELU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randRows(rng, 2708*32)
	dst := make([]float64, len(x))
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			SELU(dst, x)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				if v > 0 {
					dst[i] = SELULambda * v
				} else {
					dst[i] = SELULambda * SELUAlpha * (math.Exp(v) - 1)
				}
			}
		}
	})
}
