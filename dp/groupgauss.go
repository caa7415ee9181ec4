package dp

import "math"

// binomialLogPMF returns ln Binom(n, q)(i), i = 0 … n (−Inf where q = 1 and
// i < n): the weights of Occurrences over Poisson sampling.
func binomialLogPMF(n int, q float64) []float64 {
	out := make([]float64, n+1)
	lq, lp := math.Log(q), math.Log1p(-q)
	for i := range out {
		a, b := float64(i)*lq, float64(n-i)*lp
		if i == 0 {
			a = 0
		}
		if i == n {
			b = 0
		}
		out[i] = logBinom(n, i) + a + b
	}
	return out
}
