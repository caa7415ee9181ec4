package vec

import "golang.org/x/sys/cpu"

// useAVX selects the assembly kernels; tests clear it to run the Go ones.
var useAVX = cpu.X86.HasAVX

func axpyIdx(dst, vals []float64, vinc int, idx []int, b []float64, ldb int) {
	if !useAVX {
		axpyIdxGo(dst, vals, vinc, idx, b, ldb)
		return
	}
	axpyIdxAVX(&dst[0], len(dst), &vals[0], vinc, &idx[0], len(idx), &b[0], ldb)
}

func axpySeq(dst, vals []float64, vinc, k int, b []float64, ldb int) {
	if !useAVX {
		axpySeqGo(dst, vals, vinc, k, b, ldb)
		return
	}
	axpySeqAVX(&dst[0], len(dst), &vals[0], vinc, k, &b[0], ldb)
}

//go:noescape
func axpyIdxAVX(dst *float64, n int, vals *float64, vinc int, idx *int, k int, b *float64, ldb int)

//go:noescape
func axpySeqAVX(dst *float64, n int, vals *float64, vinc int, k int, b *float64, ldb int)
