package vec

import "math"

// SELU constants (Klambauer et al. 2017).
const (
	SELUAlpha  = 1.6732632423543772848170429916717
	SELULambda = 1.0507009873554804934193349852946
)

// expLow is the smallest argument of exp: below it exp returns 0 (e^x <
// 3.3e-308, where SELU's λα·(eˣ − 1) is −λα to the last bit and its
// gradient below any float64 step).
const expLow = -708.0

// exp coefficients: range reduction by ln 2 in two parts (the first with
// few mantissa bits, so k·ln2Hi is exact) and the Taylor polynomial of
// degree 13 on |r| ≤ ln2/2, whose truncation error (< 5e-18 relative) is
// below the rounding of the result.
const (
	log2e = 1.4426950408889634073599246810019
	ln2Hi = 6.93145751953125e-1
	ln2Lo = 1.42860682030941723212e-6
)

// expPoly holds 1/13!, 1/12!, …, 1/1!, 1/0! (Horner order).
var expPoly = func() [14]float64 {
	var c [14]float64
	f := 1.0
	for n := 0; n <= 13; n++ {
		if n > 0 {
			f *= float64(n)
		}
		c[13-n] = 1 / f
	}
	return c
}()

// exp is e^x as the SELU kernels compute it: round-to-nearest k = x/ln 2,
// r = x − k·ln2Hi − k·ln2Lo, e^r by Horner's rule, times 2^k; 0 below
// expLow. It agrees with math.Exp within a few units in the last place on
// [expLow, 709] (SELU takes it for x ≤ 0 only) and is bit-identical to the AVX kernels (the same IEEE
// operations in the same order), so results do not depend on the CPU.
func exp(x float64) float64 {
	if x < expLow {
		return 0
	}
	k := math.RoundToEven(x * log2e)
	r := x - float64(k*ln2Hi)
	r = r - float64(k*ln2Lo)
	p := expPoly[0]
	for _, c := range expPoly[1:] {
		p = float64(p*r) + c
	}
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}

// seluConst holds λ, λ·α, expLow, log2e, ln2Hi, ln2Lo, 1 and the
// exponent bias 1023 (as int64 bits) for the kernels.
var seluConst = [8]float64{SELULambda, SELULambda * SELUAlpha, expLow, log2e, ln2Hi, ln2Lo, 1, math.Float64frombits(1023)}

// expPoly4 and seluConst4 are expPoly and seluConst with every value
// repeated four times (the kernels read them as 256-bit operands).
var expPoly4, seluConst4 = func() (p [14][4]float64, k [8][4]float64) {
	for i, v := range expPoly {
		p[i] = [4]float64{v, v, v, v}
	}
	for i, v := range seluConst {
		k[i] = [4]float64{v, v, v, v}
	}
	return p, k
}()

// SELU sets dst[i] = λ·x[i] for x[i] > 0 and λα·(e^x[i] − 1) otherwise
// (e^x as exp computes it).
func SELU(dst, x []float64) {
	n := checkLen("SELU", dst, x, x)
	done := selu(false, dst[:n], x[:n], x[:n])
	for i := done; i < n; i++ {
		dst[i] = seluGo(x[i])
	}
}

// SELUGrad sets dst[i] = λ·dy[i] for x[i] > 0 and λα·e^x[i]·dy[i]
// otherwise.
func SELUGrad(dst, x, dy []float64) {
	n := checkLen("SELUGrad", dst, x, dy)
	done := selu(true, dst[:n], x[:n], dy[:n])
	for i := done; i < n; i++ {
		dst[i] = seluGradGo(x[i], dy[i])
	}
}

func seluGo(v float64) float64 {
	if v > 0 {
		return seluConst[0] * v
	}
	return seluConst[1] * (exp(v) - 1)
}

func seluGradGo(v, dy float64) float64 {
	if v > 0 {
		return seluConst[0] * dy
	}
	return float64(seluConst[1]*exp(v)) * dy
}
