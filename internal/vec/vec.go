package vec

import (
	"fmt"
	"math"
)

// SumIdx sets dst to the sum of the rows idx[0], idx[1], ... of b
// (row-major, ldb values per row) scaled by vals[0], vals[vinc],
// vals[2·vinc], ..., added in that order from 0: dst[j] = Σ_p
// vals[p·vinc]·b[idx[p]·ldb+j] for j < len(dst), without reading dst. vinc
// 0 scales every row by vals[0]. It is one row of a sparse product. It
// panics if a row or a factor lies outside its slice (a programming error:
// callers pass validated matrices).
func SumIdx(dst, vals []float64, vinc int, idx []int, b []float64, ldb int) {
	n, k := len(dst), len(idx)
	if n == 0 {
		return
	}
	if k == 0 {
		clear(dst)
		return
	}
	checkVals(vals, vinc, k)
	if n > ldb || len(b) < n {
		panic(fmt.Sprintf("vec: SumIdx rows of width %d in %d values with stride %d", n, len(b), ldb))
	}
	// rows is the number of whole rows in b (the last may lack its padding)
	if rows := (len(b)-n)/ldb + 1; !sumIdx(dst, vals, vinc, idx, b, ldb, rows) {
		panic(fmt.Sprintf("vec: SumIdx row index outside the %d rows of width %d", rows, n))
	}
}

// AxpySeq adds the first k rows of b (row-major, ldb values per row) scaled
// by vals[0], vals[vinc], ... to dst, in order: dst[j] += vals[l·vinc]·b[l·ldb+j]
// for l < k and j < len(dst). It is one row of a dense product
// C[i,:] = Σ_l A[i,l]·B[l,:] with A's row (or column, vinc = its stride)
// in vals.
func AxpySeq(dst, vals []float64, vinc, k int, b []float64, ldb int) {
	sumSeq(dst, vals, vinc, k, b, ldb, false)
}

// SumSeq is AxpySeq into a dst that starts at 0: it sets dst to the sum
// (bit-identical to clearing dst first) without reading it.
func SumSeq(dst, vals []float64, vinc, k int, b []float64, ldb int) {
	sumSeq(dst, vals, vinc, k, b, ldb, true)
}

func sumSeq(dst, vals []float64, vinc, k int, b []float64, ldb int, zero bool) {
	n := len(dst)
	if n == 0 {
		return
	}
	if k <= 0 {
		if zero {
			clear(dst)
		}
		return
	}
	checkVals(vals, vinc, k)
	if n > ldb || (k-1)*ldb+n > len(b) {
		panic(fmt.Sprintf("vec: AxpySeq %d rows of width %d outside %d values with stride %d", k, n, len(b), ldb))
	}
	axpySeq(dst, vals, vinc, k, b, ldb, zero)
}

func checkVals(vals []float64, vinc, k int) {
	if vinc < 0 || len(vals) == 0 || (k-1)*vinc >= len(vals) {
		panic(fmt.Sprintf("vec: %d factors with stride %d outside %d values", k, vinc, len(vals)))
	}
}

// sumIdxGo and axpySeqGo are the kernels in Go. The explicit conversion
// float64(v*x) rounds the product, so no compiler fuses it with the sum.
func sumIdxGo(dst, vals []float64, vinc int, idx []int, b []float64, ldb, rows int) bool {
	n := len(dst)
	clear(dst)
	for p, r := range idx {
		if uint(r) >= uint(rows) {
			return false
		}
		v := vals[p*vinc]
		row := b[r*ldb : r*ldb+n]
		for j, x := range row {
			dst[j] += float64(v * x)
		}
	}
	return true
}

func axpySeqGo(dst, vals []float64, vinc, k int, b []float64, ldb int, zero bool) {
	n := len(dst)
	if zero {
		clear(dst)
	}
	for l := 0; l < k; l++ {
		v := vals[l*vinc]
		row := b[l*ldb : l*ldb+n]
		for j, x := range row {
			dst[j] += float64(v * x)
		}
	}
}

// sqrtF is math.Sqrt (an instruction on every architecture Go supports).
func sqrtF(x float64) float64 { return math.Sqrt(x) }
