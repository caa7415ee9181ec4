package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestColReductions: ColAdd, ColSqDev and ColGrad give the bits of their
// scalar loops (rows outer, columns inner), with the assembly and without,
// at widths around the four-column blocks, rows apart by more than their
// width, and with signed zeros, infinities and NaNs among the values.
func TestColReductions(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e-300}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, avx := range []bool{false, true} {
		if avx && !useAVX {
			continue
		}
		saved := useAVX
		useAVX = avx
		for _, k := range []int{1, 3, 4, 5, 8, 13, 16, 32, 33} {
			for _, rows := range []int{0, 1, 2, 7, 301} {
				ld := k + rng.IntN(3)
				x, dy := make([]float64, max(0, (rows-1)*ld+k)), make([]float64, max(0, (rows-1)*ld+k))
				for i := range x {
					x[i], dy[i] = rng.NormFloat64()*3, rng.NormFloat64()
					if rng.IntN(40) == 0 {
						x[i] = special[rng.IntN(len(special))]
					}
					if rng.IntN(40) == 0 {
						dy[i] = special[rng.IntN(len(special))]
					}
				}
				m, s := make([]float64, k), make([]float64, k)
				for c := range k {
					m[c], s[c] = rng.NormFloat64(), rng.Float64()+0.5
				}
				start := func() []float64 {
					v := make([]float64, k)
					for c := range v {
						v[c] = rng.NormFloat64()
					}
					return v
				}
				a0, b0 := start(), start()
				wantAdd, wantSq, wantA, wantB := append([]float64(nil), a0...), append([]float64(nil), a0...), append([]float64(nil), a0...), append([]float64(nil), b0...)
				for r := range rows {
					for c := range k {
						v, d := x[r*ld+c], dy[r*ld+c]
						wantAdd[c] += v
						e := v - m[c]
						wantSq[c] += e * e
						wantA[c] += d
						wantB[c] += d * (v - m[c]) * s[c]
					}
				}
				gotAdd, gotSq, gotA, gotB := append([]float64(nil), a0...), append([]float64(nil), a0...), append([]float64(nil), a0...), append([]float64(nil), b0...)
				ColAdd(gotAdd, x, rows, ld)
				ColSqDev(gotSq, x, m, rows, ld)
				ColGrad(gotA, gotB, x, dy, m, s, rows, ld)
				for what, p := range map[string][2][]float64{"ColAdd": {gotAdd, wantAdd}, "ColSqDev": {gotSq, wantSq}, "ColGrad a": {gotA, wantA}, "ColGrad b": {gotB, wantB}} {
					for c := range k {
						if !same(p[0][c], p[1][c]) {
							t.Fatalf("avx %v, %d rows of %d (ld %d): %s[%d] = %v, want %v", avx, rows, k, ld, what, c, p[0][c], p[1][c])
						}
					}
				}
			}
		}
		useAVX = saved
	}
}

// TestColReductionsCheckShapes: a matrix shorter than its rows panics
// instead of reading past it.
func TestColReductionsCheckShapes(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	ColAdd(make([]float64, 4), make([]float64, 7), 2, 4)
}
