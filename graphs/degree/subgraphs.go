package degree

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
)

// Rooted is the disjoint union of the K-hop rooted subgraphs of a set of
// roots (RootedSubgraphs): one block of rows per example, in the order of
// Roots, stacked into one block-diagonal adjacency. Rows of example e are
// Start[e] … Start[e+1]−1 and its root is row Start[e].
type Rooted struct {
	// Adj is the block-diagonal adjacency (Rows×Rows, Rows = len(Node)):
	// row r lists the rows it gathers, as the input adjacency's row of
	// Node[r] does, in local row ids (sorted); the input's values are
	// kept (nil Data when it had none). Rows at depth K are empty.
	Adj *graphs.CSR
	// Node[r] is the input node id of row r.
	Node []int
	// Example[r] is the example (index into Roots) of row r: the rows'
	// sample ids for DP-SGD (nn.RowGroups.Of).
	Example []int
	// Depth[r] is the message distance from Node[r] to its root: the
	// fewest steps j → i (A[i,j] ≠ 0) leading from Node[r] to the root.
	Depth []int
	// Roots[e] is example e's root node; Start has len(Roots)+1 entries.
	Roots, Start []int
	// K is the number of hops.
	K int
	// Occurrences is R, the most examples one node's removal changes
	// (OccurrenceBound of K and the public bound; see RootedSubgraphs);
	// 0 when the bound was None (nothing bounds it).
	Occurrences int
}

// OccurrenceBound returns R(K, D): the most nodes u with a message path of
// at most k steps from a given node v to u (v itself included) in a graph
// whose nodes each enter at most d aggregates (d out-neighbours in the
// message direction; for a symmetric adjacency, d neighbours). Directed:
// Σ_{i=0}^{k} d^i. Undirected (symmetric): 1 + d·Σ_{i=0}^{k−1} (d−1)^i,
// the Moore bound (every node past v spends one of its d edges on the
// node it was reached from). RootedSubgraphs proves that this bounds the
// examples one node's removal changes; both bounds are attained (a
// complete d-ary out-tree of depth k; the radius-k ball of the d-regular
// tree). It fails for negative arguments and when R passes 2³¹.
func OccurrenceBound(k, d int, undirected bool) (int, error) {
	if k < 0 || d < 0 {
		return 0, fmt.Errorf("degree: occurrence bound of %d hops at degree %d: want both ≥ 0", k, d)
	}
	r := ballBound(k, d, undirected)
	if r > math.MaxInt32 {
		return 0, fmt.Errorf("degree: occurrence bound of %d hops at degree %d is %.3g, beyond 2³¹", k, d, r)
	}
	return int(r), nil
}

// ballBound is R(k, d) in float64 (no overflow): the most nodes within k
// message steps of one node, in either direction, when every node has at
// most d neighbours in that direction.
func ballBound(k, d int, undirected bool) float64 {
	sum, layer := 1.0, 1.0
	for i := 1; i <= k; i++ {
		switch {
		case !undirected:
			layer *= float64(d)
		case i == 1:
			layer = float64(d)
		default:
			layer *= float64(d - 1)
		}
		sum += layer
	}
	return sum
}

