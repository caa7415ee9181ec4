package vec

import (
	"fmt"
	"math"
)

// Element-wise kernels: dst[i] = f(x[i], y[i]) for i < len(dst), AVX over
// the leading multiple of four entries where the CPU has it, each the same
// IEEE operation as the scalar loop (so bit-identical to it). dst may be x
// or y.

// Add sets dst[i] = x[i] + y[i].
func Add(dst, x, y []float64) {
	n := checkLen("Add", dst, x, y)
	done := binary(opAdd, dst[:n], x[:n], y[:n])
	for i := done; i < n; i++ {
		dst[i] = x[i] + y[i]
	}
}

// AddSums4 sets dst[i] += (s1[i] + s3[i]) + (s0[i] + s2[i]), in that
// order: four partial sums of dot products combined as gonum's
// DotUnitary combines them (nn's A·Bᵀ), in one pass.
func AddSums4(dst, s0, s1, s2, s3 []float64) {
	n := len(dst)
	if len(s0) < n || len(s1) < n || len(s2) < n || len(s3) < n {
		panic(fmt.Sprintf("vec: AddSums4 into %d entries from %d, %d, %d and %d", n, len(s0), len(s1), len(s2), len(s3)))
	}
	done := addSums4(dst, s0, s1, s2, s3)
	for i := done; i < n; i++ {
		dst[i] += (s1[i] + s3[i]) + (s0[i] + s2[i])
	}
}

// Mul sets dst[i] = x[i]·y[i].
func Mul(dst, x, y []float64) {
	n := checkLen("Mul", dst, x, y)
	done := binary(opMul, dst[:n], x[:n], y[:n])
	for i := done; i < n; i++ {
		dst[i] = x[i] * y[i]
	}
}

// ReLU sets dst[i] = x[i] unless x[i] < 0, else 0 (−0 and NaN pass).
func ReLU(dst, x []float64) {
	n := checkLen("ReLU", dst, x, x)
	done := binary(opReLU, dst[:n], x[:n], x[:n])
	for i := done; i < n; i++ {
		if v := x[i]; !(v < 0) {
			dst[i] = v
		} else {
			dst[i] = 0
		}
	}
}

// ReLUGrad sets dst[i] = dy[i] where x[i] ≥ 0, else 0 (NaN x gives 0).
func ReLUGrad(dst, x, dy []float64) {
	n := checkLen("ReLUGrad", dst, x, dy)
	done := binary(opReLUGrad, dst[:n], x[:n], dy[:n])
	for i := done; i < n; i++ {
		if x[i] >= 0 {
			dst[i] = dy[i]
		} else {
			dst[i] = 0
		}
	}
}

// MulBits sets dst[i] = x[i]·keep where bit from+i of bits is set and
// x[i]·0 where it is not: a dropout mask held as bits, the same products
// as Mul by a mask of keep and 0 entries (−0 for negative x, NaN for NaN).
// The kernel takes 64 entries per word of bits, four at a time from a
// table of the 16 nibbles.
func MulBits(dst, x []float64, bits []uint64, from int, keep float64) {
	n := checkLen("MulBits", dst, x, x)
	if from < 0 || (from+n+63)/64 > len(bits) {
		panic(fmt.Sprintf("vec: MulBits over bits %d to %d of %d", from, from+n, 64*len(bits)))
	}
	val := [2]float64{0, keep}
	i := 0
	for ; i < n && (from+i)&63 != 0; i++ {
		b := from + i
		dst[i] = x[i] * val[bits[b>>6]>>(b&63)&1]
	}
	if words := (n - i) / 64; words > 0 {
		i += mulBits(dst[i:], x[i:], bits[(from+i)>>6:], words, keep)
	}
	for ; i < n; i++ {
		b := from + i
		dst[i] = x[i] * val[bits[b>>6]>>(b&63)&1]
	}
}

const (
	opAdd = iota
	opMul
	opReLU
	opReLUGrad
)

func checkLen(what string, dst, x, y []float64) int {
	if len(x) < len(dst) || len(y) < len(dst) {
		panic(fmt.Sprintf("vec: %s into %d entries from %d and %d", what, len(dst), len(x), len(y)))
	}
	return len(dst)
}

// AddRows sets every row of dst (rows of len(b) values) to the same row of
// x plus b; MulRows to the row times b, entry by entry.
func AddRows(dst, x, b []float64) { rowsOp(opAdd, "AddRows", dst, x, b) }

// MulRows: see AddRows.
func MulRows(dst, x, b []float64) { rowsOp(opMul, "MulRows", dst, x, b) }

