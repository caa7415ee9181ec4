package vec

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX selects the assembly kernels; tests clear it to run the Go ones.
var useAVX = cpu.X86.HasAVX

// sumIdx reports false when an index is outside [0, rows).
func sumIdx(dst, vals []float64, vinc int, idx []int, b []float64, ldb, rows int) bool {
	if !useAVX {
		return sumIdxGo(dst, vals, vinc, idx, b, ldb, rows)
	}
	return sumIdxAVX(&dst[0], len(dst), &vals[0], vinc, &idx[0], len(idx), &b[0], ldb, rows)
}

func axpySeq(dst, vals []float64, vinc, k int, b []float64, ldb int, zero bool) {
	if !useAVX {
		axpySeqGo(dst, vals, vinc, k, b, ldb, zero)
		return
	}
	axpySeqAVX(&dst[0], len(dst), &vals[0], vinc, k, &b[0], ldb, zero)
}

//go:noescape
func sumIdxAVX(dst *float64, n int, vals *float64, vinc int, idx *int, k int, b *float64, ldb int, rows int) (ok bool)

//go:noescape
func axpySeqAVX(dst *float64, n int, vals *float64, vinc int, k int, b *float64, ldb int, zero bool)

// adam updates the leading multiple of four elements with AVX and returns
// how many it did.
func adam(p, g, m, v []float64, c AdamCoef) int {
	n := len(p) &^ 3
	if !useAVX || n == 0 {
		return 0
	}
	k := [8]float64{c.WeightDecay, c.Beta1, 1 - c.Beta1, c.Beta2, 1 - c.Beta2, c.Step, c.Corr2, c.Eps}
	adamAVX(&p[0], &g[0], &m[0], &v[0], n, &k)
	return n
}

//go:noescape
func adamAVX(pp, gp, mp, vp *float64, n int, k *[8]float64)

// binary applies op to the leading multiple of four entries with AVX and
// returns how many it did.
func binary(op int, dst, x, y []float64) int {
	n := len(dst) &^ 3
	if !useAVX || n == 0 {
		return 0
	}
	binaryAVX(op, &dst[0], &x[0], &y[0], n)
	return n
}

//go:noescape
func binaryAVX(op int, dst, x, y *float64, n int)

// addSums4 runs AddSums4 over the leading multiple of four entries with
// AVX and returns how many it did.
func addSums4(dst, s0, s1, s2, s3 []float64) int {
	n := len(dst) &^ 3
	if !useAVX || n == 0 {
		return 0
	}
	addSums4AVX(&dst[0], &s0[0], &s1[0], &s2[0], &s3[0], n)
	return n
}

//go:noescape
func addSums4AVX(dst, s0, s1, s2, s3 *float64, n int)

// hasAVX2 selects the SELU kernels (256-bit integer shifts for 2^k).
var hasAVX2 = cpu.X86.HasAVX2

// selu runs the SELU kernel (grad: its gradient) on the leading multiple
// of four entries and returns how many it did.
func selu(grad bool, dst, x, dy []float64) int {
	n := len(dst) &^ 3
	if !useAVX || !hasAVX2 || n == 0 {
		return 0
	}
	mode := 0
	if grad {
		mode = 1
	}
	done := 0
	if hasAVX512 {
		if done = n &^ 63; done > 0 {
			seluAVX512(mode, &dst[0], &x[0], &dy[0], done, &expPoly4, &seluConst4)
		}
	}
	if done < n {
		seluAVX(mode, &dst[done], &x[done], &dy[done], n-done, &expPoly4, &seluConst4)
	}
	return n
}

// hasAVX512 selects the 512-bit SELU kernel, which takes 64 entries per
// step in eight chains (the same operations on twice the lanes, in twice
// the registers: where the core splits 512-bit operations, as AMD's Zen 4
// does, it still issues half the instructions; 81 against 139 µs for a
// 2708×32 layer there); tests clear it to run the 256-bit one.
var hasAVX512 = cpu.X86.HasAVX512F

//go:noescape
func seluAVX512(mode int, dst, x, dy *float64, n int, poly *[14][4]float64, k *[8][4]float64)

//go:noescape
func seluAVX(mode int, dst, x, dy *float64, n int, poly *[14][4]float64, k *[8][4]float64)

