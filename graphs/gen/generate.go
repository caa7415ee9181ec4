package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/graphs"
)

// Stream constants for the PCG generators. Each generator derives several
// independent streams from its seed, so that (for example) the features of a
// CSBM graph do not change when only its edge count does.
const (
	streamLabels   = 0x6c6162656c73 // "labels"
	streamEdges    = 0x6564676573   // "edges"
	streamFeatures = 0x6665617473   // "feats"
	streamSigns    = 0x7369676e73   // "signs"
	streamSplit    = 0x73706c6974   // "split"
)

// newSeededRand returns a deterministic PCG-backed generator for (seed, stream).
func newSeededRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// ---------------------------------------------------------------------------
// Contextual stochastic block model

// CSBMConfig configures a contextual stochastic block model (CSBM): a
// stochastic block model with Classes balanced classes whose nodes carry
// Gaussian features centred on a per-class mean.
type CSBMConfig struct {
	// Nodes is the number of nodes N (≥ 2).
	Nodes int
	// Classes is the number of classes (1 ≤ Classes ≤ Nodes). Labels are
	// balanced: class sizes differ by at most one.
	Classes int
	// Features is the feature dimension F (≥ 1).
	Features int
	// AvgDegree is the average (undirected) node degree; the graph gets
	// round(Nodes·AvgDegree/2) undirected edges.
	AvgDegree float64
	// Homophily in [0, 1] is the fraction of edges whose endpoints share a
	// class (the edge homophily of the generated graph, up to rounding).
	Homophily float64
	// Signal ≥ 0 is the norm of every class mean vector; features are the
	// class mean plus N(0, I_F) noise, so Signal is a signal-to-noise ratio.
	Signal float64
	// Float32 rounds every feature to the nearest float32, as the float32
	// dataset files of PyG and of the papers' code hold them. Float32
	// features take half the memory traffic where a model gathers them
	// (nn.Model.DropoutSpMM keeps a float32 copy of features that are all
	// float32), with the same arithmetic in float64.
	Float32 bool
}

// DefaultCSBM is the configuration of dpgnn's embedded default dataset
// "csbm": 2,000 nodes, 5 classes, 32 features, average degree 8, edge
// homophily 0.8 and class-mean norm 1.5. A nearest-class-mean classifier
// on the features alone is right on about 0.5 of the test nodes with means
// from 20 training nodes per class (0.65 with means from all nodes), and on
// about 0.9 (0.94) after one GCN aggregation Â·X — so a feature-only MLP
// sits near 0.5–0.65 and a GCN clearly benefits from the edges.
func DefaultCSBM() CSBMConfig {
	return CSBMConfig{Nodes: 2000, Classes: 5, Features: 32, AvgDegree: 8, Homophily: 0.8, Signal: 1.5}
}

// maxGeneratedEdges bounds the edge count a generator config may ask for,
// so that edge counts never overflow an int (memory runs out far sooner:
// see CSBMConfig.CheckMemory).
const maxGeneratedEdges = 1 << 50

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// csbmEdgeCounts returns the number of intra- and inter-class undirected
// edges the config asks for.
func (c CSBMConfig) csbmEdgeCounts() (intra, inter int) {
	m := int(math.Round(float64(c.Nodes) * c.AvgDegree / 2))
	intra = int(math.Round(c.Homophily * float64(m)))
	return intra, m - intra
}

