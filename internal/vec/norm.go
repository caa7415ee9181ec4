package vec

import "math"

// NormTiny is the sum of squares below which Σ r_c² may have lost bits to
// underflow: each square of a value under about 1e-154 is subnormal or 0.
const NormTiny = 0x1p-960

// Norm2 returns ‖r‖₂ given s = Σ r_c² (as the caller summed it): √s when s
// is a normal number well above underflow and finite, else the scaled sum
// m·√(Σ (r_c/m)²) with m = max |r_c|, which neither underflows nor
// overflows. A row of values near 1e-162 has s subnormal, and 1/√s then
// scales it to a norm of 2 or more; its Norm2 is exact to rounding. 0 for
// a row of zeros.
func Norm2(r []float64, s float64) float64 {
	if s >= NormTiny && s <= math.MaxFloat64 {
		return math.Sqrt(s)
	}
	m := 0.0
	for _, v := range r {
		m = max(m, math.Abs(v))
	}
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return m
	}
	t := 0.0
	for _, v := range r {
		u := v / m
		t += u * u
	}
	return m * math.Sqrt(t)
}
