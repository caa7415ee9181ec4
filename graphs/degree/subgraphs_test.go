package degree_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
)

func TestOccurrenceBound(t *testing.T) {
	for _, tc := range []struct {
		k, d       int
		undirected bool
		want       int
	}{
		{0, 5, false, 1}, {0, 5, true, 1},
		{1, 3, false, 4}, {1, 3, true, 4},
		{2, 3, false, 13}, {2, 3, true, 10},
		{3, 3, false, 40}, {3, 3, true, 22},
		{3, 2, true, 7}, // a path: 1 + 2 + 2 + 2
		{3, 1, true, 2}, {3, 1, false, 4},
		{3, 0, false, 1}, {3, 0, true, 1},
		{2, 10, false, 111}, {2, 10, true, 101},
	} {
		got, err := degree.OccurrenceBound(tc.k, tc.d, tc.undirected)
		if err != nil || got != tc.want {
			t.Errorf("OccurrenceBound(%d, %d, %v) = %d, %v; want %d", tc.k, tc.d, tc.undirected, got, err, tc.want)
		}
	}
	for _, tc := range [][2]int{{-1, 3}, {2, -1}, {40, 10}} {
		if _, err := degree.OccurrenceBound(tc[0], tc[1], false); err == nil {
			t.Errorf("OccurrenceBound(%d, %d) succeeded", tc[0], tc[1])
		}
	}
}

// example is one example of a Rooted in input node ids: its rows' nodes
// and depths, and each row's entries as "node:value".
type example struct {
	nodes, depths []int
	rows          [][]string
}

func (e example) equal(o example) bool {
	if !slices.Equal(e.nodes, o.nodes) || !slices.Equal(e.depths, o.depths) || len(e.rows) != len(o.rows) {
		return false
	}
	for i := range e.rows {
		if !slices.Equal(e.rows[i], o.rows[i]) {
			return false
		}
	}
	return true
}

// examplesByRoot reads every example of s back in input ids, checking on
// the way that s's adjacency is block-diagonal over its examples.
func examplesByRoot(t *testing.T, s *degree.Rooted) map[int]example {
	t.Helper()
	out := map[int]example{}
	for e, u := range s.Roots {
		var ex example
		for r := s.Start[e]; r < s.Start[e+1]; r++ {
			if s.Example[r] != e {
				t.Fatalf("row %d of example %d is marked example %d", r, e, s.Example[r])
			}
			ex.nodes, ex.depths = append(ex.nodes, s.Node[r]), append(ex.depths, s.Depth[r])
			var row []string
			for q := s.Adj.Indptr[r]; q < s.Adj.Indptr[r+1]; q++ {
				c := s.Adj.Indices[q]
				if c < s.Start[e] || c >= s.Start[e+1] {
					t.Fatalf("row %d of example %d gathers row %d of another example", r, e, c)
				}
				row = append(row, fmt.Sprintf("%d:%g", s.Node[c], s.Adj.Value(q)))
			}
			slices.Sort(row)
			ex.rows = append(ex.rows, row)
		}
		if ex.nodes[0] != u || ex.depths[0] != 0 {
			t.Fatalf("example %d starts with node %d at depth %d, want its root %d at 0", e, ex.nodes[0], ex.depths[0], u)
		}
		out[u] = ex
	}
	return out
}

// distancesTo returns dist(w → u) for every w (−1 beyond k), by k rounds
// of relaxation over a's rows: independent of the breadth-first search.
func distancesTo(a *graphs.CSR, u, k int) []int {
	d := make([]int, a.Rows)
	for i := range d {
		d[i] = -1
	}
	d[u] = 0
	for round := 1; round <= k; round++ {
		for w := 0; w < a.Rows; w++ {
			if d[w] != round-1 {
				continue
			}
			for q := a.Indptr[w]; q < a.Indptr[w+1]; q++ {
				if j := a.Indices[q]; a.Value(q) != 0 && d[j] < 0 {
					d[j] = round
				}
			}
		}
	}
	return d
}

