package attacks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// LinkTeller's defaults (its code: --influence 0.0001). The node sample
// follows the CARIBOU audit: 500 inference nodes.
const (
	DefaultInfluence = 1e-4
	DefaultNodes     = 500
)

// LinkTellerConfig configures LinkTeller.
type LinkTellerConfig struct {
	// Nodes is |V_I|, the size of the node sample drawn from Candidates
	// (all of them when there are fewer, or when Nodes is 0).
	Nodes int
	// Candidates are the nodes V_I is drawn from (the run's inference
	// nodes).
	Candidates []int
	// Influence is Δ: a query with node v's features scaled to (1+Δ)·X_v.
	Influence float64
	// Seed draws V_I and the non-edge pairs.
	Seed uint64
	// Recorder, if set, is told the number of queries (Plan) and sees one
	// epoch per query (progress).
	Recorder trainers.Recorder
}

// LinkTellerResult is the outcome of LinkTeller.
type LinkTellerResult struct {
	// AUC is the ROC AUC of the influence scores of the edges against the
	// non-edges (0.5: chance).
	AUC float64
	// Nodes is |V_I|, Edges the edges among V_I and NonEdges the sampled
	// non-edges (as many as edges when there are enough).
	Nodes, Edges, NonEdges int
	// Queries is the number of queries made: one with X and one per
	// perturbed node.
	Queries int
	// EdgeScores and NonEdgeScores are the influence scores.
	EdgeScores, NonEdgeScores []float64
}

// LinkTeller runs the LinkTeller attack (Wu et al. 2022, Alg. 1 with the
// choices of its code) against query, the trained model's inference over
// g's private edges:
//
//  1. V_I: Nodes nodes drawn uniformly from Candidates, in draw order;
//  2. the pairs: every edge among V_I and as many non-edges among V_I drawn
//     uniformly without replacement (balanced);
//  3. P = query(X), and for each node v that is the later-drawn node of a
//     pair, P′ = query(X′) with X′_v = (1+Δ)·X_v and every other row as in
//     X: the influence of v on u is I_v[u] = (P′_u − P_u)/Δ;
//  4. the score of the pair {u, v} (u drawn before v) is ‖I_v[u]‖₂ — the
//     code's choice, not symmetrised — and AUC compares edges with
//     non-edges.
//
// g's adjacency is read only to label the pairs (the ground truth). A
// method whose query runs a private mechanism makes a new release with
// every query (see methods.QueryCost).
func LinkTeller(g *graphs.Graph, query methods.QueryFunc, cfg LinkTellerConfig) (*LinkTellerResult, error) {
	if query == nil {
		return nil, fmt.Errorf("linkteller: the method offers no queries")
	}
	if !(cfg.Influence > 0) || math.IsInf(cfg.Influence, 0) {
		return nil, fmt.Errorf("--influence-delta must be positive and finite, got %v", cfg.Influence)
	}
	if cfg.Nodes < 0 {
		return nil, fmt.Errorf("--nodes must be non-negative, got %d", cfg.Nodes)
	}
	rec := cfg.Recorder
	if rec == nil {
		rec = trainers.Nop{}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x4c696e6b54656c6c))
	nodes := sample(rng, cfg.Candidates, cfg.Nodes)
	if len(nodes) < 2 {
		return nil, fmt.Errorf("linkteller: %d candidate node(s): need at least 2", len(nodes))
	}
	edges, nonEdges := pairs(rng, g.Adj, nodes)
	if len(edges) == 0 {
		return nil, fmt.Errorf("linkteller: no edge among the %d sampled nodes: raise --nodes", len(nodes))
	}

	// The perturbed nodes, in draw order, and the pairs each one scores.
	byV := map[int][][2]int{}
	var perturbed []int
	for _, p := range append(slices.Clone(edges), nonEdges...) {
		if byV[p[1]] == nil {
			perturbed = append(perturbed, p[1])
		}
		byV[p[1]] = append(byV[p[1]], p)
	}
	slices.Sort(perturbed)
	rec.Plan(1 + len(perturbed))

	x, scale, restore := perturbable(g.X)
	base, err := query(x)
	if err != nil {
		return nil, fmt.Errorf("linkteller: query with X: %w", err)
	}
	rec.Epoch(trainers.EpochStats{})
	c := g.NumClasses
	if len(base) != g.N*c {
		return nil, fmt.Errorf("linkteller: a query returned %d posteriors, want %d×%d", len(base), g.N, c)
	}
	score := map[[2]int]float64{}
	for _, i := range perturbed {
		v := nodes[i]
		scale(v, 1+cfg.Influence)
		p, err := query(x)
		restore(v)
		if err != nil {
			return nil, fmt.Errorf("linkteller: query with node %d's features scaled: %w", v, err)
		}
		rec.Epoch(trainers.EpochStats{})
		for _, pr := range byV[i] {
			u := nodes[pr[0]]
			var s float64
			for k := 0; k < c; k++ {
				s = math.Hypot(s, (p[u*c+k]-base[u*c+k])/cfg.Influence)
			}
			score[pr] = s
		}
	}
	res := &LinkTellerResult{Nodes: len(nodes), Edges: len(edges), NonEdges: len(nonEdges), Queries: 1 + len(perturbed)}
	for _, p := range edges {
		res.EdgeScores = append(res.EdgeScores, score[p])
	}
	for _, p := range nonEdges {
		res.NonEdgeScores = append(res.NonEdgeScores, score[p])
	}
	res.AUC = trainers.AUC(res.EdgeScores, res.NonEdgeScores)
	return res, nil
}