// Validate checks that the configuration is usable. Because edges are
// sampled by rejection, the requested intra-class (inter-class) edges may
// fill at most half of the available intra-class (inter-class) node pairs.
func (c CSBMConfig) Validate() error {
	switch {
	case c.Nodes < 2:
		return fmt.Errorf("csbm: nodes = %d, need at least 2", c.Nodes)
	case c.Classes < 1 || c.Classes > c.Nodes:
		return fmt.Errorf("csbm: classes = %d, need 1..nodes (%d)", c.Classes, c.Nodes)
	case c.Features < 1:
		return fmt.Errorf("csbm: features = %d, need at least 1", c.Features)
	case !finite(c.AvgDegree) || c.AvgDegree < 0:
		return fmt.Errorf("csbm: avg degree = %v, need a finite value ≥ 0", c.AvgDegree)
	case !(c.Homophily >= 0 && c.Homophily <= 1):
		return fmt.Errorf("csbm: homophily = %v, need a value in [0, 1]", c.Homophily)
	case !finite(c.Signal) || c.Signal < 0:
		return fmt.Errorf("csbm: signal = %v, need a finite value ≥ 0", c.Signal)
	case float64(c.Nodes)*c.AvgDegree/2 > maxGeneratedEdges:
		return fmt.Errorf("csbm: %d nodes with average degree %v is %.3g edges, more than %.3g", c.Nodes, c.AvgDegree, float64(c.Nodes)*c.AvgDegree/2, float64(maxGeneratedEdges))
	}
	intra, inter := c.csbmEdgeCounts()
	// Pairs inside classes: n mod c classes of size q+1, the rest of size q
	// (closed form: the class count may be huge).
	n := float64(c.Nodes)
	q, r := float64(c.Nodes/c.Classes), float64(c.Nodes%c.Classes)
	intraCap := (float64(c.Classes)-r)*q*(q-1)/2 + r*(q+1)*q/2
	interCap := n*(n-1)/2 - intraCap
	if float64(intra) > intraCap/2 {
		return fmt.Errorf("csbm: %d intra-class edges requested but only %.0f intra-class pairs exist (at most half may be used); lower avg degree or homophily", intra, intraCap)
	}
	if float64(inter) > interCap/2 {
		return fmt.Errorf("csbm: %d inter-class edges requested but only %.0f inter-class pairs exist (at most half may be used); lower avg degree or raise homophily", inter, interCap)
	}
	return nil
}

// EstimateBytes estimates the peak memory, in bytes, of generating the
// graph with CSBM and writing it with SaveNPZ: 8·N·F for the dense
// features, 100 per undirected edge (the rejection sampler's pair set, the
// CSR with both directions, the arrays written) and 64 per node (labels,
// class lists, row pointers). Measured peaks (resident set of `dpgnn data
// generate`) are within 15 % of it. It is computed in float64 and does not
// overflow for any config.
func (c CSBMConfig) EstimateBytes() float64 {
	n, f := float64(max(c.Nodes, 0)), float64(max(c.Features, 0))
	m := 0.0
	if finite(c.AvgDegree) && c.AvgDegree > 0 {
		m = n * c.AvgDegree / 2
	}
	return 8*n*f + 100*m + 64*n + 8*float64(max(c.Classes, 0))*f
}

// CheckMemory returns an error when EstimateBytes exceeds MemoryLimit
// ($DPGNN_MAX_MEMORY, default 16 GB), naming the sizes and the estimate.
// Callers holding user-supplied configs call it (after Validate) before
// CSBM, which allocates without asking.
func (c CSBMConfig) CheckMemory() error {
	err := graphs.CheckMemory(fmt.Sprintf("%d nodes × %d features with average degree %v", c.Nodes, c.Features, c.AvgDegree), c.EstimateBytes())
	if err != nil {
		return fmt.Errorf("csbm: %w", err)
	}
	return nil
}

// balancedSize is the size of class k when n nodes are dealt to c classes
// round-robin.
func balancedSize(n, c, k int) int {
	s := n / c
	if k < n%c {
		s++
	}
	return s
}

// balancedLabels returns a random balanced labelling of n nodes with c
// classes (class k has balancedSize(n, c, k) nodes).
func balancedLabels(n, c int, r *rand.Rand) []int {
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % c
	}
	r.Shuffle(n, func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	return labels
}

// pairSet records undirected node pairs for rejection sampling.
type pairSet struct {
	n    uint64
	seen map[uint64]struct{}
	src  []int
	dst  []int
}

func newPairSet(n, capacity int) *pairSet {
	return &pairSet{n: uint64(n), seen: make(map[uint64]struct{}, capacity),
		src: make([]int, 0, capacity), dst: make([]int, 0, capacity)}
}

