package walk

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/internal/vec"
)

// ASGL's sampling: BFS trees and constrained walks on a signed graph
// (Ke et al., "Adversarial Signed Graph Learning with Differential
// Privacy", KDD 2026, appendix G–K; GraphGAN's graph softmax, Wang et al.,
// AAAI 2018).
//
// The walk graph H is an undirected signed graph (the positive subgraph G+,
// the negative subgraph G−, or both), whose every node has at most D
// neighbours. For a root r, T_r is the BFS tree of H from r truncated at
// depth L (the nodes at distance ≤ L from r). The training subgraph S_r of
// r is everything the sampler outputs for r: its neighbours (the real
// pairs), the terminals of its discriminator walks (the fake pairs) and
// its generator walks. Every walk starts at r and only moves down T_r, so
// all of S_r lies in T_r, and S_r is a function of T_r, r's keyed random
// stream and the score function alone.
//
// Claim 1 (occurrences; the appendix's Lemma 3 with its recurrence
// corrected). On any walk graph with degrees ≤ D, every node v lies in at
// most |B_L(v)| ≤ R_{D,L} = Σ_{l=0..L} D^l training subgraphs, where
// B_L(v) is the set of nodes within distance L of v. Proof: v ∈ S_r implies
// v ∈ T_r, so dist(r, v) ≤ L and r ∈ B_L(v) (H is undirected). At most D^l
// nodes lie at distance l from v: each has a neighbour at distance l−1, and
// each of those has at most D neighbours (induction on l). Summing over
// l ≤ L gives R_{D,L}. ∎ (The appendix's step (7), N·(R_{N,L} − 1) + 1 =
// R_{N,L+1}, is false: N·(R_{N,L} − 1) + 1 = R_{N,L+1} − N. The right
// recurrence is R_{N,L+1} = N·R_{N,L} + 1, and the bound itself holds.)
//
// Claim 1 alone does not bound the sensitivity of a discriminator step. Its
// proof (Thm 2 of the appendix) needs the training subgraphs that DIFFER
// between the raw graph G and its neighbour G − v* (v* removed with all its
// edges, keeping its id as an isolated node) to number at most R. That is
// Claim 2, and it depends on how the degree bound D is obtained.
//
// Claim 2 (public bound: degree.Public). D is a bound on the degrees of the
// raw walk graph, stated without looking at the data, and an input above
// it is refused (NewSignedWalker fails) before anything is sampled. The
// universe of such graphs is closed under node removal (degrees only
// drop), so Claim 1 holds on G and on G − v* alike, with the same R. And
// for every root r outside B_L(v*) (distances in G), T_r is the same in G
// and G − v* (same nodes, BFS order, parents, children and signs), so S_r
// is the same (same key, same per-root stream, same scores): the training
// subgraphs that differ are among the |B_L(v*)| ≤ R_{D,L} roots of the
// ball, v*'s own included. Proof: BFS discovers the nodes at depth d ≤ L
// by scanning, in queue order, the adjacency lists of the nodes at depth
// d − 1 ≤ L − 1. None of those is adjacent to v* (that would put v* within
// distance L of r), so their lists are the same in G and G − v*, and by
// induction on d the queue up to depth L is the same. The walk reads only
// the parent and children of nodes at depth < L and stops at depth L. ∎
//
// The cap (degree.Sample, degree.SampleSymmetric) is the papers'
// assumption, not a proof. It keeps at most D edges per node with a keyed
// greedy (undirected pairs visited in the order of a keyed rank drawn from
// the mechanism source; a pair is kept while both endpoints have capacity). Its result has degrees ≤ D, so
// Claim 1 holds on cap(G) and on cap(G − v) for every v. Claim 2 does not:
// cap(G − v*) differs from cap(G) − v* wherever the capacity v* freed
// starts an alternating chain of swapped edges, and every root within
// distance L of a swapped edge changes its training subgraph, however far
// from v* (package degree explains why no degree projection we know
// avoids this). On a graph whose degrees are already ≤ D the cap is the
// identity and Claim 2 applies; a report that uses the cap must say the
// guarantee assumes that. degree.None walks the raw graph and bounds nothing (for runs
// without privacy): neither claim holds.
//
// Both claims take the score function as fixed: the same function on G and
// on G − v*. Scores computed from a generator trained on walks of the
// private graph are not fixed in this sense, and the method has to account
// for them separately.

