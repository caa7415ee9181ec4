package vec

import (
	"fmt"
	"math"
	"unsafe"
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

// ScatterWidth is the strip width of ScatterCSR.
const ScatterWidth = 16

// ScatterCSR adds, for every row i of a CSR pattern (indptr over
// len(indptr)−1 rows, column indices idx, factors vals[p·vinc] for entry
// p, vinc 0 for one factor for all), the strip x[i·ldx : i·ldx+16] scaled
// by each of the row's factors to the strip of out's row idx[p]
// (out[idx[p]·ldo :+16]), rows i in increasing order, each product
// rounded before it is added. From a cleared out that is a 16-column strip
// of Aᵀ·X whose every entry adds its terms in the order SumIdx adds them
// over Aᵀ's rows (rows of A increasing), so the same bits, without
// building Aᵀ. It panics if a column index is not below outRows or a
// factor or strip lies outside its slice (a programming error).
func ScatterCSR(out []float64, ldo, outRows int, indptr, idx []int, vals []float64, vinc int, x []float64, ldx int) {
	rows := len(indptr) - 1
	if rows <= 0 {
		return
	}
	nnz := indptr[rows] - indptr[0]
	if nnz == 0 {
		return
	}
	first := indptr[0]
	if first < 0 || indptr[rows] > len(idx) {
		panic(fmt.Sprintf("vec: ScatterCSR entries %d to %d of %d indices", first, indptr[rows], len(idx)))
	}
	checkVals(vals[first*vinc:], vinc, nnz)
	if ldo < ScatterWidth || ldx < ScatterWidth || len(out) < (outRows-1)*ldo+ScatterWidth || len(x) < (rows-1)*ldx+ScatterWidth {
		panic(fmt.Sprintf("vec: ScatterCSR strips of %d in %d and %d values with strides %d and %d", ScatterWidth, len(out), len(x), ldo, ldx))
	}
	for i := 0; i < rows; i++ {
		if indptr[i+1] < indptr[i] {
			panic(fmt.Sprintf("vec: ScatterCSR row %d ends before it starts", i))
		}
	}
	if !scatterCSR(out, ldo, outRows, indptr, idx[first:], vals[first*vinc:], vinc, x, ldx) {
		panic(fmt.Sprintf("vec: ScatterCSR column index outside the %d rows of out", outRows))
	}
}

// scatterCSRGo is ScatterCSR's kernel in Go (idx and vals start at entry
// indptr[0]).
func scatterCSRGo(out []float64, ldo, outRows int, indptr, idx []int, vals []float64, vinc int, x []float64, ldx int) bool {
	p := 0
	for i := 0; i+1 < len(indptr); i++ {
		g := x[i*ldx : i*ldx+ScatterWidth]
		for n := indptr[i+1] - indptr[i]; n > 0; n-- {
			j := idx[p]
			if uint(j) >= uint(outRows) {
				return false
			}
			v := vals[p*vinc]
			o := out[j*ldo : j*ldo+ScatterWidth]
			for c, gc := range g {
				o[c] += float64(v * gc)
			}
			p++
		}
	}
	return true
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

// PrefetchRows asks the CPU to bring the rows idx[p] of b (ldb values per
// row, rows rows; indices outside them are skipped) into the cache ahead
// of a sum over them. A hint only: it changes no value (a no-op off amd64).
func PrefetchRows(idx []int, b []float64, ldb, rows int) {
	if len(idx) == 0 || len(b) == 0 || ldb <= 0 {
		return
	}
	prefetchRows(idx, unsafe.Pointer(&b[0]), 8*ldb, min(rows, len(b)/ldb))
}

// PrefetchRows32 is PrefetchRows for rows of float32 values.
func PrefetchRows32(idx []int, b []float32, ldb, rows int) {
	if len(idx) == 0 || len(b) == 0 || ldb <= 0 {
		return
	}
	prefetchRows(idx, unsafe.Pointer(&b[0]), 4*ldb, min(rows, len(b)/ldb))
}

// SumSeqRows and AxpySeqRows are SumSeq and AxpySeq for rows rows of
// width n at once: row r is dst[r·ldd : r·ldd+n], its factors
// vals[r·rinc + l·vinc] for l < k, all over the same k rows of b. Each row
// gets the bits of the one-row kernels. The bounds are checked once for all
// rows, and the kernels take four narrow rows (n ≤ 8, e.g. a layer with one
// output per class) or four (AVX-512) or two wide ones (whole strips of 16
// columns) at a time: a row alone keeps only one to four chains of
// dependent additions in flight, and the rows' chains do not wait on each
// other.
func SumSeqRows(dst []float64, rows, n, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int) {
	sumSeqRows(dst, rows, n, ldd, vals, rinc, vinc, k, b, ldb, true)
}

// AxpySeqRows: see SumSeqRows.
func AxpySeqRows(dst []float64, rows, n, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int) {
	sumSeqRows(dst, rows, n, ldd, vals, rinc, vinc, k, b, ldb, false)
}

func sumSeqRows(dst []float64, rows, n, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int, zero bool) {
	if rows <= 0 || n <= 0 {
		return
	}
	if ldd < n || (rows-1)*ldd+n > len(dst) {
		panic(fmt.Sprintf("vec: AxpySeqRows %d rows of width %d and stride %d outside %d values", rows, n, ldd, len(dst)))
	}
	if k <= 0 {
		for r := range rows {
			if zero {
				clear(dst[r*ldd : r*ldd+n])
			}
		}
		return
	}
	if rinc < 0 || vinc < 0 || (rows-1)*rinc+(k-1)*vinc >= len(vals) {
		panic(fmt.Sprintf("vec: AxpySeqRows %d rows of %d factors with strides %d, %d outside %d values", rows, k, rinc, vinc, len(vals)))
	}
	if n > ldb || (k-1)*ldb+n > len(b) {
		panic(fmt.Sprintf("vec: AxpySeqRows %d rows of width %d outside %d values with stride %d", k, n, len(b), ldb))
	}
	r := 0
	if g := rows / 4; g > 0 && seq4(dst, g, n, ldd, vals, rinc, vinc, k, b, ldb, zero) {
		r = 4 * g
	}
	if w := n &^ 15; useAVX && w > 0 { // four or two rows at a time over the strips
		if g := (rows - r) / 4; g > 0 && seq4w(dst[r*ldd:], g, w, ldd, vals[r*rinc:], rinc, vinc, k, b, ldb, zero) {
			end := r + 4*g
			for i := r; w < n && i < end; i++ { // the columns past the strips
				axpySeq(dst[i*ldd+w:i*ldd+n], vals[i*rinc:], vinc, k, b[w:], ldb, zero)
			}
			r = end
		}
		for ; r+2 <= rows; r += 2 {
			d0, d1 := dst[r*ldd:r*ldd+n], dst[(r+1)*ldd:(r+1)*ldd+n]
			v0, v1 := vals[r*rinc:], vals[(r+1)*rinc:]
			axpySeq2(d0[:w], d1[:w], v0, v1, vinc, k, b, ldb, zero)
			if w < n {
				axpySeq(d0[w:], v0, vinc, k, b[w:], ldb, zero)
				axpySeq(d1[w:], v1, vinc, k, b[w:], ldb, zero)
			}
		}
	}
	for ; r < rows; r++ {
		axpySeq(dst[r*ldd:r*ldd+n], vals[r*rinc:], vinc, k, b, ldb, zero)
	}
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
