package gen_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/gen"
)

// BenchmarkMulDense measures Â·X-style aggregation: the adjacency of a
// 100,000-node CSBM graph (average degree 10, about 10⁶ stored entries)
// times a dense 100,000×64 matrix.
func BenchmarkMulDense(b *testing.B) {
	const n, k = 100_000, 64
	g := gen.CSBM(gen.CSBMConfig{Nodes: n, Classes: 5, Features: 1, AvgDegree: 10, Homophily: 0.8, Signal: 1}, 1)
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*k)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	out := make([]float64, n*k)
	b.SetBytes(int64(8 * (len(x) + len(out))))
	for b.Loop() {
		g.Adj.MulDense(x, k, out)
	}
}

// BenchmarkCSBMGenerate measures generating the benchmark graph itself.
func BenchmarkCSBMGenerate(b *testing.B) {
	cfg := gen.CSBMConfig{Nodes: 100_000, Classes: 5, Features: 64, AvgDegree: 10, Homophily: 0.8, Signal: 1.5}
	for b.Loop() {
		gen.CSBM(cfg, 1)
	}
}
