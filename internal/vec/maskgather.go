package vec

import (
	"fmt"
	"math"
)

// MaskWords is the length of a bit mask of n entries that SumIdxBits can
// read: one word per 64 entries and one more, because the kernel reads 64
// bits from the byte of any entry it gathers.
func MaskWords(n int) int { return (n+63)/64 + 1 }

// SumIdxBits is SumIdx over the rows of a dropped-out matrix, without
// writing that matrix: b holds rows of n = len(dst) values, packed, and
// its entry e counts as b[e]·keep where bit e of bits is set (bit e&63 of
// word e>>6) and as b[e]·0 where it is not, each product rounded. That is
// MulBits over b followed by SumIdx over the result, bit for bit, with one
// pass over b's gathered rows instead of a pass writing and a pass
// gathering the whole masked matrix. bits must have MaskWords(len(b))
// words or more. It panics if a row or a factor lies outside its slice (a
// programming error).
func SumIdxBits(dst, vals []float64, vinc int, idx []int, b []float64, bits []uint64, keep float64) {
	if rows, ok := checkBits(dst, vals, vinc, idx, len(b), bits); ok {
		if !sumIdxBits(dst, vals, vinc, idx, b, nil, rows, bits, keep) {
			panic(fmt.Sprintf("vec: SumIdxBits row index outside the %d rows of width %d", rows, len(dst)))
		}
	}
}

// SumIdxBits32 is SumIdxBits over a matrix held in float32: every value is
// converted to float64 (exactly) before it is used, so over a b whose
// values are those of a float64 matrix (Float32Exact) it gives that
// matrix's bits, reading half the memory.
func SumIdxBits32(dst, vals []float64, vinc int, idx []int, b []float32, bits []uint64, keep float64) {
	if rows, ok := checkBits(dst, vals, vinc, idx, len(b), bits); ok {
		if !sumIdxBits(dst, vals, vinc, idx, nil, b, rows, bits, keep) {
			panic(fmt.Sprintf("vec: SumIdxBits32 row index outside the %d rows of width %d", rows, len(dst)))
		}
	}
}

// checkBits checks SumIdxBits' arguments and returns the rows of b; false
// when there is nothing to gather (dst is then cleared).
func checkBits(dst, vals []float64, vinc int, idx []int, size int, bits []uint64) (int, bool) {
	n := len(dst)
	if n == 0 {
		return 0, false
	}
	if len(idx) == 0 {
		clear(dst)
		return 0, false
	}
	checkVals(vals, vinc, len(idx))
	if size%n != 0 || len(bits) < MaskWords(size) {
		panic(fmt.Sprintf("vec: SumIdxBits rows of width %d in %d values with a mask of %d words", n, size, len(bits)))
	}
	return size / n, true
}

// Float32Exact returns x in float32 when every value converts back to its
// own bits (signed zeros and NaN payloads included), nil otherwise. Such a
// copy is a lossless store of x for SumIdxBits32: features read from
// float32 files always are.
func Float32Exact(x []float64) []float32 {
	for _, v := range x {
		if math.Float64bits(float64(float32(v))) != math.Float64bits(v) {
			return nil
		}
	}
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// sumIdxBitsGo is the kernel in Go over b64 or, when it is nil, b32,
// columns from c on (the assembly's leftover columns, or all of them).
func sumIdxBitsGo(dst, vals []float64, vinc int, idx []int, b64 []float64, b32 []float32, rows int, bits []uint64, keep float64, c int) bool {
	n := len(dst)
	val := [2]float64{0, keep}
	clear(dst[c:])
	for p, r := range idx {
		if uint(r) >= uint(rows) {
			return false
		}
		v := vals[p*vinc]
		for j := c; j < n; j++ {
			e := r*n + j
			var x float64
			if b64 != nil {
				x = b64[e]
			} else {
				x = float64(b32[e])
			}
			d := float64(x * val[bits[e>>6]>>(e&63)&1])
			dst[j] += float64(v * d)
		}
	}
	return true
}