// MaxReceptiveField is the largest R_{N,L} that ReceptiveField accepts. A
// larger bound means noise of standard deviation over 10⁹ clipping norms
// per step, far beyond any population the subsampling could amplify over.
const MaxReceptiveField = 1 << 30

// ReceptiveField returns R_{N,L} = Σ_{l=0..L} N^l (ASGL appendix, Lemma 2):
// the number of nodes of a tree whose nodes have at most N children, cut at
// depth L, and (Claim 1 above) the most training subgraphs a node can lie
// in when walks of at most L hops run on a graph of degrees at most N. It
// equals (N^{L+1} − 1)/(N − 1) for N ≥ 2 and L + 1 for N = 1. It fails for
// N < 1, L < 0 and results above MaxReceptiveField.
func ReceptiveField(n, l int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("walk: receptive field: degree bound N = %d, want ≥ 1", n)
	}
	if l < 0 {
		return 0, fmt.Errorf("walk: receptive field: path length L = %d, want ≥ 0", l)
	}
	r, p := 1, 1
	for i := 1; i <= l; i++ {
		if p > MaxReceptiveField/n {
			return 0, fmt.Errorf("walk: receptive field R(N=%d, L=%d) exceeds %d", n, l, MaxReceptiveField)
		}
		p *= n
		r += p
		if r > MaxReceptiveField {
			return 0, fmt.Errorf("walk: receptive field R(N=%d, L=%d) exceeds %d", n, l, MaxReceptiveField)
		}
	}
	return r, nil
}

// Config configures ASGL's constrained walks.
type Config struct {
	// Degree is D, the bound on every node's number of neighbours in the
	// walk graph (public bound or keyed sample, per Mode): ≥ 1 (ignored
	// with degree.None). The occurrence bound is R_{D,L}. ASGL uses
	// D = N = Paths.
	Degree int
	// Paths is N, the number of walks per root, for the discriminator (its
	// fake pairs) and for the generator alike: ≥ 1.
	Paths int
	// MaxLen is L, the most hops of a walk (the depth of the BFS trees): ≥ 1.
	MaxLen int
	// Mode says how Degree is enforced: degree.Public (the zero value),
	// degree.Sample or degree.None.
	Mode degree.Mode
	// SampleKey keys the sample's edge order (degree.Sample only): draw it
	// from the mechanism's noise source (degree.NewKey).
	SampleKey degree.Key
}

// bound is the degree bound of the walk graph (symmetric: its rows are
// the degrees).
func (c Config) bound() degree.Bound {
	return degree.Bound{Mode: c.Mode, D: c.Degree, Kind: degree.Undirected, Of: "every node's degree in the walk graph"}
}

// Validate checks the parameters and, with a degree bound, that
// R_{Degree,MaxLen} is at most MaxReceptiveField.
func (c Config) Validate() error {
	if c.Degree < 1 && c.Mode != degree.None {
		return fmt.Errorf("walk: walk config: degree bound %d, want ≥ 1", c.Degree)
	}
	if c.Paths < 1 {
		return fmt.Errorf("walk: walk config: paths per root %d, want ≥ 1", c.Paths)
	}
	if c.MaxLen < 1 {
		return fmt.Errorf("walk: walk config: max path length %d, want ≥ 1", c.MaxLen)
	}
	switch c.Mode {
	case degree.Public, degree.Sample:
	case degree.None:
		return nil
	default:
		return fmt.Errorf("walk: walk config: unknown degree mode %d", int(c.Mode))
	}
	_, err := ReceptiveField(c.Degree, c.MaxLen)
	return err
}

// OccurrenceBound returns R_{Degree,MaxLen}: the most training subgraphs a
// node lies in (Claim 1) and, with degree.Public, the most that differ
// between a raw graph and the graph without one node (Claim 2). It fails
// with degree.None.
func (c Config) OccurrenceBound() (int, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if c.Mode == degree.None {
		return 0, fmt.Errorf("walk: walk config: no degree bound, so no occurrence bound")
	}
	return ReceptiveField(c.Degree, c.MaxLen)
}

