package degree_test

import (
	"path/filepath"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/degree"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
)

// BenchmarkRootedSubgraphs builds cora's K-hop rooted subgraphs for 140
// roots (its per-class:20 training set size) and for all 2708 nodes. The
// public bound is cora's maximum degree, read off the data: fine for a
// timing, never for a private run.
//
//	go test ./graphs/degree -run '^$' -bench RootedSubgraphs -benchmem
func BenchmarkRootedSubgraphs(b *testing.B) {
	g, err := graphio.LoadNPZ(filepath.Join(testutil.DataDir(b), "cora.npz"))
	if err != nil {
		b.Fatal(err)
	}
	a := g.Adj
	_, dmax := degree.Excess(a, 0)
	all := make([]int, a.Rows)
	for i := range all {
		all[i] = i
	}
	for _, tc := range []struct {
		name  string
		k     int
		roots []int
		mode  degree.Mode
	}{
		{"K=1/140", 1, all[:140], degree.Public},
		{"K=2/140", 2, all[:140], degree.Public},
		{"K=2/all", 2, all, degree.Public},
		{"K=3/140/none", 3, all[:140], degree.None}, // the public worst case D³ is above the memory limit
	} {
		b.Run(tc.name, func(b *testing.B) {
			bound := degree.Bound{Mode: tc.mode, D: dmax, Kind: degree.Undirected}
			var rows int
			for b.Loop() {
				s, err := degree.RootedSubgraphs(a, bound, tc.roots, tc.k, 0)
				if err != nil {
					b.Fatal(err)
				}
				rows = len(s.Node)
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
