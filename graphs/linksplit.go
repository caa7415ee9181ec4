package graphs

import "fmt"

// HoldOutEdges is a link-prediction split: a fraction frac of g's
// undirected edges (drawn with seed) is held out for testing. The result
// shares g's nodes, features, labels and node split; its Adj lacks the
// held-out edges (in both directions), EdgeTest lists them (entry (i, j),
// i < j, value 1) and EdgeTrain lists the edges kept (the same way). frac
// must leave at least one edge on each side.
func HoldOutEdges(g *Graph, frac float64, seed uint64) (*Graph, error) {
	if !(frac > 0 && frac < 1) {
		return nil, fmt.Errorf("link split of %s: the test fraction must be in (0, 1), got %g", graphName(g), frac)
	}
	s := Symmetrize(RemoveSelfLoops(g.Adj))
	var pairs [][2]int
	for i := 0; i < s.Rows; i++ {
		for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
			if j := s.Indices[k]; j > i {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	nTest := int(frac*float64(len(pairs)) + 0.5)
	if nTest < 1 || nTest >= len(pairs) {
		return nil, fmt.Errorf("link split of %s: %g of %d edges leaves an empty side", graphName(g), frac, len(pairs))
	}
	r := newSeededRand(seed, streamSplit)
	r.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	list := func(ps [][2]int) *CSR {
		src, dst := make([]int, len(ps)), make([]int, len(ps))
		for k, p := range ps {
			src[k], dst[k] = p[0], p[1]
		}
		return FromCOO(g.N, g.N, src, dst, nil)
	}
	test, train := list(pairs[:nTest]), list(pairs[nTest:])
	out := *g
	out.Adj = Symmetrize(train)
	out.EdgeTrain, out.EdgeTest = train, test
	return &out, nil
}