// rowsKernel runs AddRows or MulRows for rows whose width is a multiple of
// four in one call; false without AVX.
func rowsKernel(op int, dst, x, b []float64, rows int) bool {
	if !useAVX {
		return false
	}
	rowsAVX(op, &dst[0], &x[0], &b[0], rows, len(b))
	return true
}

//go:noescape
func rowsAVX(op int, dst, x, b *float64, rows, d int)

// zigFast runs ZigFast's AVX2 kernel on the leading multiple of four words
// and returns how many words it did and how many misses it appended.
func zigFast(w []float64, xt, rt *[ZigLayers]float64, missed []int32) (done, k int) {
	n := len(w) &^ 3
	if !useAVX || !hasAVX2 || n == 0 {
		return 0, 0
	}
	return n, zigAVX2(&w[0], n, xt, rt, &missed[0])
}

//go:noescape
func zigAVX2(w *float64, n int, xt, rt *[ZigLayers]float64, missed *int32) (k int)

// scaleAddDiv runs ScaleAddDiv with AVX on the leading multiple of four
// entries and returns how many it did.
func scaleAddDiv(e, x, out []float64, s, d float64) int {
	n := len(out) &^ 3
	if !useAVX || n == 0 {
		return 0
	}
	if r, ok := exactReciprocal(d); ok {
		scaleAddDivAVX(&e[0], &x[0], &out[0], n, s, r, true)
	} else {
		scaleAddDivAVX(&e[0], &x[0], &out[0], n, s, d, false)
	}
	return n
}

//go:noescape
func scaleAddDivAVX(e, x, out *float64, n int, s, d float64, mul bool)

// mulBits runs MulBits over whole words of bits with AVX (64 entries per
// word) and returns how many entries it did.
func mulBits(dst, x []float64, bits []uint64, words int, keep float64) int {
	if !useAVX {
		return 0
	}
	var lut [16][4]float64 // nibble → the four factors
	for nib := range lut {
		for k := range 4 {
			if nib>>k&1 != 0 {
				lut[nib][k] = keep
			}
		}
	}
	mulBitsAVX(&dst[0], &x[0], &bits[0], words, &lut)
	return 64 * words
}

//go:noescape
func mulBitsAVX(dst, x *float64, bits *uint64, words int, lut *[16][4]float64)

func scatterCSR(out []float64, ldo, outRows int, indptr, idx []int, vals []float64, vinc int, x []float64, ldx int) bool {
	if !useAVX {
		return scatterCSRGo(out, ldo, outRows, indptr, idx, vals, vinc, x, ldx)
	}
	return scatterCSRAVX(&out[0], ldo, &indptr[0], len(indptr)-1, &idx[0], &vals[0], vinc, &x[0], ldx, outRows)
}

//go:noescape
func scatterCSRAVX(out *float64, ldo int, indptr *int, rows int, idx *int, vals *float64, vinc int, x *float64, ldx int, outRows int) (ok bool)

func axpySeq2(dst0, dst1, vals0, vals1 []float64, vinc, k int, b []float64, ldb int, zero bool) {
	axpySeq2AVX(&dst0[0], &dst1[0], len(dst0), &vals0[0], &vals1[0], vinc, k, &b[0], ldb, zero)
}

//go:noescape
func axpySeq2AVX(dst0, dst1 *float64, n int, vals0, vals1 *float64, vinc int, k int, b *float64, ldb int, zero bool)

// seq4 runs the four-row kernel on g groups of four rows of width up to
// 8; false: not taken.
func seq4(dst []float64, g, n, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int, zero bool) bool {
	if !useAVX || !hasAVX2 || n > 8 {
		return false
	}
	seq4AVX(&dst[0], ldd, n, &vals[0], rinc, vinc, k, &b[0], ldb, zero, g)
	return true
}

//go:noescape
func seq4AVX(dst *float64, ldd, n int, vals *float64, rinc, vinc, k int, b *float64, ldb int, zero bool, groups int)

// affineRows runs AffineRows' kernel on the leading multiple of four
// columns of every row; false without AVX.
func affineRows(dst, x, a, s, g, b []float64, rows int) bool {
	if !useAVX {
		return false
	}
	affineRowsAVX(&dst[0], &x[0], &a[0], &s[0], &g[0], &b[0], rows, len(a))
	return true
}

