package dp

import "math"

// PoissonSample returns the indices in [0, n) kept independently with
// probability q, in increasing order, drawn from the noise source (the
// sampling is part of the mechanism and must be as unpredictable as the
// noise).
//
// It draws the gaps between kept indices instead of one Bernoulli(q) per
// index: a gap is Geometric(q), ⌊log U / log(1−q)⌋ for U uniform on (0, 1),
// since P(gap ≥ m) = P(U ≤ (1−q)^m) = (1−q)^m, and independent gaps are
// exactly independent inclusions. A DP-SGD step then costs its batch, not
// n draws: with 10⁵ training nodes and batches of 64, an epoch's 1,562
// steps made 1.6·10⁸ draws, a time per epoch quadratic in the nodes. The
// probabilities are those of the floating-point logarithm, exact to its
// rounding (about 10⁻¹⁶ relative), as U < q was exact to U's 2⁻⁵² grid.
func PoissonSample(src *Source, n int, q float64) []int {
	switch {
	case n <= 0 || !(q > 0):
		return nil
	case q >= 1:
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	lq := math.Log1p(-q) // < 0
	out := make([]int, 0, int(float64(n)*q)+8)
	for i := -1; ; {
		g := math.Log(src.Uniform()) / lq // ≥ 0: Uniform is in (0, 1)
		if !(g < float64(n-1-i)) {
			return out
		}
		i += 1 + int(g)
		out = append(out, i)
	}
}
