package vec

import "golang.org/x/sys/cpu"

// hasBMI2 selects the masked gather's assembly (SHRX for a mask's bits),
// and hasAVX512VL its AVX-512 kernel (eight columns a register, the mask's
// bits in a mask register, down to four columns with VL).
var (
	hasBMI2     = cpu.X86.HasBMI2
	hasAVX512VL = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
)

// sumIdxBits32 runs SumIdxBits32's kernel: the leading multiple of four
// columns in assembly, the rest in Go.
func sumIdxBits32(dst, vals []float64, vinc int, idx []int, b []float32, rows int, m *BitMask) bool {
	n := len(dst)
	c := 0
	if n4 := n &^ 3; useAVX && hasBMI2 && n4 > 0 {
		var ok bool
		if hasAVX512VL {
			ok = sumIdxBits32AVX512(&dst[0], n4, n, &vals[0], vinc, &idx[0], len(idx), &b[0], rows, &m.Bits[0], m.keep)
		} else {
			ok = sumIdxBits32AVX(&dst[0], n4, n, &vals[0], vinc, &idx[0], len(idx), &b[0], rows, &m.Bits[0], &m.lut)
		}
		if !ok {
			return false
		}
		c = n4
	}
	if c == n {
		return true
	}
	return sumIdxBits32Go(dst, vals, vinc, idx, b, rows, m, c)
}

//go:noescape
func sumIdxBits32AVX(dst *float64, n4, n int, vals *float64, vinc int, idx *int, k int, b *float32, rows int, bits *uint64, lut *[16][4]float64) (ok bool)

//go:noescape
func sumIdxBits32AVX512(dst *float64, n4, n int, vals *float64, vinc int, idx *int, k int, b *float32, rows int, bits *uint64, keep float64) (ok bool)

// prefetchBits issues the prefetches of PrefetchBits.
func prefetchBits(idx []int, bits []uint64, n, rows int) {
	if useAVX {
		prefetchBitsAVX(&idx[0], len(idx), &bits[0], n, rows)
	}
}

//go:noescape
func prefetchBitsAVX(idx *int, k int, bits *uint64, n, rows int)