// RootedSubgraphs builds, for every root u (distinct node ids of the
// square adjacency a), the K-hop rooted subgraph of u as one example, and
// stacks them block-diagonally (Rooted). Row i of a lists the nodes i
// gathers: messages go j → i when a[i,j] ≠ 0 (Aggregate's convention in
// layers); stored zeros are not edges. width is the number of float64 the
// caller will store per row (its feature width; 0 for the structure
// alone), counted in the memory check.
//
// # The example of a root
//
// dist(w → u) is the fewest message steps from w to u. The example of u,
// E(u), has one row per node of the ball B_K(u) = {w : dist(w → u) ≤ K},
// listed breadth-first from u (u first, then depth by depth, each row's
// new nodes in a's order); each row w with dist(w → u) < K holds a's
// non-zero row w (all of whose nodes are in the ball), rows at depth K are
// empty. Each node of the ball is one row (not one row per path, as in a
// computation tree: the root's neighbours of an undirected graph would
// come back once per neighbour at depth 2), which is the K-hop
// neighbourhood Daigavane et al. (2021) train on, with fewer rows than
// the tree, and so fewer terms in the per-example Gram norms, for the same
// output and the same occurrence set (below).
//
// Exactness. For any K-layer network whose layer computes row i from its
// own row and the rows it gathers (layers.Aggregate in any mode, SAGEConv,
// a mean or sum over a row's entries), u's row of layer K is the same on
// E(u) as on a: by induction on l, a row at depth d has its full-graph
// value at every layer l ≤ K − d, since for d < K its entries are a's and
// lead to depth ≤ d + 1 (l − 1 ≤ K − (d + 1)).
//
// Locality. E(u) is a function of the non-zero rows of a at the nodes of
// B_{K−1}(u): the breadth-first listing reads exactly those rows.
//
// # Occurrence bound (node level, proven; property-tested)
//
// Neighbouring inputs are the raw graph G and G − v: node v removed with
// all its edges, features and label (a′ is a with v's row and column
// emptied, ids kept), and the roots of G − v are the roots of G other
// than v. Then, for every root u ≠ v,
//
//	E(u) on G − v = E(u) on G  ⟺  dist_G(v → u) > K,
//
// as lists of (node id, depth) and entries, and so also with the features
// and labels the caller gathers for its rows. (⇐) Every node on a path
// of at most K steps into u is itself in B_K(u), so no such path passes
// through v: a′ keeps every one of them, distances up to K are those of
// a, the rows of B_{K−1}(u) lose no entry (v is in none), and by locality
// E(u) is unchanged; the features and labels read are those of nodes
// other than v. (⇒) v is a row of E(u) on G and of no example on G − v.
// So the examples that differ between G and G − v are: v's own, deleted,
// if v is a root; and the examples of the roots u ≠ v with
// dist(v → u) ≤ K, modified. Their number is at most the number of nodes
// within K message steps from v (v included), and if every node enters
// at most D aggregates (at most D rows of a hold it: its out-degree in
// the message direction), that is at most OccurrenceBound(K, D): the
// nodes i steps from v are at most D times those i − 1 steps from it,
// and for a symmetric a every node past v has one edge back towards v,
// hence at most D − 1 onward. The bound is attained (the tests build
// both extremes).
//
// What degree is needed. The occurrence bound needs the out-degree in the
// message direction: how many rows of a hold v (a's column counts). The
// in-degree (a's row counts) bounds only an example's size: at most
// OccurrenceBound(K, D) rows and D entries per row above depth K. A
// public bound here covers both: b.D bounds every row and every column of
// a (one D for the in- and out-degrees of a directed graph; the degree of
// a symmetric one), and with b.Kind == Undirected a must be symmetric (its
// non-zero pattern; values may differ), which gives the Moore bound.
// DP-SGD over these examples clips each example's gradient to C: v's
// deleted example moves the clipped sum by at most C and each modified
// one by at most 2C, so Occurrences R with Change 2 bounds the step
// (dp.Occurrences{R, 2, Poisson{q, Gaussian{z}}}, noise std z·R·2·C;
// R·C·2 over-covers the deleted one).
//
// Modes. b.Mode Public (proven): the input must lie within D as above,
// or RootedSubgraphs refuses it with a *BoundError naming only the bound
// (and an asymmetric input for an undirected bound with a plain error
// saying only that). Removing a node lowers degrees and keeps symmetry,
// so for every accepted G every G − v is accepted too. The memory check
// then uses the worst case for the public numbers only (len(roots), K,
// D, width): len(roots) can only drop on G − v, so its refusal never
// rejects a neighbour of an accepted input and prints nothing read off
// the graph; len(roots) is itself treated as public (the count of
// training nodes). b.Mode None: no bound and no occurrence bound
// (Occurrences 0; for runs without privacy), the memory check on the
// exact sizes. b.Mode Sample is refused: keyed sampling bounds one
// direction only (SampleOut) or changes other nodes' edges under a
// removal (SampleSymmetric), and the occurrence bound is not proven for
// what it does to raw graphs above D.
func RootedSubgraphs(a *graphs.CSR, b Bound, roots []int, k, width int) (*Rooted, error) {
	if a == nil {
		return nil, errors.New("degree: rooted subgraphs: no adjacency")
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("degree: rooted subgraphs: adjacency: %w", err)
	}
	if a.Rows != a.Cols {
		return nil, fmt.Errorf("degree: rooted subgraphs: the adjacency is %d×%d, want square", a.Rows, a.Cols)
	}
	if k < 0 || width < 0 {
		return nil, fmt.Errorf("degree: rooted subgraphs: %d hops and width %d: want both ≥ 0", k, width)
	}
	n := a.Rows
	isRoot := make([]bool, n)
	for _, u := range roots {
		if u < 0 || u >= n {
			return nil, fmt.Errorf("degree: rooted subgraphs: root %d outside the graph's %d nodes", u, n)
		}
		if isRoot[u] {
			return nil, fmt.Errorf("degree: rooted subgraphs: root %d given twice", u)
		}
		isRoot[u] = true
	}
	weighted := a.Data != nil
	what := fmt.Sprintf("the %d-hop subgraphs of %d roots", k, len(roots))
	r := 0
	switch b.Mode {
	case Public:
		if b.D < 0 {
			return nil, fmt.Errorf("degree: rooted subgraphs: bound must be non-negative, got %d", b.D)
		}
		und := b.Kind == Undirected
		rows := ballBound(k, b.D, und)
		entries := 0.0
		if k > 0 {
			entries = float64(b.D) * ballBound(k-1, b.D, und)
		}
		est := estimateBytes(float64(len(roots))*rows, float64(len(roots))*entries, n, width, weighted)
		if err := graphs.CheckMemory(fmt.Sprintf("%s at degree bound %d", what, b.D), est); err != nil {
			return nil, fmt.Errorf("degree: %w", err)
		}
		var err error
		if r, err = OccurrenceBound(k, b.D, und); err != nil {
			return nil, err
		}
		if err := withinBoth(a, b); err != nil {
			return nil, err
		}
	case None:
	default:
		return nil, fmt.Errorf("degree: rooted subgraphs: the %s degree bound is not offered (its occurrence bound is not proven for raw graphs above D); use public or none", b.Mode)
	}
	bfs := newBallSearch(a)
	var rows, entries int
	for _, u := range roots {
		nr, ne := bfs.run(u, k, nil)
		rows, entries = rows+nr, entries+ne
	}
	if b.Mode == None {
		// no privacy: the exact sizes may be printed
		if err := graphs.CheckMemory(what, estimateBytes(float64(rows), float64(entries), n, width, weighted)); err != nil {
			return nil, fmt.Errorf("degree: %w", err)
		}
	}
	out := &Rooted{K: k, Occurrences: r, Roots: slices.Clone(roots),
		Start: make([]int, 0, len(roots)+1), Node: make([]int, 0, rows), Example: make([]int, 0, rows), Depth: make([]int, 0, rows),
		Adj: &graphs.CSR{Rows: rows, Cols: rows, Indptr: make([]int, 1, rows+1), Indices: make([]int, 0, entries)}}
	if weighted {
		out.Adj.Data = make([]float64, 0, entries)
	}
	for e, u := range roots {
		out.Start = append(out.Start, len(out.Node))
		bfs.run(u, k, func(w, depth int) {
			out.Node = append(out.Node, w)
			out.Example = append(out.Example, e)
			out.Depth = append(out.Depth, depth)
		})
		base := out.Start[e]
		for p := base; p < len(out.Node); p++ {
			if out.Depth[p] < k {
				from := len(out.Adj.Indices)
				w := out.Node[p]
				for q := a.Indptr[w]; q < a.Indptr[w+1]; q++ {
					if v := a.Value(q); v != 0 {
						out.Adj.Indices = append(out.Adj.Indices, base+bfs.local[a.Indices[q]])
						if weighted {
							out.Adj.Data = append(out.Adj.Data, v)
						}
					}
				}
				sortRow(out.Adj, from)
			}
			out.Adj.Indptr = append(out.Adj.Indptr, len(out.Adj.Indices))
		}
	}
	out.Start = append(out.Start, len(out.Node))
	return out, nil
}