// SignedWalker builds depth-limited BFS trees and samples ASGL's
// constrained walks on one walk graph. It is not safe for concurrent use
// (its BFS scratch is shared); give each goroutine its own.
type SignedWalker struct {
	cfg   Config
	r     int
	adj   *graphs.CSR // symmetric, no self-loops, Data = ±1 edge signs, degrees ≤ cfg.Degree
	stamp []uint32
	gen   uint32
	index []int32 // node → tree index, valid where stamp == gen
}

// NewSignedWalker returns a walker on the signed graph whose positive edges
// are pos and negative edges are neg (either may be nil, not both; for
// ASGL's phases pass G+ alone or G− alone). Both must be square of the same
// size and symmetric in pattern (undirected); stored values are ignored
// (every stored entry is an edge) and self-loops are dropped. A pair stored
// in both is an error. The degree bound is applied by degree.Bound.Apply
// (Kind Undirected): with degree.Public, an input with a node of more than
// cfg.Degree neighbours (counting both signs) is refused with a
// *degree.BoundError, which names the bound and nothing about the input
// (how many nodes exceed it and their degrees are private); with
// degree.Sample the graph is capped by degree.SampleSymmetric.
func NewSignedWalker(pos, neg *graphs.CSR, cfg Config) (*SignedWalker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := 0 // no bound with degree.None
	if cfg.Mode != degree.None {
		r, _ = ReceptiveField(cfg.Degree, cfg.MaxLen)
	}
	adj, err := signedUnion(pos, neg)
	if err != nil {
		return nil, err
	}
	n := adj.Rows
	if adj, err = cfg.bound().Apply(adj, cfg.SampleKey); err != nil {
		return nil, fmt.Errorf("walk: walk graph: %w", err)
	}
	return &SignedWalker{cfg: cfg, r: r, adj: adj,
		stamp: make([]uint32, n), index: make([]int32, n)}, nil
}

// signedUnion merges pos and neg into one symmetric CSR with values ±1,
// without self-loops, checking shapes, symmetry and disjointness.
func signedUnion(pos, neg *graphs.CSR) (*graphs.CSR, error) {
	if pos == nil && neg == nil {
		return nil, fmt.Errorf("walk: walk graph: no positive and no negative adjacency")
	}
	n := -1
	for _, p := range []struct {
		name string
		m    *graphs.CSR
	}{{"positive", pos}, {"negative", neg}} {
		if p.m == nil {
			continue
		}
		if err := p.m.Validate(); err != nil {
			return nil, fmt.Errorf("walk: walk graph: %s adjacency: %w", p.name, err)
		}
		if p.m.Rows != p.m.Cols {
			return nil, fmt.Errorf("walk: walk graph: %s adjacency is %d×%d, want square", p.name, p.m.Rows, p.m.Cols)
		}
		if n >= 0 && p.m.Rows != n {
			return nil, fmt.Errorf("walk: walk graph: positive adjacency has %d nodes, negative %d", n, p.m.Rows)
		}
		n = p.m.Rows
	}
	var src, dst []int
	var val []float64
	for _, p := range []struct {
		m *graphs.CSR
		s float64
	}{{pos, 1}, {neg, -1}} {
		if p.m == nil {
			continue
		}
		for i := 0; i < n; i++ {
			for k := p.m.Indptr[i]; k < p.m.Indptr[i+1]; k++ {
				if j := p.m.Indices[k]; j != i {
					src, dst, val = append(src, i), append(dst, j), append(val, p.s)
				}
			}
		}
	}
	// Build without summing duplicates: a pair stored in both signs shows
	// up as two entries of opposite sign, which the scan below reports.
	type e struct {
		j int
		s float64
	}
	rows := make([][]e, n)
	for k := range src {
		rows[src[k]] = append(rows[src[k]], e{dst[k], val[k]})
	}
	m := &graphs.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1), Indices: make([]int, 0, len(src)), Data: make([]float64, 0, len(src))}
	for i, row := range rows {
		slices.SortFunc(row, func(a, b e) int { return a.j - b.j })
		for k, x := range row {
			if k > 0 && row[k-1].j == x.j {
				if row[k-1].s != x.s {
					return nil, fmt.Errorf("walk: walk graph: pair (%d, %d) is both a positive and a negative edge", i, x.j)
				}
				continue
			}
			m.Indices = append(m.Indices, x.j)
			m.Data = append(m.Data, x.s)
		}
		m.Indptr[i+1] = len(m.Indices)
	}
	t := m.Transpose()
	for i := 0; i < n; i++ {
		a, as := m.Row(i)
		b, bs := t.Row(i)
		if !slices.Equal(a, b) || !slices.Equal(as, bs) {
			return nil, fmt.Errorf("walk: walk graph: adjacency of node %d is not symmetric (walks need an undirected graph)", i)
		}
	}
	return m, nil
}

