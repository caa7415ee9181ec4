package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumIdxBits32: a masked gather from float32 values gives the bits of
// MulBits over their float64 conversions followed by SumIdx, with the Go,
// AVX (a table of nibbles) and AVX-512 (mask registers) kernels, at widths
// around the 4-, 8-, 16- and 32-column strips (so rows start at every bit
// of a mask byte), for keep factors of ½, ⅓ and ¼ dropout, repeated and
// unordered rows, one factor for all terms (vinc 0), and signed zeros,
// infinities, NaNs, the largest float32 and subnormals among the values.
func TestSumIdxBits32(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	inf := float32(math.Inf(1))
	special := []float32{0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), math.MaxFloat32, -1e-40}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	saved, saved512 := useAVX, hasAVX512VL
	defer func() { useAVX, hasAVX512VL = saved, saved512 }()
	ran := 0
	for _, kernel := range []string{"go", "avx", "avx512"} {
		if kernel != "go" && !(saved && hasBMI2) || kernel == "avx512" && !saved512 {
			continue
		}
		ran++
		for _, n := range []int{1, 3, 4, 5, 7, 8, 12, 15, 16, 17, 20, 31, 32, 33, 36, 40, 44, 64, 65} {
			for _, keep := range []float64{2, 1.5, 4.0 / 3} {
				rows := 1 + rng.IntN(90)
				b32 := make([]float32, rows*n)
				b := make([]float64, rows*n)
				for i := range b32 {
					b32[i] = float32(rng.NormFloat64() * 3)
					if rng.IntN(30) == 0 {
						b32[i] = special[rng.IntN(len(special))]
					}
					b[i] = float64(b32[i])
				}
				bits := make([]uint64, MaskWords(len(b)))
				for i := range bits {
					bits[i] = rng.Uint64() // the padding word too: never an entry's bit
				}
				if r := len(b) & 63; r != 0 {
					bits[len(b)/64] &= 1<<r - 1
				}
				useAVX, hasAVX512VL = saved, saved512
				masked := make([]float64, len(b))
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
				useAVX, hasAVX512VL = kernel != "go", kernel == "avx512"
				got := make([]float64, n)
				for i := range got {
					got[i] = math.NaN() // must be overwritten
				}
				SumIdxBits32(got, vals, vinc, idx, b32, NewBitMask(bits, keep))
				for c := range n {
					if !same(got[c], want[c]) {
						t.Fatalf("%s kernel, width %d, keep %v, %d terms: column %d = %v, want %v", kernel, n, keep, terms, c, got[c], want[c])
					}
				}
			}
		}
	}
	t.Logf("%d kernels compared", ran)
}

// TestSumIdxBits32Checks: a row index outside the matrix, a mask without
// its padding word and a matrix that is not whole rows panic instead of
// reading outside their slices.
func TestSumIdxBits32Checks(t *testing.T) {
	b := make([]float32, 3*8)
	bits := make([]uint64, MaskWords(len(b)))
	dst := make([]float64, 8)
	vals := []float64{1, 1}
	for name, f := range map[string]func(){
		"row 3 of 3":      func() { SumIdxBits32(dst, vals, 1, []int{0, 3}, b, NewBitMask(bits, 2)) },
		"row -1":          func() { SumIdxBits32(dst, vals, 1, []int{-1}, b, NewBitMask(bits, 2)) },
		"no padding word": func() { SumIdxBits32(dst, vals, 1, []int{0}, b, NewBitMask(bits[:1], 2)) },
		"not whole rows":  func() { SumIdxBits32(dst, vals, 1, []int{0}, b[:20], NewBitMask(bits, 2)) },
		"too few factors": func() { SumIdxBits32(dst, vals[:1], 1, []int{0, 1}, b, NewBitMask(bits, 2)) },
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
