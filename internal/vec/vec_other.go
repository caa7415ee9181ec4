//go:build !amd64

package vec

func axpyIdx(dst, vals []float64, vinc int, idx []int, b []float64, ldb int) {
	axpyIdxGo(dst, vals, vinc, idx, b, ldb)
}

func axpySeq(dst, vals []float64, vinc, k int, b []float64, ldb int) {
	axpySeqGo(dst, vals, vinc, k, b, ldb)
}