// add inserts {u, v} (u ≠ v) and reports whether it was new.
func (p *pairSet) add(u, v int) bool {
	if u > v {
		u, v = v, u
	}
	key := uint64(u)*p.n + uint64(v)
	if _, ok := p.seen[key]; ok {
		return false
	}
	p.seen[key] = struct{}{}
	p.src = append(p.src, u)
	p.dst = append(p.dst, v)
	return true
}

// symmetricPattern builds the unweighted symmetric N×N CSR of the distinct
// undirected pairs {src[k], dst[k]} (both directions stored, rows sorted).
// The pairs must be distinct and free of self-loops.
func symmetricPattern(n int, src, dst []int) *graphs.CSR {
	m := &graphs.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1), Indices: make([]int, 2*len(src))}
	for k := range src {
		m.Indptr[src[k]+1]++
		m.Indptr[dst[k]+1]++
	}
	for i := 0; i < n; i++ {
		m.Indptr[i+1] += m.Indptr[i]
	}
	next := append([]int(nil), m.Indptr[:n]...)
	for k := range src {
		u, v := src[k], dst[k]
		m.Indices[next[u]] = v
		next[u]++
		m.Indices[next[v]] = u
		next[v]++
	}
	for i := 0; i < n; i++ {
		slices.Sort(m.Indices[m.Indptr[i]:m.Indptr[i+1]])
	}
	return m
}

// CSBM generates a contextual stochastic block model graph named "csbm".
//
// Labels are balanced and randomly assigned. The graph has exactly
// round(N·AvgDegree/2) undirected edges, of which round(Homophily·M) join
// two nodes of the same class; they are sampled uniformly by rejection in
// O(edges) expected time (an intra-class edge picks a uniform node and a
// uniform other member of its class, an inter-class edge a uniform pair
// with different classes). There are no self-loops and no duplicates; Adj
// is unweighted and symmetric. Features are dense: x_i = μ_{y_i} + ε_i with
// μ_c = Signal·u_c for a uniformly random unit vector u_c and ε_i ~ N(0, I).
// The Split is left empty; apply one with ApplySplit. The result is a pure
// function of (cfg, seed).
//
// CSBM panics if cfg.Validate fails: callers holding user-supplied configs
// must validate them first.
func CSBM(cfg CSBMConfig, seed uint64) *graphs.Graph {
	if err := cfg.Validate(); err != nil {
		panic("graphs: " + err.Error())
	}
	n, c, f := cfg.Nodes, cfg.Classes, cfg.Features
	labels := balancedLabels(n, c, newSeededRand(seed, streamLabels))
	members := make([][]int, c)
	for i, y := range labels {
		members[y] = append(members[y], i)
	}

	intra, inter := cfg.csbmEdgeCounts()
	r := newSeededRand(seed, streamEdges)
	ps := newPairSet(n, intra+inter)
	for k := 0; k < intra; {
		u := r.IntN(n)
		m := members[labels[u]]
		v := m[r.IntN(len(m))]
		if u != v && ps.add(u, v) {
			k++
		}
	}
	for k := 0; k < inter; {
		u, v := r.IntN(n), r.IntN(n)
		if labels[u] != labels[v] && ps.add(u, v) {
			k++
		}
	}
	adj := symmetricPattern(n, ps.src, ps.dst)

	rf := newSeededRand(seed, streamFeatures)
	means := make([]float64, c*f)
	for k := 0; k < c; k++ {
		mu := means[k*f : (k+1)*f]
		norm := 0.0
		for norm == 0 {
			for j := range mu {
				mu[j] = rf.NormFloat64()
				norm += mu[j] * mu[j]
			}
		}
		scale := cfg.Signal / math.Sqrt(norm)
		for j := range mu {
			mu[j] *= scale
		}
	}
	x := make([]float64, n*f)
	for i := 0; i < n; i++ {
		mu := means[labels[i]*f : (labels[i]+1)*f]
		row := x[i*f : (i+1)*f]
		for j := range row {
			row[j] = mu[j] + rf.NormFloat64()
		}
	}
	if cfg.Float32 {
		for i, v := range x {
			x[i] = float64(float32(v))
		}
	}
	return &graphs.Graph{
		Name:       "csbm",
		N:          n,
		Adj:        adj,
		X:          &graphs.Features{N: n, F: f, Dense: x},
		Labels:     labels,
		NumClasses: c,
	}
}

