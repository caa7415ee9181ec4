package dp

// PoissonSample returns the indices in [0, n) kept independently with
// probability q, drawn from the noise source (the sampling is part of the
// mechanism and must be as unpredictable as the noise).
func PoissonSample(src *Source, n int, q float64) []int {
	var out []int
	for i := 0; i < n; i++ {
		if src.Uniform() < q {
			out = append(out, i)
		}
	}
	return out
}