// Nodes returns the number of nodes of the walk graph.
func (w *SignedWalker) Nodes() int { return w.adj.Rows }

// Config returns the walker's configuration.
func (w *SignedWalker) Config() Config { return w.cfg }

// OccurrenceBound returns R_{D,L} (see Config.OccurrenceBound); 0
// with degree.None.
func (w *SignedWalker) OccurrenceBound() int { return w.r }

// Graph returns a copy of the walk graph: symmetric, values ±1 (the edge
// signs), degrees ≤ Degree (capped with degree.Sample; any with degree.None).
func (w *SignedWalker) Graph() *graphs.CSR { return w.adj.Clone() }

// SignedTree is the BFS tree of a walk graph from Root, truncated at depth
// MaxLen: the nodes within distance MaxLen of Root, enqueued in adjacency
// order (a node is marked visited when enqueued). Entry k describes node
// Nodes[k]; Nodes is in BFS order with the root first, so every node's
// children are contiguous. Sign[k] is the product of the edge signs along
// the tree path from the root to Nodes[k] (balance theory: the enemy of an
// enemy is a friend); on a negative tree it is (−1)^Depth[k]. Walks never
// modify a tree; callers must not either.
type SignedTree struct {
	Root   int
	MaxLen int
	Nodes  []int  // node ids, BFS order, Nodes[0] = Root
	Parent []int  // tree index of the parent, −1 for the root
	Depth  []int  // hops from the root, ≤ MaxLen
	Sign   []int8 // ±1, the sign of the tree path from the root
	// ChildLo[k] ≤ c < ChildHi[k] are the tree indices of Nodes[k]'s
	// children (empty for nodes at depth MaxLen, whose children are not
	// explored).
	ChildLo, ChildHi []int
}

// Tree returns the BFS tree from root, truncated at depth MaxLen. Its size
// is at most min(n, R_{D,L}) (at most n with degree.None). It fails for a
// root out of range.
func (w *SignedWalker) Tree(root int) (*SignedTree, error) {
	n := w.adj.Rows
	if root < 0 || root >= n {
		return nil, fmt.Errorf("walk: BFS tree: root %d out of range [0, %d)", root, n)
	}
	w.gen++
	if w.gen == 0 { // wrapped: reset the stamps
		clear(w.stamp)
		w.gen = 1
	}
	size := min(n, w.r)
	if w.r == 0 {
		size = min(n, 64) // no bound: a first guess, grown by append
	}
	t := &SignedTree{Root: root, MaxLen: w.cfg.MaxLen,
		Nodes: make([]int, 1, size), Parent: make([]int, 1, size), Depth: make([]int, 1, size),
		Sign: make([]int8, 1, size), ChildLo: make([]int, 0, size), ChildHi: make([]int, 0, size)}
	t.Nodes[0], t.Parent[0], t.Depth[0], t.Sign[0] = root, -1, 0, 1
	w.stamp[root], w.index[root] = w.gen, 0
	for k := 0; k < len(t.Nodes); k++ {
		lo := len(t.Nodes)
		if t.Depth[k] < w.cfg.MaxLen {
			u := t.Nodes[k]
			for e := w.adj.Indptr[u]; e < w.adj.Indptr[u+1]; e++ {
				v := w.adj.Indices[e]
				if w.stamp[v] == w.gen {
					continue
				}
				w.stamp[v], w.index[v] = w.gen, int32(len(t.Nodes))
				s := t.Sign[k]
				if w.adj.Data[e] < 0 {
					s = -s
				}
				t.Nodes = append(t.Nodes, v)
				t.Parent = append(t.Parent, k)
				t.Depth = append(t.Depth, t.Depth[k]+1)
				t.Sign = append(t.Sign, s)
			}
		}
		t.ChildLo = append(t.ChildLo, lo)
		t.ChildHi = append(t.ChildHi, len(t.Nodes))
	}
	return t, nil
}

