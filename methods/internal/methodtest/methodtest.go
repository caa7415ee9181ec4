// Package methodtest holds the set-up the method packages' tests share: a
// method configured from command-line flags, the small graph they train
// on, and the steady-state loop of their epoch benchmarks.
package methodtest

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
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
	g := graphs.CSBM(graphs.CSBMConfig{Nodes: 300, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.85, Signal: 1}, 5)
	spec, err := graphs.ParseSplit(split)
	if err != nil {
		t.Fatal(err)
	}
	if g, err = graphs.ApplySplit(g, spec, 1); err != nil {
		t.Fatal(err)
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