// sample draws k of the ids uniformly without replacement, in draw order
// (all of them, shuffled, when k is 0 or at least their number).
func sample(rng *rand.Rand, ids []int, k int) []int {
	s := slices.Clone(ids)
	if k <= 0 || k > len(s) {
		k = len(s)
	}
	for i := 0; i < k; i++ {
		j := i + rng.IntN(len(s)-i)
		s[i], s[j] = s[j], s[i]
	}
	return s[:k]
}

// pairs returns the edges among nodes and as many non-edges drawn uniformly
// without replacement, as index pairs (i, j) into nodes with i < j, each
// list in a fixed order. A pair is an edge when either direction is an
// entry of adj. With fewer non-edges than edges, every non-edge is
// returned.
func pairs(rng *rand.Rand, adj *graphs.CSR, nodes []int) (edges, nonEdges [][2]int) {
	pos := make(map[int]int, len(nodes))
	for i, v := range nodes {
		pos[v] = i
	}
	isEdge := map[[2]int]bool{}
	for i, v := range nodes {
		cols, _ := adj.Row(v)
		for _, w := range cols {
			if j, ok := pos[w]; ok && j != i {
				isEdge[[2]int{min(i, j), max(i, j)}] = true
			}
		}
	}
	for p := range isEdge {
		edges = append(edges, p)
	}
	slices.SortFunc(edges, cmpPair)
	n := len(nodes)
	possible := n * (n - 1) / 2
	want := len(edges)
	if possible-len(edges) <= 2*want {
		// Few non-edges: take all of them in a random order.
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if !isEdge[[2]int{i, j}] {
					nonEdges = append(nonEdges, [2]int{i, j})
				}
			}
		}
		rng.Shuffle(len(nonEdges), func(a, b int) { nonEdges[a], nonEdges[b] = nonEdges[b], nonEdges[a] })
		if len(nonEdges) > want {
			nonEdges = nonEdges[:want]
		}
		slices.SortFunc(nonEdges, cmpPair)
		return edges, nonEdges
	}
	seen := map[[2]int]bool{}
	for len(nonEdges) < want {
		i, j := rng.IntN(n), rng.IntN(n)
		if i == j {
			continue
		}
		p := [2]int{min(i, j), max(i, j)}
		if isEdge[p] || seen[p] {
			continue
		}
		seen[p] = true
		nonEdges = append(nonEdges, p)
	}
	slices.SortFunc(nonEdges, cmpPair)
	return edges, nonEdges
}

func cmpPair(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// perturbable returns a working copy of the features, a function that
// scales row v of the copy by f, and one that restores row v.
func perturbable(x *graphs.Features) (*graphs.Features, func(v int, f float64), func(v int)) {
	if x.Sparse != nil {
		s := x.Sparse.Clone()
		if s.Data == nil {
			s.Data = make([]float64, s.NNZ())
			for k := range s.Data {
				s.Data[k] = 1
			}
		}
		orig := slices.Clone(s.Data)
		w := &graphs.Features{N: x.N, F: x.F, Sparse: s}
		return w, func(v int, f float64) {
				for k := s.Indptr[v]; k < s.Indptr[v+1]; k++ {
					s.Data[k] = orig[k] * f
				}
			}, func(v int) {
				copy(s.Data[s.Indptr[v]:s.Indptr[v+1]], orig[s.Indptr[v]:s.Indptr[v+1]])
			}
	}
	d := slices.Clone(x.Dense)
	w := &graphs.Features{N: x.N, F: x.F, Dense: d}
	return w, func(v int, f float64) {
			for k := v * x.F; k < (v+1)*x.F; k++ {
				d[k] = x.Dense[k] * f
			}
		}, func(v int) {
			copy(d[v*x.F:(v+1)*x.F], x.Dense[v*x.F:(v+1)*x.F])
		}
}