// Transition is the rule that turns generator scores into the walk's
// transition probabilities over a node's tree neighbours.
type Transition int

const (
	// TransitionPositive is GraphGAN's graph softmax: softmax(scores). ASGL
	// uses it on the positive subgraph's trees.
	TransitionPositive Transition = iota
	// TransitionNegative is ASGL's rule on the negative subgraph's trees:
	// softmax(1 − softmax(scores)), which favours the nodes the generator
	// scores low.
	TransitionNegative
)

// ScoreFunc fills out[j] with the generator's relevance score of cands[j]
// as the next node of a walk at node cur (GraphGAN: g_cur·g_cand, plus a
// bias in the code). len(out) == len(cands). Scores must be finite. A nil
// ScoreFunc means all scores 0 (uniform transitions).
type ScoreFunc func(cur int, cands []int, out []float64)

// StopReason says why a walk ended.
type StopReason int

const (
	// StopBackStep: the walk drew the node it came from (GraphGAN's
	// termination); the sample is the last node of the walk.
	StopBackStep StopReason = iota
	// StopMaxLen: the walk reached depth MaxLen.
	StopMaxLen
	// StopDeadEnd: the current node had no candidate (a root without
	// neighbours, or, for the discriminator, a depth-1 node without
	// children, since the root is not a candidate there).
	StopDeadEnd
)

// String returns "back-step", "max-length" or "dead-end".
func (s StopReason) String() string {
	switch s {
	case StopBackStep:
		return "back-step"
	case StopMaxLen:
		return "max-length"
	case StopDeadEnd:
		return "dead-end"
	}
	return fmt.Sprintf("StopReason(%d)", int(s))
}

// Walk is one constrained walk down a SignedTree: Nodes[0] is the root and
// Nodes[k] is at depth k, so it has at most MaxLen hops and every
// consecutive pair is a tree edge. The back-step that ends a walk is not
// recorded (GraphGAN appends it and then drops it from the window pairs).
// Signs[k] is the tree sign of Nodes[k] relative to the root.
type Walk struct {
	Nodes []int
	Signs []int8
	Stop  StopReason
}

// Walk samples one walk from the root (ASGL appendix, Thm 1 and Lemma 2;
// GraphGAN's online graph softmax): at node cur of depth < MaxLen, the
// candidates are cur's parent (none at the root) and children, in that
// order; one is drawn with the rule's probabilities from the scores; the
// walk ends when it draws the parent (a back-step), when it reaches depth
// MaxLen, or when there is no candidate. forDisc is GraphGAN's for_d: the
// root is never a candidate (so a discriminator walk cannot end at depth
// 1 by a back-step). Randomness comes from src. It fails on a non-finite
// score.
func (t *SignedTree) Walk(src rand.Source, forDisc bool, rule Transition, scores ScoreFunc) (Walk, error) {
	var s walkScratch
	return t.walk(src, forDisc, rule, scores, &s)
}

// walkScratch holds reusable buffers for walks.
type walkScratch struct {
	cand   []int // tree indices
	ids    []int // node ids
	logits []float64
}

func (t *SignedTree) walk(src rand.Source, forDisc bool, rule Transition, scores ScoreFunc, s *walkScratch) (Walk, error) {
	w := Walk{Nodes: []int{t.Root}, Signs: []int8{1}}
	k := 0
	for {
		if t.Depth[k] >= t.MaxLen {
			w.Stop = StopMaxLen
			return w, nil
		}
		s.cand = s.cand[:0]
		if p := t.Parent[k]; p >= 0 && !(forDisc && p == 0) {
			s.cand = append(s.cand, p)
		}
		for c := t.ChildLo[k]; c < t.ChildHi[k]; c++ {
			s.cand = append(s.cand, c)
		}
		if len(s.cand) == 0 {
			w.Stop = StopDeadEnd
			return w, nil
		}
		j := 0
		if len(s.cand) > 1 {
			s.ids = s.ids[:0]
			for _, c := range s.cand {
				s.ids = append(s.ids, t.Nodes[c])
			}
			s.logits = slices.Grow(s.logits[:0], len(s.cand))[:len(s.cand)]
			clear(s.logits)
			if scores != nil {
				scores(t.Nodes[k], s.ids, s.logits)
			}
			if err := transitionProbs(s.logits, rule); err != nil {
				return Walk{}, fmt.Errorf("walk: walk from %d at node %d: %w", t.Root, t.Nodes[k], err)
			}
			j = drawCategorical(src, s.logits)
		}
		next := s.cand[j]
		if next == t.Parent[k] {
			w.Stop = StopBackStep
			return w, nil
		}
		k = next
		w.Nodes = append(w.Nodes, t.Nodes[k])
		w.Signs = append(w.Signs, t.Sign[k])
	}
}

