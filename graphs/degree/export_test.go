package degree

import "github.com/dpgnn/dpgnn/graphs"

// Greedy is greedy with pairs given as {i, j} (value 1), for the external
// tests' counterexample with a fixed visiting order.
func Greedy(n int, ij [][2]int, d int) *graphs.CSR {
	pairs := make([]pair, len(ij))
	for k, p := range ij {
		pairs[k] = pair{p[0], p[1], 1}
	}
	return greedy(n, pairs, d, false)
}