// estimateBytes is the memory of a Rooted with the given rows and entries
// plus width float64 per row, and the search's two n-int arrays.
func estimateBytes(rows, entries float64, n, width int, weighted bool) float64 {
	per := 8.0
	if weighted {
		per = 16
	}
	return 8*rows*float64(4+width) + per*entries + 16*float64(n)
}

// withinBoth returns a *BoundError unless every row and every column of a
// has at most b.D stored entries, and for an undirected bound a plain
// error unless a's non-zero pattern is symmetric. Neither names anything
// about a but the bound.
func withinBoth(a *graphs.CSR, b Bound) error {
	what := fmt.Sprintf("at most %d in-neighbours and at most %d out-neighbours per node", b.D, b.D)
	if b.Kind == Undirected {
		what = fmt.Sprintf("at most %d neighbours per node", b.D)
	}
	cols := make([]int, a.Cols)
	for i := 0; i < a.Rows; i++ {
		if a.Indptr[i+1]-a.Indptr[i] > b.D {
			return OutsideBound(what)
		}
	}
	for _, j := range a.Indices {
		if cols[j]++; cols[j] > b.D {
			return OutsideBound(what)
		}
	}
	if b.Kind != Undirected {
		return nil
	}
	for i := 0; i < a.Rows; i++ {
		for q := a.Indptr[i]; q < a.Indptr[i+1]; q++ {
			if a.Value(q) != 0 && !hasNonZero(a, a.Indices[q], i) {
				return errors.New("degree: the undirected bound needs a symmetric adjacency (every non-zero entry (i, j) with a non-zero (j, i)), and this input is not")
			}
		}
	}
	return nil
}