// ---------------------------------------------------------------------------
// Chains (CARIBOU)

// chainSize describes one of CARIBOU's chain datasets (CARIBOU §6, Table 6).
type chainSize struct {
	chains, length, perClass, train, test int
}

var chainSizes = map[string]chainSize{
	"s": {chains: 6, length: 8, perClass: 3, train: 8, test: 32},
	"m": {chains: 6, length: 10, perClass: 3, train: 10, test: 40},
	"l": {chains: 6, length: 15, perClass: 3, train: 15, test: 60},
	"x": {chains: 10, length: 15, perClass: 5, train: 25, test: 100},
}

// ChainClasses and ChainFeatures are the class count and feature dimension
// of every chain dataset.
const (
	ChainClasses  = 2
	ChainFeatures = 5
)

// Chain generates CARIBOU's chain dataset of the given size ("s", "m", "l"
// or "x"; case-insensitive), named "chain-s" etc. (CARIBOU §6, Table 6):
//
//	size  nodes  chains  length  chains/class  train  test  val
//	s        48       6       8             3      8    32    8
//	m        60       6      10             3     10    40   10
//	l        90       6      15             3     15    60   15
//	x       150      10      15             5     25   100   25
//
// There are 2 classes and 5 feature dimensions. Chain j of class c holds
// the nodes c·J·L + j·L + i, i = 0..L−1 (J chains per class, length L),
// joined by the undirected edges (i, i+1). Every feature is zero except on
// the first node of each chain, which has one-hot(c) in its first two
// dimensions; every node carries its chain's class. So only the chain heads
// are distinguishable from features, and a feature-only model is at chance
// on the others. The split (in Graph.Split, sorted) comes from a random
// permutation of all nodes drawn with seed: the first #train nodes train,
// the next #test test, the rest validation.
func Chain(size string, seed uint64) (*graphs.Graph, error) {
	key := strings.ToLower(strings.TrimSpace(size))
	cs, ok := chainSizes[key]
	if !ok {
		return nil, fmt.Errorf("chain: unknown size %q (want s, m, l or x)", size)
	}
	J, L := cs.perClass, cs.length
	n := cs.chains * L
	labels := make([]int, n)
	x := make([]float64, n*ChainFeatures)
	var src, dst []int
	for c := 0; c < ChainClasses; c++ {
		for j := 0; j < J; j++ {
			base := c*J*L + j*L
			for i := 0; i < L; i++ {
				labels[base+i] = c
				if i+1 < L {
					src = append(src, base+i)
					dst = append(dst, base+i+1)
				}
			}
			x[base*ChainFeatures+c] = 1
		}
	}
	perm := newSeededRand(seed, streamSplit).Perm(n)
	split := graphs.Split{
		Train: slices.Sorted(slices.Values(perm[:cs.train])),
		Test:  slices.Sorted(slices.Values(perm[cs.train : cs.train+cs.test])),
		Val:   slices.Sorted(slices.Values(perm[cs.train+cs.test:])),
	}
	return &graphs.Graph{
		Name:       "chain-" + key,
		N:          n,
		Adj:        symmetricPattern(n, src, dst),
		X:          &graphs.Features{N: n, F: ChainFeatures, Dense: x},
		Labels:     labels,
		NumClasses: ChainClasses,
		Split:      split,
	}, nil
}

// ---------------------------------------------------------------------------
// Signed stochastic block model

// SignedSBMConfig configures a signed stochastic block model: an
// Erdős–Rényi-style random graph on Nodes nodes split into Communities
// balanced communities, whose edges are positive within a community and
// negative across communities, each sign flipped with a given probability.
type SignedSBMConfig struct {
	// Nodes is the number of nodes N (≥ 2).
	Nodes int
	// Communities is the number of communities (1..Nodes).
	Communities int
	// AvgDegree is the average undirected degree counting both signs; the
	// graph gets round(Nodes·AvgDegree/2) undirected edges, drawn uniformly
	// from all node pairs.
	AvgDegree float64
	// NegWithin in [0, 1] is the probability that an edge inside a
	// community is negative.
	NegWithin float64
	// PosAcross in [0, 1] is the probability that an edge between two
	// communities is positive.
	PosAcross float64
}

