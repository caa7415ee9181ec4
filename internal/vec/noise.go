package vec

import (
	"fmt"
	"math"
)

// Kernels of Gaussian noise: the ziggurat's fast path over a buffer of
// random words, and the scaling and adding of the draws.

// ZigLayers is the number of ziggurat layers ZigFast's tables have.
const ZigLayers = 256

// ZigFast maps each 64-bit word of w (stored in a float64 slot, as
// math.Float64bits reads it) to a ziggurat candidate: layer i = the low 8
// bits, magnitude u = the top 52 bits · 2⁻⁵² in [0, 1), sign = bit 8, and
// candidate x = ±u·xt[i]. Where u < rt[i] the candidate is accepted and
// written over its word; elsewhere the word is left in place and its index
// appended to missed, in increasing order. It returns how many indices it
// appended; missed must have room for len(w). The bit for bit Go form is
// ZigWord; an AVX2 kernel does four words at a time where the CPU has it.
func ZigFast(w []float64, xt, rt *[ZigLayers]float64, missed []int32) int {
	if len(missed) < len(w) {
		panic(fmt.Sprintf("vec: ZigFast with %d words but room for %d misses", len(w), len(missed)))
	}
	done, k := zigFast(w, xt, rt, missed)
	for j := done; j < len(w); j++ {
		x, ok := ZigWord(math.Float64bits(w[j]), xt, rt)
		if ok {
			w[j] = x
		} else {
			missed[k] = int32(j)
			k++
		}
	}
	return k
}

// ZigWord is ZigFast for one word: the candidate and whether it is
// accepted.
func ZigWord(w uint64, xt, rt *[ZigLayers]float64) (float64, bool) {
	i := uint8(w)
	u := math.Float64frombits(0x3ff0000000000000|w>>12) - 1
	x := math.Float64frombits(math.Float64bits(u*xt[i]) | (w&0x100)<<55)
	return x, u < rt[i]
}

// UnitOpen maps a random word to the midpoint (k+½)/2⁵² of k = its top 52
// bits: a uniform draw from (0, 1), never 0 or 1, so safe to pass to log.
// Every midpoint is a float64 (k+½ has 53 significant bits), so the law is
// exactly uniform on them and symmetric: UnitOpen(^w) = 1 − UnitOpen(w).
// (With 53 bits, (k+½)/2⁵³ is not a float64 for k ≥ 2⁵²: k+½ is rounded,
// which makes the upper half a coarser grid and the all-ones word give
// exactly 1.) The noise source's uniforms and the ziggurat's slow draws
// (dp) and ASGL's walk steps (graphs) all take it.
func UnitOpen(w uint64) float64 { return (float64(w>>12) + 0.5) * (1.0 / (1 << 52)) }

// ScaleAddDiv sets e[i] = s·e[i] and out[i] = (x[i] + e[i])/d: a noise
// vector scaled to its standard deviation and added to a release, then
// divided (a mean's denominator; d = 1 leaves the sum, exactly). Where d
// is a power of two (DP-SGD's expected batch of 256, say) the kernel
// multiplies by 1/d, which is exact and gives the same bits, without
// the division's cost.
func ScaleAddDiv(e, x, out []float64, s, d float64) {
	n := checkLen("ScaleAddDiv", out, x, e)
	done := scaleAddDiv(e[:n], x[:n], out[:n], s, d)
	for i := done; i < n; i++ {
		v := s * e[i]
		e[i] = v
		out[i] = (x[i] + v) / d
	}
}

// exactReciprocal returns 1/d when d is a power of two whose reciprocal is
// a normal number: then y/d and y·(1/d) are the same real number, rounded
// once the same way, for every y.
func exactReciprocal(d float64) (float64, bool) {
	b := math.Float64bits(d)
	exp := int(b>>52) & 0x7ff
	if b>>63 != 0 || b&(1<<52-1) != 0 || exp == 0 || exp == 0x7ff {
		return 0, false
	}
	r := 1 / d
	if rb := math.Float64bits(r); int(rb>>52)&0x7ff == 0 { // subnormal
		return 0, false
	}
	return r, true
}
