//go:build !amd64

package vec

import "unsafe"

// useAVX and hasAVX2 are false off amd64: the Go kernels run (tests read
// them to choose what to compare).
var useAVX, hasAVX2, hasAVX512 = false, false, false

func sumIdx(dst, vals []float64, vinc int, idx []int, b []float64, ldb, rows int) bool {
	return sumIdxGo(dst, vals, vinc, idx, b, ldb, rows)
}

func axpySeq(dst, vals []float64, vinc, k int, b []float64, ldb int, zero bool) {
	axpySeqGo(dst, vals, vinc, k, b, ldb, zero)
}

func adam(p, g, m, v []float64, c AdamCoef) int { return 0 }

func binary(op int, dst, x, y []float64) int { return 0 }

func addSums4(dst, s0, s1, s2, s3 []float64) int { return 0 }

func selu(grad bool, dst, x, dy []float64) int { return 0 }

func rowsKernel(op int, dst, x, b []float64, rows int) bool { return false }

func zigFast(w []float64, xt, rt *[ZigLayers]float64, missed []int32) (done, k int) { return 0, 0 }

func scaleAddDiv(e, x, out []float64, s, d float64) int { return 0 }

var useVAES = false

func expandKey256(key *[32]byte, rk *[15][16]byte) { panic("vec: no VAES") }

func ctr256VAES(rk *[15][16]byte, dst *byte, n int, lo, hi uint64) { panic("vec: no VAES") }

func mulBits(dst, x []float64, bits []uint64, words int, keep float64) int { return 0 }

func scatterCSR(out []float64, ldo, outRows int, indptr, idx []int, vals []float64, vinc int, x []float64, ldx int) bool {
	return scatterCSRGo(out, ldo, outRows, indptr, idx, vals, vinc, x, ldx)
}

func axpySeq2(dst0, dst1, vals0, vals1 []float64, vinc, k int, b []float64, ldb int, zero bool) {
	panic("vec: no two-row kernel")
}

func seq4(dst []float64, g, n, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int, zero bool) bool {
	return false
}

func affineRows(dst, x, a, s, g, b []float64, rows int) bool { return false }

func seq4w(dst []float64, g, w, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int, zero bool) bool {
	return false
}

func expKernel(dst, x []float64) int { return 0 }

var hasFMA, useExpFMA = false, false

func scaleRows(dst, x, f []float64, k int) bool { return false }

func rowNormGrad(dst, x, g, norm, dot []float64, k int) bool { return false }

func prefetchRows(idx []int, b unsafe.Pointer, ld, rows int) {}

func colRed(mode int, a, b, x, y, m, s []float64, rows, k, ld int) int { return 0 }