// Validate checks the configuration. At most half of all node pairs may be
// requested as edges (edges are drawn by rejection).
func (c SignedSBMConfig) Validate() error {
	switch {
	case c.Nodes < 2:
		return fmt.Errorf("signed sbm: nodes = %d, need at least 2", c.Nodes)
	case c.Communities < 1 || c.Communities > c.Nodes:
		return fmt.Errorf("signed sbm: communities = %d, need 1..nodes (%d)", c.Communities, c.Nodes)
	case !finite(c.AvgDegree) || c.AvgDegree < 0:
		return fmt.Errorf("signed sbm: avg degree = %v, need a finite value ≥ 0", c.AvgDegree)
	case !(c.NegWithin >= 0 && c.NegWithin <= 1):
		return fmt.Errorf("signed sbm: neg-within = %v, need a probability in [0, 1]", c.NegWithin)
	case !(c.PosAcross >= 0 && c.PosAcross <= 1):
		return fmt.Errorf("signed sbm: pos-across = %v, need a probability in [0, 1]", c.PosAcross)
	case float64(c.Nodes)*c.AvgDegree/2 > maxGeneratedEdges:
		return fmt.Errorf("signed sbm: %d nodes with average degree %v is %.3g edges, more than %.3g", c.Nodes, c.AvgDegree, float64(c.Nodes)*c.AvgDegree/2, float64(maxGeneratedEdges))
	}
	m := math.Round(float64(c.Nodes) * c.AvgDegree / 2)
	n := float64(c.Nodes)
	if m > n*(n-1)/4 {
		return fmt.Errorf("signed sbm: %.0f edges requested but only %.0f node pairs exist (at most half may be used)", m, n*(n-1)/2)
	}
	return nil
}

// SignedSBM generates a signed SBM graph named "signed-sbm". It draws
// round(N·AvgDegree/2) distinct undirected pairs uniformly (no self-loops),
// then signs each: a pair inside a community is negative with probability
// NegWithin, a pair across communities positive with probability PosAcross.
// Adj holds the positive and Neg the negative edges, both unweighted and
// symmetric; no pair carries both signs. Labels are the (balanced, random)
// communities and NumClasses = Communities. The graph has no node features
// (X is nil). The result is a pure function of (cfg, seed).
//
// SignedSBM panics if cfg.Validate fails: callers holding user-supplied
// configs must validate them first.
func SignedSBM(cfg SignedSBMConfig, seed uint64) *graphs.Graph {
	if err := cfg.Validate(); err != nil {
		panic("graphs: " + err.Error())
	}
	n := cfg.Nodes
	labels := balancedLabels(n, cfg.Communities, newSeededRand(seed, streamLabels))
	m := int(math.Round(float64(n) * cfg.AvgDegree / 2))
	r := newSeededRand(seed, streamEdges)
	ps := newPairSet(n, m)
	for ps.len() < m {
		u, v := r.IntN(n), r.IntN(n)
		if u != v {
			ps.add(u, v)
		}
	}
	rs := newSeededRand(seed, streamSigns)
	var ps1, pd1, ns1, nd1 []int
	for k := range ps.src {
		u, v := ps.src[k], ps.dst[k]
		var positive bool
		if labels[u] == labels[v] {
			positive = rs.Float64() >= cfg.NegWithin
		} else {
			positive = rs.Float64() < cfg.PosAcross
		}
		if positive {
			ps1, pd1 = append(ps1, u), append(pd1, v)
		} else {
			ns1, nd1 = append(ns1, u), append(nd1, v)
		}
	}
	return &graphs.Graph{
		Name:       "signed-sbm",
		N:          n,
		Adj:        symmetricPattern(n, ps1, pd1),
		Neg:        symmetricPattern(n, ns1, nd1),
		Labels:     labels,
		NumClasses: cfg.Communities,
	}
}

func (p *pairSet) len() int { return len(p.src) }