// hasNonZero reports whether row i of a stores a non-zero entry at column j.
func hasNonZero(a *graphs.CSR, i, j int) bool {
	for q := a.Indptr[i]; q < a.Indptr[i+1]; q++ {
		if a.Indices[q] == j && a.Value(q) != 0 {
			return true
		}
	}
	return false
}

// sortRow sorts the entries of the last row of m, from position from on,
// by column (values moved with their columns).
func sortRow(m *graphs.CSR, from int) {
	idx := m.Indices[from:]
	if m.Data == nil {
		slices.Sort(idx)
		return
	}
	val := m.Data[from:]
	// insertion sort: rows hold at most D entries under a bound
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && idx[j] < idx[j-1]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
			val[j], val[j-1] = val[j-1], val[j]
		}
	}
}

// ballSearch is a breadth-first search over a's rows (w gathers j when
// a[w,j] ≠ 0) reused across roots: mark[w] == stamp says w is in the
// current ball, at local row local[w].
type ballSearch struct {
	a      *graphs.CSR
	mark   []int
	local  []int
	stamp  int
	queue  []int
	depths []int
}

func newBallSearch(a *graphs.CSR) *ballSearch {
	return &ballSearch{a: a, mark: make([]int, a.Rows), local: make([]int, a.Rows)}
}

// run lists B_k(u) breadth-first (visit(node, depth) for each, u first;
// visit may be nil) and returns its size and the number of non-zero
// entries of its rows at depth < k.
func (s *ballSearch) run(u, k int, visit func(w, depth int)) (rows, entries int) {
	s.stamp++
	s.queue, s.depths = append(s.queue[:0], u), append(s.depths[:0], 0)
	s.mark[u], s.local[u] = s.stamp, 0
	a := s.a
	for h := 0; h < len(s.queue); h++ {
		w, d := s.queue[h], s.depths[h]
		if visit != nil {
			visit(w, d)
		}
		if d == k {
			continue
		}
		for q := a.Indptr[w]; q < a.Indptr[w+1]; q++ {
			if a.Value(q) == 0 {
				continue
			}
			entries++
			if j := a.Indices[q]; s.mark[j] != s.stamp {
				s.mark[j], s.local[j] = s.stamp, len(s.queue)
				s.queue = append(s.queue, j)
				s.depths = append(s.depths, d+1)
			}
		}
	}
	return len(s.queue), entries
}
