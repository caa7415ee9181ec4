package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumIdxBits: a masked gather gives the bits of MulBits over the whole
// matrix followed by SumIdx, with the assembly and without, at widths
// around the 4- and 16-column strips (so rows start at every bit of a
// mask byte), for keep factors of ½, ⅓ and ¼ dropout, repeated and
// unordered rows, one factor for all terms (vinc 0), and signed zeros,
// infinities and NaNs among the values; over float32 values it matches the
// same gather over their float64 conversions.
func TestSumIdxBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e-300}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, avx := range []bool{false, true} {
		if avx && !(useAVX && hasAVX2 && hasBMI2) {
			continue
		}
		saved := useAVX
		for _, n := range []int{1, 3, 4, 5, 7, 8, 12, 15, 16, 17, 20, 31, 32, 33, 36, 64, 65} {
			for _, keep := range []float64{2, 1.5, 4.0 / 3} {
				rows := 1 + rng.IntN(90)
				b := make([]float64, rows*n)
				b32 := make([]float32, rows*n)
				for i := range b {
					b32[i] = float32(rng.NormFloat64() * 3)
					b[i] = float64(b32[i])
					if rng.IntN(30) == 0 {
						b[i] = special[rng.IntN(len(special))]
					}
				}
				bits := make([]uint64, MaskWords(len(b)))
				for i := range (len(b) + 63) / 64 {
					bits[i] = rng.Uint64()
				}
				bits[len(bits)-1] = rng.Uint64() // padding past the mask: never a bit of an entry
				if r := len(b) & 63; r != 0 {
					bits[len(b)/64] &= 1<<r - 1
				}
				masked := make([]float64, len(b))
				useAVX = saved
				MulBits(masked, b, bits, 0, keep)
				terms := rng.IntN(25)
				idx := make([]int, terms)
				for p := range idx {
					idx[p] = rng.IntN(rows)
				}
				vals := make([]float64, terms+1)
				for p := range vals {
					vals[p] = rng.NormFloat64()
				}
				vinc := rng.IntN(2)
				want := make([]float64, n)
				SumIdx(want, vals, vinc, idx, masked, n)
				useAVX = avx
				got := make([]float64, n)
				for i := range got {
					got[i] = math.NaN() // must be overwritten
				}
				SumIdxBits(got, vals, vinc, idx, b, bits, keep)
				for c := range n {
					if !same(got[c], want[c]) {
						t.Fatalf("avx %v, width %d, keep %v, %d terms: column %d = %v, want %v", avx, n, keep, terms, c, got[c], want[c])
					}
				}
				// float32: against the float64 gather of the converted values
				for i := range b {
					b[i] = float64(b32[i])
				}
				SumIdxBits(want, vals, vinc, idx, b, bits, keep)
				SumIdxBits32(got, vals, vinc, idx, b32, bits, keep)
				for c := range n {
					if !same(got[c], want[c]) {
						t.Fatalf("avx %v, float32, width %d, keep %v: column %d = %v, want %v", avx, n, keep, c, got[c], want[c])
					}
				}
			}
		}
		useAVX = saved
	}
}

// TestSumIdxBitsChecks: a row index outside the matrix, a mask without
// its padding word and a matrix that is not whole rows panic instead of
// reading outside their slices.
func TestSumIdxBitsChecks(t *testing.T) {
	b := make([]float64, 3*8)
	bits := make([]uint64, MaskWords(len(b)))
	dst := make([]float64, 8)
	vals := []float64{1, 1}
	for name, f := range map[string]func(){
		"row 3 of 3":      func() { SumIdxBits(dst, vals, 1, []int{0, 3}, b, bits, 2) },
		"row -1":          func() { SumIdxBits(dst, vals, 1, []int{-1}, b, bits, 2) },
		"float32 row 3":   func() { SumIdxBits32(dst, vals, 1, []int{3}, make([]float32, 24), bits, 2) },
		"no padding word": func() { SumIdxBits(dst, vals, 1, []int{0}, b, bits[:1], 2) },
		"not whole rows":  func() { SumIdxBits(dst, vals, 1, []int{0}, b[:20], bits, 2) },
		"too few factors": func() { SumIdxBits(dst, vals[:1], 1, []int{0, 1}, b, bits, 2) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestFloat32Exact: a copy only when every value, signed zeros included,
// survives the round trip.
func TestFloat32Exact(t *testing.T) {
	if y := Float32Exact([]float64{1.5, -0.25, math.Copysign(0, -1), math.Inf(-1), float64(float32(0.1))}); y == nil || math.Float32bits(y[2]) != 1<<31 {
		t.Fatalf("float32 values: %v", y)
	}
	for _, v := range []float64{0.1, 1e300, 1e-310} {
		if y := Float32Exact([]float64{1, v}); y != nil {
			t.Errorf("%v: a float32 copy %v", v, y)
		}
	}
}
