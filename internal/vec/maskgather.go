package vec

import (
	"fmt"
	"math"
)

// MaskWords is the length of a bit mask of n entries that the masked
// gather (SumIdxBits32) can read: one word per 64 entries and one more,
// because it reads 64 bits from the byte of any entry it gathers.
func MaskWords(n int) int { return (n+63)/64 + 1 }

// A BitMask is a dropout mask held as bits, for the masked gather: entry
// e counts as its value times Keep where bit e of Bits is set (bit e&63 of
// word e>>6) and as its value times 0 where it is not, the products of
// MulBits. Bits may be redrawn in place; Keep is fixed.
type BitMask struct {
	Bits []uint64
	keep float64
	lut  [16][4]float64 // each nibble's four factors
}

// NewBitMask returns the mask over bits with factor keep for a kept entry.
func NewBitMask(bits []uint64, keep float64) *BitMask {
	m := &BitMask{Bits: bits, keep: keep}
	for nib := range m.lut {
		for k := range 4 {
			if nib>>k&1 != 0 {
				m.lut[nib][k] = keep
			}
		}
	}
	return m
}

// Keep is the factor of a kept entry.
func (m *BitMask) Keep() float64 { return m.keep }

// SumIdxBits32 is SumIdx over the rows of a dropped-out matrix held in
// float32, without writing that matrix: b holds rows of n = len(dst)
// values, packed, each converted to float64 (exactly) before it is used,
// and its entry e counts as under the mask m (MulBits' products, each
// rounded). So dst gets the bits of MulBits over b's float64 values
// followed by SumIdx, reading half the bytes of a float64 row and no
// masked matrix. m.Bits must have MaskWords(len(b)) words or more. It
// panics if a row or a factor lies outside its slice (a programming error).
func SumIdxBits32(dst, vals []float64, vinc int, idx []int, b []float32, m *BitMask) {
	if rows, ok := checkBits(dst, vals, vinc, idx, len(b), m.Bits); ok {
		if !sumIdxBits32(dst, vals, vinc, idx, b, rows, m) {
			panic(fmt.Sprintf("vec: SumIdxBits32 row index outside the %d rows of width %d", rows, len(dst)))
		}
	}
}

// checkBits checks SumIdxBits32's arguments and returns the rows of b; false
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
		panic(fmt.Sprintf("vec: SumIdxBits32 rows of width %d in %d values with a mask of %d words", n, size, len(bits)))
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

// sumIdxBits32Go is the kernel in Go, columns from c on (the assembly's
// leftover columns, or all of them).
func sumIdxBits32Go(dst, vals []float64, vinc int, idx []int, b []float32, rows int, m *BitMask, c int) bool {
	n := len(dst)
	val, bits := [2]float64{0, m.keep}, m.Bits
	clear(dst[c:])
	for p, r := range idx {
		if uint(r) >= uint(rows) {
			return false
		}
		v := vals[p*vinc]
		for j := c; j < n; j++ {
			e := r*n + j
			d := float64(float64(b[e]) * val[bits[e>>6]>>(e&63)&1])
			dst[j] += float64(v * d)
		}
	}
	return true
}

// PrefetchBits asks the CPU to bring the mask bits of the rows idx[p] of a
// masked matrix (rows of n entries, rows rows; indices outside them are
// skipped) into the cache ahead of a masked gather over them. A hint
// only: it changes no value (a no-op off amd64).
func (m *BitMask) PrefetchBits(idx []int, n, rows int) {
	if len(idx) == 0 || len(m.Bits) == 0 || n <= 0 {
		return
	}
	prefetchBits(idx, m.Bits, n, min(rows, 64*len(m.Bits)/n))
}