// transitionProbs turns scores into probabilities in place: softmax for
// TransitionPositive, softmax(1 − softmax) for TransitionNegative (both
// shifted by the maximum, so large scores do not overflow).
func transitionProbs(x []float64, rule Transition) error {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("score %v is not finite", v)
		}
	}
	walkSoftmax(x)
	switch rule {
	case TransitionPositive:
	case TransitionNegative:
		for i := range x {
			x[i] = 1 - x[i]
		}
		walkSoftmax(x)
	default:
		return fmt.Errorf("unknown transition rule %d", int(rule))
	}
	return nil
}

// walkSoftmax normalises x in place (max-shifted).
func walkSoftmax(x []float64) {
	mx := slices.Max(x)
	sum := 0.0
	for i, v := range x {
		x[i] = math.Exp(v - mx)
		sum += x[i]
	}
	for i := range x {
		x[i] /= sum
	}
}

// drawCategorical draws an index with probabilities p (summing to 1, up
// to rounding) from one uniform of src (vec.UnitOpen, strictly below 1).
// An index of probability 0 is never drawn.
func drawCategorical(src rand.Source, p []float64) int {
	u := vec.UnitOpen(src.Uint64())
	acc := 0.0
	last := 0
	for i, v := range p {
		acc += v
		if u < acc {
			return i
		}
		if v > 0 {
			last = i
		}
	}
	return last // rounding left u above the total
}

// SignedPair is a pair of nodes with its balance-theory sign: the product
// of the edge signs along the tree path between them.
type SignedPair struct {
	U, V int
	Sign int8
}

// WindowPairs returns GraphGAN's window pairs of a walk's node sequence:
// (path[i], path[j]) for 0 < |i − j| ≤ w, in order of i then j, skipping
// pairs whose two nodes are equal (as ASGL's code does). path is the walk
// without its terminating back-step (Walk.Nodes); w < 1 gives none.
func WindowPairs(path []int, w int) [][2]int {
	var out [][2]int
	for i := range path {
		for j := max(0, i-w); j <= min(len(path)-1, i+w); j++ {
			if j != i && path[i] != path[j] {
				out = append(out, [2]int{path[i], path[j]})
			}
		}
	}
	return out
}

// Pairs returns the walk's window pairs (WindowPairs of Nodes) with their
// signs: Signs[i]·Signs[j], the product of the edge signs between the two
// nodes along the walk. On a negative tree that is −1 for an odd hop
// distance and +1 for an even one (ASGL's parity rule).
func (wk Walk) Pairs(w int) []SignedPair {
	var out []SignedPair
	for i := range wk.Nodes {
		for j := max(0, i-w); j <= min(len(wk.Nodes)-1, i+w); j++ {
			if j != i && wk.Nodes[i] != wk.Nodes[j] {
				out = append(out, SignedPair{wk.Nodes[i], wk.Nodes[j], wk.Signs[i] * wk.Signs[j]})
			}
		}
	}
	return out
}

// Key keys the per-root random streams of a Sampler: the one key type of
// graphs/degree, drawn fresh from the mechanism's noise source for every
// round of sampling (degree.NewKey), so the walks are reproducible from the
// seed and unpredictable with secure noise.
type Key = degree.Key

// Sampler draws ASGL's per-root training data from a SignedWalker. Each
// root's randomness is its own stream, ChaCha8 keyed by SHA-256 of the
// Key, the root and the purpose (discriminator or generator): a root's
// sample does not depend on which other roots are sampled or in which
// order, so a batch can be sampled lazily, and a root whose BFS tree is the
// same in two graphs gets the same sample in both (Claim 2's coupling). Not
// safe for concurrent use.
type Sampler struct {
	w       *SignedWalker
	key     Key
	rule    Transition
	scores  ScoreFunc
	scratch walkScratch
}

