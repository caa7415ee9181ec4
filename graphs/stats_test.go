package graphs

import (
	"math"
	"testing"
)

func TestComputeStats(t *testing.T) {
	sym := func(n int, src, dst []int) *CSR { return Symmetrize(FromCOO(n, n, src, dst, nil)) }
	cases := []struct {
		name string
		g    *Graph
		want Stats
	}{
		{
			// Path 0-1-2-3, labels 0 0 1 1: of 6 entries, 4 join equal labels.
			name: "path",
			g:    &Graph{N: 4, Adj: sym(4, []int{0, 1, 2}, []int{1, 2, 3}), Labels: []int{0, 0, 1, 1}, NumClasses: 2, X: &Features{N: 4, F: 3, Dense: make([]float64, 12)}},
			want: Stats{Nodes: 4, UndirectedEdges: 3, DirectedEntries: 6, Features: 3, Classes: 2, MinDegree: 1, MaxDegree: 2, MeanDegree: 1.5, Homophily: 4.0 / 6},
		},
		{
			// Triangle 0-1-2 with a self-loop on 0, isolated node 3 with a
			// self-loop, isolated node 4; node 2 unlabelled.
			name: "loops and isolated",
			g: &Graph{N: 5, Adj: sym(5, []int{0, 1, 2, 0, 3}, []int{1, 2, 0, 0, 3}),
				Labels: []int{1, 1, -1, 0, 0}, NumClasses: 2},
			want: Stats{Nodes: 5, UndirectedEdges: 3, DirectedEntries: 8, Classes: 2, MinDegree: 0, MaxDegree: 2,
				MeanDegree: 6.0 / 5, Isolated: 2, SelfLoops: 2, Homophily: 1},
		},
		{
			// Directed: 0→1, 1→0, 1→2, 3→2; the pair {0,1} counts once.
			name: "directed",
			g: &Graph{N: 4, Directed: true, Adj: FromCOO(4, 4, []int{0, 1, 1, 3}, []int{1, 0, 2, 2}, nil),
				Labels: []int{0, 1, 1, 1}, NumClasses: 2},
			want: Stats{Nodes: 4, UndirectedEdges: 3, DirectedEntries: 4, Classes: 2, MinDegree: 1, MaxDegree: 2,
				MeanDegree: 1.5, Homophily: 0.5},
		},
		{
			name: "no labels, no edges",
			g:    &Graph{N: 3, Adj: &CSR{Rows: 3, Cols: 3, Indptr: make([]int, 4)}},
			want: Stats{Nodes: 3, Isolated: 3},
		},
		{
			name: "star, weighted",
			g: &Graph{N: 5, Adj: Symmetrize(FromCOO(5, 5, []int{0, 0, 0, 0}, []int{1, 2, 3, 4}, []float64{2, 2, 2, 2})),
				Labels: []int{0, 0, 0, 1, 1}, NumClasses: 2},
			want: Stats{Nodes: 5, UndirectedEdges: 4, DirectedEntries: 8, Classes: 2, MinDegree: 1, MaxDegree: 4,
				MeanDegree: 1.6, Homophily: 0.5},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ComputeStats(tc.g)
			h, wh := got.Homophily, tc.want.Homophily
			m, wm := got.MeanDegree, tc.want.MeanDegree
			got.Homophily, tc.want.Homophily, got.MeanDegree, tc.want.MeanDegree = 0, 0, 0, 0
			if got != tc.want || math.Abs(h-wh) > 1e-15 || math.Abs(m-wm) > 1e-15 {
				got.Homophily, got.MeanDegree = h, m
				tc.want.Homophily, tc.want.MeanDegree = wh, wm
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