func rowsOp(op int, what string, dst, x, b []float64) {
	d := len(b)
	if len(dst) == 0 {
		return
	}
	if d == 0 || len(dst)%d != 0 || len(x) < len(dst) {
		panic(fmt.Sprintf("vec: %s of %d and %d entries by a row of %d", what, len(dst), len(x), d))
	}
	rows := len(dst) / d
	if rows > 0 && d%4 == 0 && rowsKernel(op, dst, x, b, rows) {
		return
	}
	f := Add
	if op == opMul {
		f = Mul
	}
	for i := 0; i < rows; i++ {
		f(dst[i*d:(i+1)*d], x[i*d:(i+1)*d], b)
	}
}

// AffineRows sets every row of dst to ((x[i,:] + a)·s)·g + b, element by
// element with each operation rounded in that order (one pass for what
// AddRows, MulRows, MulRows and AddRows do in four: an evaluation-mode
// BatchNorm, (x − μ)·(1/σ)·γ + β with a = −μ, and the same bits). dst may be
// x; a, s, g and b are rows of equal width.
func AffineRows(dst, x, a, s, g, b []float64) {
	d := len(a)
	if len(dst) == 0 {
		return
	}
	if d == 0 || len(s) != d || len(g) != d || len(b) != d || len(dst)%d != 0 || len(x) < len(dst) {
		panic(fmt.Sprintf("vec: AffineRows of %d and %d entries by rows of %d, %d, %d and %d", len(dst), len(x), d, len(s), len(g), len(b)))
	}
	rows := len(dst) / d
	w := 0
	if d >= 4 && affineRows(dst, x, a, s, g, b, rows) {
		w = d &^ 3
	}
	for i := 0; i < rows; i++ {
		o, r := dst[i*d:(i+1)*d], x[i*d:(i+1)*d]
		for c := w; c < d; c++ {
			o[c] = float64(float64(float64(r[c]+a[c])*s[c])*g[c]) + b[c]
		}
	}
}

// Exp sets dst[i] = math.Exp(x[i]), bit for bit. Where math.Exp takes its
// FMA path (amd64 with AVX2 and FMA), groups of four entries in
// [−700, 700] go through a kernel that performs that path's operations
// four lanes at a time (no special case of math.Exp applies there); every
// other entry goes through math.Exp.
func Exp(dst, x []float64) {
	n := checkLen("Exp", dst, x, x)
	for i := 0; i < n; {
		i += expKernel(dst[i:n], x[i:n])
		for end := min(i+4, n); i < end; i++ { // the group that stopped it
			dst[i] = math.Exp(x[i])
		}
	}
}

// ScaleRows sets row i of dst (rows of k values) to f[i]·x[i,:]; dst may
// be x.
func ScaleRows(dst, x, f []float64, k int) {
	rows := len(f)
	if k <= 0 || rows == 0 {
		return
	}
	if len(dst) < rows*k || len(x) < rows*k {
		panic(fmt.Sprintf("vec: ScaleRows of %d rows of %d into %d values from %d", rows, k, len(dst), len(x)))
	}
	w := 0
	if k >= 4 && scaleRows(dst, x, f, k) {
		w = k &^ 3
	}
	for i, s := range f {
		o, r := dst[i*k:(i+1)*k], x[i*k:(i+1)*k]
		for c := w; c < k; c++ {
			o[c] = r[c] * s
		}
	}
}

// RowNormGrad sets row i of dst (rows of k values) to
// (g[i,:] − x[i,:]/norm[i]·dot[i])/norm[i], each operation rounded in that
// order: row normalisation's gradient with y = x/‖x‖ and dot = ⟨y, dy⟩.
func RowNormGrad(dst, x, g, norm, dot []float64, k int) {
	rows := len(norm)
	if k <= 0 || rows == 0 {
		return
	}
	if len(dot) != rows || len(dst) < rows*k || len(x) < rows*k || len(g) < rows*k {
		panic(fmt.Sprintf("vec: RowNormGrad of %d rows of %d (%d dots) into %d values from %d and %d", rows, k, len(dot), len(dst), len(x), len(g)))
	}
	w := 0
	if k >= 4 && rowNormGrad(dst, x, g, norm, dot, k) {
		w = k &^ 3
	}
	for i, nm := range norm {
		o, r, gr := dst[i*k:(i+1)*k], x[i*k:(i+1)*k], g[i*k:(i+1)*k]
		for c := w; c < k; c++ {
			o[c] = (gr[c] - float64(float64(r[c]/nm)*dot[i])) / nm
		}
	}
}
