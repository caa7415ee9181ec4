// Package methodtest holds the set-up the method packages' tests share: a
// method configured from command-line flags, the small graph they train
// on, a split applied to a graph, the graph file of the scale benchmarks
// and the steady-state loop of their epoch benchmarks.
package methodtest

import (
	"os"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
)

// Configure sets m's Config from flags as `dpgnn train METHOD` takes them and
// validates it, failing t otherwise.
func Configure(t testing.TB, m methods.Method, args ...string) {
	t.Helper()
	if err := methods.ParseConfigFlags(m.Config(), args); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Graph returns the method tests' graph: a 300-node, 3-class csbm graph
// (seed 5) with the given split (seed 1).
func Graph(t testing.TB, split string) *graphs.Graph {
	t.Helper()
	return Split(t, gen.CSBM(gen.CSBMConfig{Nodes: 300, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.85, Signal: 1}, 5), split)
}

// Split returns g under the split spec (seed 1), failing t on a bad spec.
func Split(t testing.TB, g *graphs.Graph, split string) *graphs.Graph {
	t.Helper()
	spec, err := graphs.ParseSplit(split)
	if err != nil {
		t.Fatal(err)
	}
	if g, err = graphs.ApplySplit(g, spec, 1); err != nil {
		t.Fatal(err)
	}
	return g
}

// BenchGraphEnv names the npz graph file of the scale benchmarks (e.g. a
// 10⁵- or 10⁶-node graph from `dpgnn data generate`: docs/performance.md's
// scale section).
const BenchGraphEnv = "DPGNN_BENCH_GRAPH"

// BenchGraph loads the graph $DPGNN_BENCH_GRAPH names, and skips b
// without one.
func BenchGraph(b *testing.B) *graphs.Graph {
	b.Helper()
	path := os.Getenv(BenchGraphEnv)
	if path == "" {
		b.Skip(BenchGraphEnv + " names no graph file")
	}
	g, err := graphio.LoadNPZ(path)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// Steady times b.N calls of epoch after one untimed call: the first epoch
// allocates the machines' buffers and the optimiser's moments, so
// -benchmem then shows the steady state.
func Steady(b *testing.B, epoch func()) {
	b.Helper()
	epoch()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		epoch()
	}
}
