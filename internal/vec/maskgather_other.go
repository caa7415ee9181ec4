//go:build !amd64

package vec

var hasBMI2, hasAVX512VL = false, false

func sumIdxBits32(dst, vals []float64, vinc int, idx []int, b []float32, rows int, m *BitMask) bool {
	return sumIdxBits32Go(dst, vals, vinc, idx, b, rows, m, 0)
}

func prefetchBits(idx []int, bits []uint64, n, rows int) {}