// NewSampler returns a sampler with the given key, transition rule and
// scores (nil: uniform). The scores must stay the same function for the
// sampler's life (see the note on scores above).
func (w *SignedWalker) NewSampler(key Key, rule Transition, scores ScoreFunc) (*Sampler, error) {
	if rule != TransitionPositive && rule != TransitionNegative {
		return nil, fmt.Errorf("walk: sampler: unknown transition rule %d", int(rule))
	}
	return &Sampler{w: w, key: key, rule: rule, scores: scores}, nil
}

const (
	purposeDisc byte = 'D'
	purposeGen  byte = 'G'
)

// rootStream returns root's stream for a purpose.
func (s *Sampler) rootStream(root int, purpose byte) *rand.ChaCha8 {
	h := sha256.New()
	h.Write([]byte("dpgnn/graphs.Sampler/v1\x00"))
	h.Write(s.key[:])
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(root))
	b[8] = purpose
	h.Write(b[:])
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	return rand.NewChaCha8(seed)
}

// DiscSample is one root's element of the discriminator's training set
// S_tr (one training subgraph): the real pairs (Root, Real[k]), label 1,
// and the fake pairs (Root, Fakes[k]), label 0. Aborted means a
// discriminator walk met a dead end; the root then contributes no pair at
// all (GraphGAN's rule), i.e. a zero gradient. It stays in the population.
type DiscSample struct {
	Root     int
	Real     []int  // the root's neighbours in the walk graph (≤ Degree)
	RealSign []int8 // their edge signs
	Fakes    []int  // terminals of Paths discriminator walks (repeats possible)
	FakeSign []int8 // their tree signs relative to the root
	Aborted  bool
}

// Nodes returns the distinct nodes of the sample (root included, sorted):
// the node set of the training subgraph that Claims 1 and 2 count.
func (d DiscSample) Nodes() []int {
	out := append([]int{d.Root}, d.Real...)
	out = append(out, d.Fakes...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Disc samples root's discriminator element: its neighbours as real pairs
// and the terminals (last nodes) of Paths walks with forDisc as fakes. It
// fails for a root out of range and on a non-finite score.
func (s *Sampler) Disc(root int) (DiscSample, error) {
	t, err := s.w.Tree(root)
	if err != nil {
		return DiscSample{}, err
	}
	d := DiscSample{Root: root}
	src := s.rootStream(root, purposeDisc)
	fakes := make([]int, 0, s.w.cfg.Paths)
	signs := make([]int8, 0, s.w.cfg.Paths)
	for range s.w.cfg.Paths {
		wk, err := t.walk(src, true, s.rule, s.scores, &s.scratch)
		if err != nil {
			return DiscSample{}, err
		}
		if wk.Stop == StopDeadEnd {
			d.Aborted = true
			return d, nil
		}
		fakes = append(fakes, wk.Nodes[len(wk.Nodes)-1])
		signs = append(signs, wk.Signs[len(wk.Signs)-1])
	}
	cols, vals := s.w.adj.Row(root)
	d.Real = append([]int(nil), cols...)
	d.RealSign = make([]int8, len(vals))
	for k, v := range vals {
		d.RealSign[k] = int8(math.Copysign(1, v))
	}
	d.Fakes, d.FakeSign = fakes, signs
	return d, nil
}

// Gen samples root's Paths generator walks (forDisc false); their window
// pairs (Walk.Pairs) train the generator. A root without neighbours gives
// walks of the root alone (StopDeadEnd), which have no pairs.
func (s *Sampler) Gen(root int) ([]Walk, error) {
	t, err := s.w.Tree(root)
	if err != nil {
		return nil, err
	}
	src := s.rootStream(root, purposeGen)
	out := make([]Walk, 0, s.w.cfg.Paths)
	for range s.w.cfg.Paths {
		wk, err := t.walk(src, false, s.rule, s.scores, &s.scratch)
		if err != nil {
			return nil, err
		}
		out = append(out, wk)
	}
	return out, nil
}

// DiscBatch returns the discriminator elements of the given roots (one
// batch: draw the roots with a fixed-size sample without replacement from
// all node ids, as the hypergeometric accountant assumes).
func (s *Sampler) DiscBatch(roots []int) ([]DiscSample, error) {
	out := make([]DiscSample, len(roots))
	for i, r := range roots {
		d, err := s.Disc(r)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}