// capBoth keeps the entries of a, in row order, while their row and
// column have fewer than d kept entries (a directed graph within d both
// ways).
func capBoth(a *graphs.CSR, d int) *graphs.CSR {
	rows, cols := make([]int, a.Rows), make([]int, a.Cols)
	var src, dst []int
	for i := 0; i < a.Rows; i++ {
		for q := a.Indptr[i]; q < a.Indptr[i+1]; q++ {
			if j := a.Indices[q]; rows[i] < d && cols[j] < d {
				rows[i]++
				cols[j]++
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	return graphs.FromCOO(a.Rows, a.Cols, src, dst, nil)
}

// orient keeps each undirected pair of a symmetric a in one direction or
// both (a directed graph with the hubs of a).
func orient(a *graphs.CSR, seed uint64) *graphs.CSR {
	r := rand.New(rand.NewPCG(seed, 5))
	var src, dst []int
	for i := 0; i < a.Rows; i++ {
		for _, j := range a.Indices[a.Indptr[i]:a.Indptr[i+1]] {
			if j <= i {
				continue
			}
			switch r.IntN(3) {
			case 0:
				src, dst = append(src, i), append(dst, j)
			case 1:
				src, dst = append(src, j), append(dst, i)
			default:
				src, dst = append(src, i, j), append(dst, j, i)
			}
		}
	}
	return graphs.FromCOO(a.Rows, a.Cols, src, dst, nil)
}

func undirectedGraph(n int, edges [][2]int) *graphs.CSR {
	var src, dst []int
	for _, e := range edges {
		src, dst = append(src, e[0], e[1]), append(dst, e[1], e[0])
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

// outTree is the complete d-ary tree of depth k with messages flowing away
// from node 0: a child's row gathers its parent.
func outTree(d, k int) *graphs.CSR {
	var src, dst []int
	n, level := 1, []int{0}
	for depth := 0; depth < k; depth++ {
		var next []int
		for _, p := range level {
			for c := 0; c < d; c++ {
				src, dst = append(src, n), append(dst, p)
				next = append(next, n)
				n++
			}
		}
		level = next
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

// regularBall is the radius-k ball of the d-regular tree around node 0.
func regularBall(d, k int) *graphs.CSR {
	var edges [][2]int
	n, level := 1, []int{0}
	for depth := 0; depth < k; depth++ {
		var next []int
		for _, p := range level {
			kids := d - 1
			if depth == 0 {
				kids = d
			}
			for c := 0; c < kids; c++ {
				edges = append(edges, [2]int{p, n})
				next = append(next, n)
				n++
			}
		}
		level = next
	}
	return undirectedGraph(n, edges)
}

type treeCase struct {
	name string
	a    *graphs.CSR
	kind degree.Kind
	d    int
	// attains: the bound is reached on this graph for every k ≤ attains
	attains int
}

func treeCases() []treeCase {
	path := func(n int) *graphs.CSR {
		var e [][2]int
		for i := 1; i < n; i++ {
			e = append(e, [2]int{i - 1, i})
		}
		return undirectedGraph(n, e)
	}
	complete := func(n int) *graphs.CSR {
		var e [][2]int
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				e = append(e, [2]int{i, j})
			}
		}
		return undirectedGraph(n, e)
	}
	star := func(leaves int) *graphs.CSR {
		var e [][2]int
		for l := 1; l <= leaves; l++ {
			e = append(e, [2]int{0, l})
		}
		return undirectedGraph(leaves+1, e)
	}
	const d = 4
	pl := degree.SampleSymmetric(graphstest.PowerLaw(90, 2.1, 5, 7), d, graphstest.Key(3))
	plDir := capBoth(orient(graphstest.PowerLaw(90, 2.1, 6, 8), 9), d)
	return []treeCase{
		{"power-law capped (undirected)", pl, degree.Undirected, d, 0},
		{"power-law capped (directed)", plDir, degree.Out, d, 0},
		{"power-law with self-loops", graphs.AddSelfLoops(degree.SampleSymmetric(graphstest.PowerLaw(60, 2.1, 4, 9), d-1, graphstest.Key(4)), 1), degree.Undirected, d, 0},
		{"star at D", star(d), degree.Undirected, d, 1},
		{"path", path(15), degree.Undirected, 2, 3},
		{"complete at D", complete(d + 1), degree.Undirected, d, 1},
		{"3-regular tree ball", regularBall(3, 3), degree.Undirected, 3, 3},
		{"directed 3-ary out-tree", outTree(3, 3), degree.Out, 3, 3},
		{"directed 2-ary out-tree", outTree(2, 3), degree.Out, 2, 3},
	}
}

// TestRootedSubgraphsNodeRemoval is the occurrence bound's property test:
// on every graph, for K = 1, 2, 3, every node v and two root sets (all
// nodes; every other node), the examples built on G and on G − v (v's
// row and column emptied, v dropped from the roots) differ exactly for
// v's own example (deleted, when v is a root) and the roots u whose
// example on G holds v; their number is at most OccurrenceBound(K, D),
// and the bound is reached on the graphs built to reach it.
func TestRootedSubgraphsNodeRemoval(t *testing.T) {
	for _, tc := range treeCases() {
		a := tc.a
		b := degree.Bound{Mode: degree.Public, D: tc.d, Kind: tc.kind}
		n := a.Rows
		all, half := graphstest.Range(n), []int{}
		for u := 0; u < n; u += 2 {
			half = append(half, u)
		}
		for k := 1; k <= 3; k++ {
			r, err := degree.OccurrenceBound(k, tc.d, tc.kind == degree.Undirected)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0
			for _, roots := range [][]int{all, half} {
				g, err := degree.RootedSubgraphs(a, b, roots, k, 0)
				if err != nil {
					t.Fatalf("%s k=%d: %v", tc.name, k, err)
				}
				if g.Occurrences != r {
					t.Fatalf("%s k=%d: Occurrences %d, want %d", tc.name, k, g.Occurrences, r)
				}
				onG := examplesByRoot(t, g)
				// the examples are the balls, by an independent computation
				for _, u := range roots {
					dist := distancesTo(a, u, k)
					ex := onG[u]
					for i, w := range ex.nodes {
						if dist[w] != ex.depths[i] {
							t.Fatalf("%s k=%d root %d: node %d at depth %d, distance %d", tc.name, k, u, w, ex.depths[i], dist[w])
						}
					}
					size := 0
					for _, dw := range dist {
						if dw >= 0 {
							size++
						}
					}
					if size != len(ex.nodes) {
						t.Fatalf("%s k=%d root %d: %d rows for a ball of %d nodes", tc.name, k, u, len(ex.nodes), size)
					}
				}
				for v := 0; v < n; v++ {
					gv, err := degree.RootedSubgraphs(graphs.RemoveNode(a, v), b, slices.DeleteFunc(slices.Clone(roots), func(u int) bool { return u == v }), k, 0)
					if err != nil {
						t.Fatalf("%s k=%d: G − %d refused though G was accepted: %v", tc.name, k, v, err)
					}
					onGv := examplesByRoot(t, gv)
					changed := 0
					for _, u := range roots {
						exv, present := onGv[u]
						differs := !present || !onG[u].equal(exv)
						holdsV := slices.Contains(onG[u].nodes, v)
						if differs != holdsV {
							t.Fatalf("%s k=%d v=%d root %d: example differs=%v but holds v=%v", tc.name, k, v, u, differs, holdsV)
						}
						if present == (u == v) {
							t.Fatalf("%s k=%d v=%d: root %d present on G − v: %v", tc.name, k, v, u, present)
						}
						if differs {
							changed++
						}
					}
					if changed > r {
						t.Fatalf("%s k=%d: removing %d changes %d examples, above the bound R = %d", tc.name, k, v, changed, r)
					}
					worst = max(worst, changed)
				}
			}
			if k <= tc.attains && worst != r {
				t.Errorf("%s k=%d: the most examples one removal changes is %d, want the bound %d reached", tc.name, k, worst, r)
			}
			t.Logf("%s k=%d: worst %d of R = %d", tc.name, k, worst, r)
		}
	}
}

// TestRootedSubgraphsRows: the block-diagonal adjacency holds, for each
// row above depth K, exactly the input row's non-zero entries with their
// values, and nothing at depth K.
func TestRootedSubgraphsRows(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var src, dst []int
	var val []float64
	for i := 0; i < 40; i++ {
		for j := 0; j < 40; j++ {
			if r.Float64() < 0.06 {
				v := 0.5 + r.Float64()
				if r.IntN(5) == 0 {
					v = 0 // a stored zero: not an edge
				}
				src, dst, val = append(src, i), append(dst, j), append(val, v)
			}
		}
	}
	a := graphs.FromCOO(40, 40, src, dst, val)
	g, err := degree.RootedSubgraphs(a, degree.Bound{Mode: degree.None}, []int{3, 0, 17, 39}, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if g.Occurrences != 0 {
		t.Errorf("no bound: Occurrences %d, want 0", g.Occurrences)
	}
	if err := g.Adj.Validate(); err != nil {
		t.Fatal(err)
	}
	graphstest.CheckCanonical(t, "rooted adjacency", g.Adj)
	for row := range g.Node {
		var want []string
		if g.Depth[row] < 2 {
			w := g.Node[row]
			for q := a.Indptr[w]; q < a.Indptr[w+1]; q++ {
				if a.Data[q] != 0 {
					want = append(want, fmt.Sprintf("%d:%g", a.Indices[q], a.Data[q]))
				}
			}
		}
		var got []string
		for q := g.Adj.Indptr[row]; q < g.Adj.Indptr[row+1]; q++ {
			got = append(got, fmt.Sprintf("%d:%g", g.Node[g.Adj.Indices[q]], g.Adj.Data[q]))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("row %d (node %d, depth %d): entries %v, want %v", row, g.Node[row], g.Depth[row], got, want)
		}
	}
	if len(g.Start) != 5 || g.Start[4] != len(g.Node) {
		t.Errorf("Start = %v for %d rows", g.Start, len(g.Node))
	}
}

// TestRootedSubgraphsRefusals: a public bound refuses inputs outside it
// (rows above D, columns above D, an asymmetric input for an undirected
// bound) without naming anything about the input, the sampling mode is
// not offered, and the memory check refuses before allocating.
func TestRootedSubgraphsRefusals(t *testing.T) {
	star := undirectedGraph(8, [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}})
	// node 0 gathers nobody but every other node gathers it: rows ≤ 1,
	// column 0 holds 7
	fan := graphs.FromCOO(8, 8, []int{1, 2, 3, 4, 5, 6, 7}, []int{0, 0, 0, 0, 0, 0, 0}, nil)
	oneWay := graphs.FromCOO(3, 3, []int{0}, []int{1}, nil)
	for _, tc := range []struct {
		name  string
		a     *graphs.CSR
		b     degree.Bound
		bound bool // a *BoundError
		want  string
	}{
		{"star above D", star, degree.Bound{Mode: degree.Public, D: 3, Kind: degree.Undirected}, true, "at most 3 neighbours per node"},
		{"out-degree above D", fan, degree.Bound{Mode: degree.Public, D: 3, Kind: degree.Out}, true, "at most 3 out-neighbours"},
		{"in-degree above D", fan.Transpose(), degree.Bound{Mode: degree.Public, D: 3, Kind: degree.Out}, true, "at most 3 in-neighbours"},
		{"asymmetric undirected", oneWay, degree.Bound{Mode: degree.Public, D: 3, Kind: degree.Undirected}, false, "symmetric"},
		{"sample", star, degree.Bound{Mode: degree.Sample, D: 3, Kind: degree.Undirected}, false, "not offered"},
	} {
		_, err := degree.RootedSubgraphs(tc.a, tc.b, []int{0, 1}, 2, 0)
		var be *degree.BoundError
		if err == nil || errors.As(err, &be) != tc.bound || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a refusal (bound error %v) saying %q", tc.name, err, tc.bound, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "7") {
			t.Errorf("%s: the refusal %q names the input's degree", tc.name, err)
		}
	}
	// within the bound: accepted
	if _, err := degree.RootedSubgraphs(star, degree.Bound{Mode: degree.Public, D: 7, Kind: degree.Undirected}, []int{0, 1}, 2, 0); err != nil {
		t.Errorf("star within D = 7: %v", err)
	}
	for _, tc := range []struct {
		roots []int
		k     int
		want  string
	}{{[]int{0, 0}, 1, "twice"}, {[]int{8}, 1, "outside"}, {[]int{-1}, 1, "outside"}, {[]int{0}, -1, "hops"}} {
		if _, err := degree.RootedSubgraphs(star, degree.Bound{Mode: degree.None}, tc.roots, tc.k, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("roots %v k=%d: err = %v, want %q", tc.roots, tc.k, err, tc.want)
		}
	}
	if _, err := degree.RootedSubgraphs(graphs.FromCOO(2, 3, nil, nil, nil), degree.Bound{Mode: degree.None}, nil, 1, 0); err == nil {
		t.Error("a rectangular adjacency was accepted")
	}
	// memory: the public worst case (1000 roots · 111 rows · 8·(4+100)
	// bytes ≈ 92 MB) is refused under a 10 MB limit before anything is
	// built, on an input that is tiny
	t.Setenv(graphs.MemoryLimitEnv, "10MB")
	roots := graphstest.Range(1000)
	big := graphs.FromCOO(1000, 1000, nil, nil, nil)
	_, err := degree.RootedSubgraphs(big, degree.Bound{Mode: degree.Public, D: 10, Kind: degree.Undirected}, roots, 2, 100)
	if err == nil || !strings.Contains(err.Error(), "limit") || !strings.Contains(err.Error(), strconv.Itoa(10)) {
		t.Errorf("public worst case above the limit: err = %v", err)
	}
	if _, err := degree.RootedSubgraphs(big, degree.Bound{Mode: degree.Public, D: 10, Kind: degree.Undirected}, roots, 2, 0); err != nil {
		t.Errorf("the structure alone (about 3.6 MB) under 10 MB: %v", err)
	}
	if _, err := degree.RootedSubgraphs(big, degree.Bound{Mode: degree.None}, roots, 2, 100); err != nil {
		t.Errorf("no bound: exact size of an edgeless graph under 10 MB: %v", err)
	}
}