//go:noescape
func affineRowsAVX(dst, x, a, s, gm, b *float64, rows, d int)

// seq4w runs the 512-bit four-row kernel on g groups of four rows over
// their first w columns (a multiple of 16); false: not taken.
func seq4w(dst []float64, g, w, ldd int, vals []float64, rinc, vinc, k int, b []float64, ldb int, zero bool) bool {
	if !useAVX || !hasAVX512 || w == 0 {
		return false
	}
	seq4wAVX512(&dst[0], ldd, w, &vals[0], rinc, vinc, k, &b[0], ldb, zero, g)
	return true
}

//go:noescape
func seq4wAVX512(dst *float64, ldd, n int, vals *float64, rinc, vinc, k int, b *float64, ldb int, zero bool, groups int)

// useExpFMA selects Exp's kernel: math.Exp takes its FMA path on CPUs
// with AVX and FMA, and the kernel performs that path's operations. A
// check at start-up compares the two on probe values and leaves the kernel
// off if they differ in a single bit (e.g. when GODEBUG turns FMA off for
// the math package but not for this check).
var hasFMA = cpu.X86.HasFMA

var useExpFMA = cpu.X86.HasAVX2 && hasFMA && expProbe()

// expKernel runs Exp's kernel from the start of x and returns how many
// entries it did (a multiple of four).
func expKernel(dst, x []float64) int {
	n := len(x) &^ 3
	if !useAVX || !useExpFMA || n == 0 {
		return 0
	}
	return expFMA(&dst[0], &x[0], n)
}

func expProbe() bool {
	x := make([]float64, 0, 64)
	for i := range 60 {
		x = append(x, -700+float64(i)*23.7+float64(i%7)*0.013)
	}
	x = append(x, 0, math.Copysign(0, -1), 1e-300, -1e-17)
	got := make([]float64, len(x))
	if expFMA(&got[0], &x[0], len(x)) != len(x) {
		return false
	}
	for i, v := range x {
		if math.Float64bits(got[i]) != math.Float64bits(math.Exp(v)) {
			return false
		}
	}
	return true
}

//go:noescape
func expFMA(dst, x *float64, n int) (done int)

// scaleRows and rowNormGrad run their kernels on the leading multiple of
// four columns of every row; false without AVX.
func scaleRows(dst, x, f []float64, k int) bool {
	if !useAVX {
		return false
	}
	scaleRowsAVX(&dst[0], &x[0], &f[0], len(f), k)
	return true
}

func rowNormGrad(dst, x, g, norm, dot []float64, k int) bool {
	if !useAVX {
		return false
	}
	rowNormGradAVX(&dst[0], &x[0], &g[0], &norm[0], &dot[0], len(norm), k)
	return true
}

//go:noescape
func scaleRowsAVX(dst, x, f *float64, rows, k int)

//go:noescape
func rowNormGradAVX(dst, x, dy, norm, dot *float64, rows, k int)

// prefetchRows issues the prefetches of PrefetchRows (none without AVX,
// whose CPUs this build otherwise treats as plain amd64).
// ld is the rows' stride in bytes.
func prefetchRows(idx []int, b unsafe.Pointer, ld, rows int) {
	if useAVX {
		prefetchRowsAVX(&idx[0], len(idx), b, ld, rows)
	}
}

//go:noescape
func prefetchRowsAVX(idx *int, k int, b unsafe.Pointer, ld, rows int)

// colRed runs a column reduction (ColAdd, ColSqDev, ColGrad) over the
// leading multiple of four columns with AVX and returns how many it did.
func colRed(mode int, a, b, x, y, m, s []float64, rows, k, ld int) int {
	k4 := k &^ 3
	if !useAVX || k4 == 0 || rows == 0 {
		return 0
	}
	colRedAVX(mode, first(a), first(b), first(x), first(y), first(m), first(s), rows, k4, ld)
	return k4
}

// first is &s[0], or nil for an empty s (an operand the mode does not read).
func first(s []float64) *float64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

//go:noescape
func colRedAVX(mode int, a, b, x, y, m, s *float64, rows, k4, ld int)
