package gen

import "fmt"
import "github.com/dpgnn/dpgnn/graphs"

// Adversarial graphs for node-level audits (`dpgnn audit ... --dataset
// NAME --remove-node 0`). Each has 8 random features and 2 balanced labels
// so that every method can load it; node 0 is the node to remove.

// Spread is the counterexample of the node-level audit of GAP/ProGAP's
// degree sampling: node 0 is linked to 200 nodes u, and each u is also
// linked to the same 100 nodes w, so u has degree 101 and w and node 0
// degree 200. With a degree bound D = 100 sampling keeps 100 of each u's
// 101 edges; removing node 0 lets every u that had kept it enter one more
// w row, about 198 extra entries where the papers' √D sensitivity allows
// 100. Under a public bound (D ≥ 200) the guarantee holds.
//
// SpreadGraph(nu, nw, seed) has nu nodes u and nw nodes w (the dataset
// spread-1000 has 1,000 u's and 100 w's: each w row then gains about 10
// entries).
func Spread(seed uint64) *graphs.Graph { return SpreadGraph(200, 100, seed) }

// SpreadGraph is Spread with nu nodes u, each linked to node 0 and to the
// same nw nodes w.
func SpreadGraph(nu, nw int, seed uint64) *graphs.Graph {
	n := 1 + nu + nw
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	for u := 1; u <= nu; u++ {
		add(0, u)
		for w := 0; w < nw; w++ {
			add(u, 1+nu+w)
		}
	}
	return adversarialGraph(fmt.Sprintf("spread-%d-%d", nu, nw), n, src, dst, seed)
}

// Star is the tight case of a public degree bound: node 0 is linked to 100
// leaves, and the leaves form a ring (degree 3). With --max-degree 100 and
// every embedding the same unit vector, removing node 0 changes exactly 100
// aggregates by that vector: NAP's sensitivity √100 is attained, so an audit
// should come close to the claimed ε without exceeding it.
func Star(seed uint64) *graphs.Graph {
	const leaves = 100
	n := 1 + leaves
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	for l := 1; l <= leaves; l++ {
		add(0, l)
		add(l, 1+l%leaves)
	}
	return adversarialGraph("star", n, src, dst, seed)
}

// SmallStar is a hub (node 0) with leaves 1…leaves and no other edge: the
// smallest graph on which a removed leaf is named in the hub's DP-APPR row
// (dataset star-9, 9 leaves; DPAR's audit removes a leaf there).
func SmallStar(leaves int, seed uint64) *graphs.Graph {
	var src, dst []int
	for l := 1; l <= leaves; l++ {
		src, dst = append(src, 0, l), append(dst, l, 0)
	}
	return adversarialGraph(fmt.Sprintf("star-%d", leaves), 1+leaves, src, dst, seed)
}

// DoubleStar is two hubs, nodes 0 and 1, linked to each other and to the
// same 50 leaves: removing hub 0 changes every leaf's degree and every
// path between the leaves through it (dataset double-star).
func DoubleStar(seed uint64) *graphs.Graph {
	const leaves = 50
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	add(0, 1)
	for l := 2; l < 2+leaves; l++ {
		add(0, l)
		add(1, l)
	}
	return adversarialGraph("double-star", 2+leaves, src, dst, seed)
}

// Path is a path of 41 nodes with node 0 in its middle: removing node 0
// cuts it in two (dataset path).
func Path(seed uint64) *graphs.Graph {
	const n = 41
	order := make([]int, 0, n)
	for i := 1; i <= n/2; i++ {
		order = append(order, i)
	}
	order = append(order, 0)
	for i := n/2 + 1; i < n; i++ {
		order = append(order, i)
	}
	var src, dst []int
	for k := 1; k < n; k++ {
		src, dst = append(src, order[k-1], order[k]), append(dst, order[k], order[k-1])
	}
	return adversarialGraph("path", n, src, dst, seed)
}

// PowerLaw is a Barabási–Albert graph of 300 nodes, each new node linked to
// 2 existing ones with probability proportional to their degree (seeded),
// its ids arranged so that node 0 is the largest hub (dataset powerlaw).
func PowerLaw(seed uint64) *graphs.Graph {
	const n, m = 300, 2
	r := newSeededRand(seed, streamEdges)
	var src, dst, ends []int
	add := func(i, j int) {
		src, dst = append(src, i, j), append(dst, j, i)
		ends = append(ends, i, j)
	}
	add(0, 1)
	add(0, 2)
	add(1, 2)
	for v := 3; v < n; v++ {
		seen := map[int]bool{}
		for len(seen) < m {
			u := ends[r.IntN(len(ends))]
			if !seen[u] {
				seen[u] = true
			}
		}
		for u := range n {
			if seen[u] {
				add(v, u)
			}
		}
	}
	// node 0 is the largest hub: swap its id with the node of largest degree
	deg := make([]int, n)
	for _, i := range src {
		deg[i]++
	}
	h := 0
	for i := range deg {
		if deg[i] > deg[h] {
			h = i
		}
	}
	swap := func(i int) int {
		switch i {
		case 0:
			return h
		case h:
			return 0
		}
		return i
	}
	for k := range src {
		src[k], dst[k] = swap(src[k]), swap(dst[k])
	}
	return adversarialGraph("powerlaw", n, src, dst, seed)
}

func adversarialGraph(name string, n int, src, dst []int, seed uint64) *graphs.Graph {
	r := newSeededRand(seed, streamFeatures)
	const f = 8
	x := make([]float64, n*f)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 2
	}
	return &graphs.Graph{Name: name, N: n, NumClasses: 2, Adj: graphs.FromCOO(n, n, src, dst, nil), Labels: labels,
		X: &graphs.Features{N: n, F: f, Dense: x}}
}
