package walk

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
)

func TestReceptiveField(t *testing.T) {
	for _, tc := range []struct{ n, l, want int }{
		{3, 0, 1}, {3, 1, 4}, {3, 2, 13}, {3, 4, 121}, {2, 1, 3}, {4, 3, 85}, {3, 3, 40},
		{1, 0, 1}, {1, 7, 8}, {511, 1, 512}, {2, 29, 1<<30 - 1},
	} {
		got, err := ReceptiveField(tc.n, tc.l)
		if err != nil || got != tc.want {
			t.Errorf("R(%d, %d) = %d, %v; want %d", tc.n, tc.l, got, err, tc.want)
		}
	}
	for n := 1; n <= 6; n++ {
		for l := 0; l <= 6; l++ {
			r, _ := ReceptiveField(n, l)
			r1, _ := ReceptiveField(n, l+1)
			if r1 != n*r+1 {
				t.Errorf("R(%d, %d) = %d, want N·R(N, L) + 1 = %d", n, l+1, r1, n*r+1)
			}
			// The appendix's step (7) claims N·(R − 1) + 1 = R_{N,L+1}; it
			// is R_{N,L+1} − N.
			if n*(r-1)+1 != r1-n {
				t.Errorf("N(R−1)+1 at (%d, %d) = %d, want R_{N,L+1} − N = %d", n, l, n*(r-1)+1, r1-n)
			}
			if n > 1 {
				closed := (math.Pow(float64(n), float64(l+1)) - 1) / float64(n-1)
				if float64(r) != closed {
					t.Errorf("R(%d, %d) = %d, closed form %v", n, l, r, closed)
				}
			}
		}
	}
	for _, tc := range []struct {
		n, l int
		msg  string
	}{
		{0, 3, "N = 0"}, {3, -1, "L = -1"}, {2, 30, "exceeds"}, {1 << 20, 2, "exceeds"}, {math.MaxInt, 2, "exceeds"},
	} {
		if _, err := ReceptiveField(tc.n, tc.l); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("R(%d, %d): error %v, want one containing %q", tc.n, tc.l, err, tc.msg)
		}
	}
}

// TestWindowPairs is GraphGAN's docstring example (path [1,0,2,4,2] with
// its terminating back-step 2 dropped, window 2).
func TestWindowPairs(t *testing.T) {
	got := WindowPairs([]int{1, 0, 2, 4}, 2)
	want := [][2]int{{1, 0}, {1, 2}, {0, 1}, {0, 2}, {0, 4}, {2, 1}, {2, 0}, {2, 4}, {4, 0}, {4, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("window pairs %v, want %v", got, want)
	}
	if got := WindowPairs([]int{5, 6, 5}, 2); !reflect.DeepEqual(got, [][2]int{{5, 6}, {6, 5}, {6, 5}, {5, 6}}) {
		t.Errorf("equal nodes not skipped: %v", got)
	}
	if got := WindowPairs([]int{1, 2, 3}, 0); got != nil {
		t.Errorf("window 0: %v", got)
	}
	// Parity signs on a negative path: odd hop distance −1, even +1.
	wk := Walk{Nodes: []int{1, 0, 2, 4}, Signs: []int8{1, -1, 1, -1}}
	for _, p := range wk.Pairs(3) {
		i, j := slices.Index(wk.Nodes, p.U), slices.Index(wk.Nodes, p.V)
		want := int8(1)
		if (i-j)%2 != 0 {
			want = -1
		}
		if p.Sign != want {
			t.Errorf("pair %v at hop distance %d has sign %d, want %d", p, i-j, p.Sign, want)
		}
	}
	if len(wk.Pairs(2)) != 10 {
		t.Errorf("%d signed pairs, want 10", len(wk.Pairs(2)))
	}
}

// signedFromEdges builds symmetric positive and negative adjacencies.
func signedFromEdges(n int, edges [][3]int) (pos, neg *graphs.CSR) {
	var ps, pd, ns, nd []int
	for _, e := range edges {
		if e[2] > 0 {
			ps, pd = append(ps, e[0], e[1]), append(pd, e[1], e[0])
		} else {
			ns, nd = append(ns, e[0], e[1]), append(nd, e[1], e[0])
		}
	}
	return graphs.FromCOO(n, n, ps, pd, nil), graphs.FromCOO(n, n, ns, nd, nil)
}

func TestSignedTree(t *testing.T) {
	// 0 −(+)− 1, 0 −(−)− 2, 1 −(−)− 3, 2 −(−)− 3, 3 −(+)− 4, 4 −(−)− 5.
	pos, neg := signedFromEdges(6, [][3]int{{0, 1, 1}, {0, 2, -1}, {1, 3, -1}, {2, 3, -1}, {3, 4, 1}, {4, 5, -1}})
	w, err := NewSignedWalker(pos, neg, Config{Degree: 3, Paths: 2, MaxLen: 3})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := w.Tree(0)
	if err != nil {
		t.Fatal(err)
	}
	// BFS in adjacency order: 0; 1, 2; 3 (found from 1); 4; 5 is at depth 4 > L.
	if !reflect.DeepEqual(tr.Nodes, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("BFS order %v", tr.Nodes)
	}
	if !reflect.DeepEqual(tr.Parent, []int{-1, 0, 0, 1, 3}) || !reflect.DeepEqual(tr.Depth, []int{0, 1, 1, 2, 3}) {
		t.Errorf("parents %v depths %v", tr.Parent, tr.Depth)
	}
	// Signs: product along the tree path (3 via 1: + then −).
	if !reflect.DeepEqual(tr.Sign, []int8{1, 1, -1, -1, -1}) {
		t.Errorf("signs %v", tr.Sign)
	}
	if tr.ChildLo[0] != 1 || tr.ChildHi[0] != 3 || tr.ChildLo[2] != tr.ChildHi[2] || tr.ChildLo[4] != tr.ChildHi[4] {
		t.Errorf("children ranges lo %v hi %v", tr.ChildLo, tr.ChildHi)
	}
	// A negative tree: signs are (−1)^depth.
	_, negOnly := signedFromEdges(5, [][3]int{{0, 1, -1}, {1, 2, -1}, {2, 3, -1}, {1, 4, -1}})
	wn, err := NewSignedWalker(nil, negOnly, Config{Degree: 3, Paths: 1, MaxLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := wn.Tree(0)
	for k := range tn.Nodes {
		if want := int8(1 - 2*(tn.Depth[k]%2)); tn.Sign[k] != want {
			t.Errorf("negative tree: node %d at depth %d has sign %d", tn.Nodes[k], tn.Depth[k], tn.Sign[k])
		}
	}
	if _, err := w.Tree(6); err == nil || !strings.Contains(err.Error(), "root 6 out of range") {
		t.Errorf("Tree(6): %v", err)
	}
}

// embScores is a fixed score function from deterministic pseudo-random
// embeddings of dimension 4 (the same on every graph of n nodes).
func embScores(n int, seed uint64, scale float64) ScoreFunc {
	r := rand.New(rand.NewPCG(seed, 5))
	emb := make([]float64, 4*n)
	for i := range emb {
		emb[i] = scale * r.NormFloat64()
	}
	return func(cur int, cands []int, out []float64) {
		for j, c := range cands {
			s := 0.0
			for d := 0; d < 4; d++ {
				s += emb[4*cur+d] * emb[4*c+d]
			}
			out[j] = s
		}
	}
}

// tcBoundedSigned is a random signed graph whose degrees are at most d:
// random pairs accepted while both endpoints have room; each edge negative
// with probability pNeg.
func tcBoundedSigned(n, d, tries int, pNeg float64, seed uint64) (pos, neg *graphs.CSR) {
	r := rand.New(rand.NewPCG(seed, 17))
	deg := make([]int, n)
	seen := map[[2]int]bool{}
	var edges [][3]int
	for range tries {
		i, j := r.IntN(n), r.IntN(n)
		if i == j || deg[i] >= d || deg[j] >= d || seen[[2]int{min(i, j), max(i, j)}] {
			continue
		}
		seen[[2]int{min(i, j), max(i, j)}] = true
		deg[i]++
		deg[j]++
		s := 1
		if r.Float64() < pNeg {
			s = -1
		}
		edges = append(edges, [3]int{i, j, s})
	}
	return signedFromEdges(n, edges)
}

// TestWalks checks the walk invariants on random signed graphs: walks start
// at the root, move down tree edges, have at most L hops, stop for the
// recorded reason; discriminator walks never return to the root; signs are
// the tree's.
func TestWalks(t *testing.T) {
	for s := uint64(1); s <= 6; s++ {
		pos, neg := tcBoundedSigned(60, 4, 400, 0.3, s)
		for _, l := range []int{1, 2, 4} {
			cfg := Config{Degree: 4, Paths: 5, MaxLen: l}
			w, err := NewSignedWalker(pos, neg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			src := rand.NewPCG(s, uint64(l))
			for root := 0; root < w.Nodes(); root++ {
				tr, _ := w.Tree(root)
				idx := map[int]int{}
				for k, v := range tr.Nodes {
					idx[v] = k
					if tr.Depth[k] > l {
						t.Fatalf("tree node %d at depth %d > L = %d", v, tr.Depth[k], l)
					}
				}
				for _, forDisc := range []bool{false, true} {
					for _, rule := range []Transition{TransitionPositive, TransitionNegative} {
						wk, err := tr.Walk(src, forDisc, rule, embScores(60, s, 1))
						if err != nil {
							t.Fatal(err)
						}
						if wk.Nodes[0] != root || len(wk.Nodes)-1 > l || len(wk.Signs) != len(wk.Nodes) {
							t.Fatalf("walk %v from %d: bad start or length (L = %d)", wk.Nodes, root, l)
						}
						for k := 1; k < len(wk.Nodes); k++ {
							c := idx[wk.Nodes[k]]
							if tr.Parent[c] != idx[wk.Nodes[k-1]] || tr.Depth[c] != k || wk.Signs[k] != tr.Sign[c] {
								t.Fatalf("walk %v: step %d is not down a tree edge", wk.Nodes, k)
							}
							if forDisc && wk.Nodes[k] == root {
								t.Fatalf("discriminator walk %v returns to the root", wk.Nodes)
							}
						}
						last := idx[wk.Nodes[len(wk.Nodes)-1]]
						switch wk.Stop {
						case StopMaxLen:
							if tr.Depth[last] != l {
								t.Fatalf("walk %v stopped at max length below depth L", wk.Nodes)
							}
						case StopBackStep:
							if tr.Depth[last] >= l || (forDisc && tr.Depth[last] < 2) {
								t.Fatalf("walk %v (forDisc %v) back-stepped at depth %d", wk.Nodes, forDisc, tr.Depth[last])
							}
						case StopDeadEnd:
							hasKids := tr.ChildHi[last] > tr.ChildLo[last]
							parentOK := last != 0 && !(forDisc && tr.Parent[last] == 0)
							if hasKids || parentOK {
								t.Fatalf("walk %v: dead end at a node with candidates", wk.Nodes)
							}
						}
					}
				}
			}
		}
	}
}

// TestTransitions checks the transition rules' probabilities by sampling
// one-hop walks from a root with three children.
func TestTransitions(t *testing.T) {
	pos, _ := signedFromEdges(4, [][3]int{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}})
	w, err := NewSignedWalker(pos, nil, Config{Degree: 3, Paths: 1, MaxLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := w.Tree(0)
	scores := func(cur int, cands []int, out []float64) {
		for j, c := range cands {
			out[j] = 1000 + 0.5*float64(c) // large: must not overflow
		}
	}
	sm := func(x []float64) []float64 { y := slices.Clone(x); walkSoftmax(y); return y }
	posP := sm([]float64{0.5, 1, 1.5})
	negP := sm([]float64{1 - posP[0], 1 - posP[1], 1 - posP[2]})
	for _, tc := range []struct {
		rule Transition
		p    []float64
	}{{TransitionPositive, posP}, {TransitionNegative, negP}} {
		src := rand.NewPCG(1, 2)
		counts := make([]float64, 3)
		const draws = 60000
		for range draws {
			wk, err := tr.Walk(src, false, tc.rule, scores)
			if err != nil {
				t.Fatal(err)
			}
			counts[wk.Nodes[1]-1]++
		}
		for i := range counts {
			sd := math.Sqrt(tc.p[i] * (1 - tc.p[i]) / draws)
			if math.Abs(counts[i]/draws-tc.p[i]) > 5*sd {
				t.Errorf("rule %d: child %d drawn %.4f, want %.4f", tc.rule, i+1, counts[i]/draws, tc.p[i])
			}
		}
	}
	// softmax is shift-invariant; the negative rule favours low scores.
	a, b := sm([]float64{0.07, 0.54, -0.22}), sm([]float64{1000.07, 1000.54, 999.78})
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			t.Errorf("softmax not shift-invariant: %v vs %v", a, b)
		}
	}
	if !(negP[0] > negP[2]) {
		t.Errorf("negative rule %v does not favour the lowest score", negP)
	}
	bad := func(cur int, cands []int, out []float64) { out[0] = math.NaN() }
	if _, err := tr.Walk(rand.NewPCG(1, 1), false, TransitionPositive, bad); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN score: %v", err)
	}
	if _, err := w.NewSampler(Key{}, Transition(7), nil); err == nil {
		t.Error("unknown rule accepted")
	}
}

func TestNewSignedWalkerErrors(t *testing.T) {
	pos, neg := signedFromEdges(4, [][3]int{{0, 1, 1}, {1, 2, -1}})
	ok := Config{Degree: 3, Paths: 3, MaxLen: 4}
	asym := graphs.FromCOO(4, 4, []int{0}, []int{1}, nil)
	both := graphs.FromCOO(4, 4, []int{0, 1}, []int{1, 0}, nil)
	star, _ := signedFromEdges(6, [][3]int{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {1, 2, 1}})
	for _, tc := range []struct {
		pos, neg *graphs.CSR
		cfg      Config
		msg      string
	}{
		{nil, nil, ok, "no positive and no negative"},
		{graphs.FromCOO(4, 5, nil, nil, nil), nil, ok, "4×5"},
		{pos, graphs.FromCOO(5, 5, nil, nil, nil), ok, "positive adjacency has 4 nodes, negative 5"},
		{asym, nil, ok, "not symmetric"},
		{pos, both, ok, "pair (0, 1) is both a positive and a negative edge"},
		{star, nil, ok, "outside the public bound (at most 3 neighbours per node)"},
		{pos, neg, Config{Degree: 0, Paths: 1, MaxLen: 1}, "degree bound 0"},
		{pos, neg, Config{Degree: 3, Paths: 0, MaxLen: 1}, "paths per root 0"},
		{pos, neg, Config{Degree: 3, Paths: 1, MaxLen: 0}, "max path length 0"},
		{pos, neg, Config{Degree: 3, Paths: 1, MaxLen: 30}, "exceeds"},
		{pos, neg, Config{Degree: 3, Paths: 1, MaxLen: 1, Mode: 9}, "unknown degree mode 9"},
	} {
		if _, err := NewSignedWalker(tc.pos, tc.neg, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("error %v, want one containing %q", err, tc.msg)
		}
	}
	// The cap accepts the star and bounds it; on a graph within the bound
	// it is the identity.
	w, err := NewSignedWalker(star, nil, Config{Degree: 3, Paths: 1, MaxLen: 2, Mode: degree.Sample, SampleKey: graphstest.Key(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, mx := degree.Excess(w.Graph(), 3); mx > 3 {
		t.Errorf("capped degree %d", mx)
	}
	pb, nb := tcBoundedSigned(80, 3, 500, 0.4, 9)
	wp, _ := NewSignedWalker(pb, nb, Config{Degree: 3, Paths: 1, MaxLen: 2})
	wc, _ := NewSignedWalker(pb, nb, Config{Degree: 3, Paths: 1, MaxLen: 2, Mode: degree.Sample, SampleKey: graphstest.Key(2)})
	if !reflect.DeepEqual(wp.Graph(), wc.Graph()) {
		t.Error("the cap changed a graph already within the bound")
	}
}

// rootData is everything sampled for one root.
type rootData struct {
	d DiscSample
	g []Walk
}

// nodes is the node set of the root's training subgraph.
func (r rootData) nodes() []int {
	out := r.d.Nodes()
	for _, wk := range r.g {
		out = append(out, wk.Nodes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sampleAll(t *testing.T, w *SignedWalker, key Key, rule Transition, scores ScoreFunc) []rootData {
	t.Helper()
	s, err := w.NewSampler(key, rule, scores)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]rootData, w.Nodes())
	for r := range out {
		d, err := s.Disc(r)
		if err != nil {
			t.Fatal(err)
		}
		g, err := s.Gen(r)
		if err != nil {
			t.Fatal(err)
		}
		out[r] = rootData{d, g}
	}
	return out
}

// walkOccurrences counts, for every node, the training subgraphs containing it.
func walkOccurrences(data []rootData) []int {
	occ := make([]int, len(data))
	for _, r := range data {
		for _, v := range r.nodes() {
			occ[v]++
		}
	}
	return occ
}

// ballOf returns the nodes within distance l of v in the symmetric a.
func ballOf(a *graphs.CSR, v, l int) map[int]bool {
	in := map[int]bool{v: true}
	front := []int{v}
	for d := 0; d < l; d++ {
		var next []int
		for _, u := range front {
			cols, _ := a.Row(u)
			for _, x := range cols {
				if !in[x] {
					in[x] = true
					next = append(next, x)
				}
			}
		}
		front = next
	}
	return in
}

// checkOccurrences asserts Claim 1 on one sampled graph: every node is in
// at most R training subgraphs, and only in those of roots within
// distance L.
func checkOccurrences(t *testing.T, what string, w *SignedWalker, data []rootData) (maxOcc int) {
	t.Helper()
	r, l, g := w.OccurrenceBound(), w.Config().MaxLen, w.Graph()
	occ := walkOccurrences(data)
	for v, c := range occ {
		maxOcc = max(maxOcc, c)
		if c > r {
			t.Fatalf("%s: node %d is in %d training subgraphs, above R = %d", what, v, c, r)
		}
	}
	for root, rd := range data {
		ball := ballOf(g, root, l)
		for _, v := range rd.nodes() {
			if !ball[v] {
				t.Fatalf("%s: subgraph of %d contains %d, farther than L = %d", what, root, v, l)
			}
		}
	}
	return maxOcc
}

// differingRoots returns the roots whose sampled data differ between a and b.
func differingRoots(a, b []rootData) []int {
	var out []int
	for r := range a {
		if !reflect.DeepEqual(a[r], b[r]) {
			out = append(out, r)
		}
	}
	return out
}

// TestOccurrencePublicBound is Claims 1 and 2 for the public bound on
// random signed graphs with degrees ≤ D: occurrences ≤ R on G and on
// G − v, and the training subgraphs that differ between G and G − v are
// those of roots within distance L of v, at most R of them.
func TestOccurrencePublicBound(t *testing.T) {
	worst := 0
	for s := uint64(1); s <= 8; s++ {
		d := 2 + int(s%3)
		l := 1 + int(s%4)
		pos, neg := tcBoundedSigned(150, d, 2000, 0.3, s)
		cfg := Config{Degree: d, Paths: d, MaxLen: l}
		w, err := NewSignedWalker(pos, neg, cfg)
		if err != nil {
			t.Fatal(err)
		}
		key := degree.NewKey(rand.NewPCG(s, 1))
		scores := embScores(150, s, 0.7)
		rule := Transition(s % 2)
		base := sampleAll(t, w, key, rule, scores)
		checkOccurrences(t, "G", w, base)
		r := w.OccurrenceBound()
		for _, v := range []int{0, 7, int(s * 13 % 150)} {
			wv, err := NewSignedWalker(graphs.RemoveNode(pos, v), graphs.RemoveNode(neg, v), cfg)
			if err != nil {
				t.Fatalf("G − %d refused: %v (removal never raises a degree)", v, err)
			}
			rem := sampleAll(t, wv, key, rule, scores)
			checkOccurrences(t, "G − v", wv, rem)
			ball := ballOf(w.Graph(), v, l)
			diff := differingRoots(base, rem)
			for _, root := range diff {
				if !ball[root] {
					t.Fatalf("seed %d, v = %d: the subgraph of root %d, farther than L = %d, changed", s, v, root, l)
				}
			}
			if len(diff) > r {
				t.Fatalf("seed %d, v = %d: %d training subgraphs differ, above R = %d", s, v, len(diff), r)
			}
			worst = max(worst, len(diff))
		}
	}
	if worst < 3 {
		t.Errorf("at most %d subgraphs differed: the test graphs are too sparse to exercise the bound", worst)
	}
}

// TestOccurrenceCap is Claim 1 for the cap on power-law graphs with hubs:
// occurrences ≤ R on cap(G) and on cap(G − v) for hubs and other nodes.
func TestOccurrenceCap(t *testing.T) {
	for s := uint64(1); s <= 4; s++ {
		a := graphstest.PowerLaw(300, 2.2, 6, s)
		if _, mx := degree.Excess(a, 0); mx <= 20 {
			t.Fatalf("power-law graph has max degree %d: no hub", mx)
		}
		cfg := Config{Degree: 3, Paths: 3, MaxLen: 4, Mode: degree.Sample, SampleKey: graphstest.Key(s)}
		for _, rule := range []Transition{TransitionPositive, TransitionNegative} {
			var pos, neg *graphs.CSR
			if rule == TransitionPositive {
				pos = a
			} else {
				neg = a
			}
			w, err := NewSignedWalker(pos, neg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			key := degree.NewKey(rand.NewPCG(s, 3))
			scores := embScores(300, s, 0.5)
			checkOccurrences(t, "cap(G)", w, sampleAll(t, w, key, rule, scores))
			for _, v := range []int{0, 1, 2, 150} { // 0, 1, 2 are the hubs
				rm := func(m *graphs.CSR) *graphs.CSR {
					if m == nil {
						return nil
					}
					return graphs.RemoveNode(m, v)
				}
				wv, err := NewSignedWalker(rm(pos), rm(neg), cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkOccurrences(t, "cap(G − v)", wv, sampleAll(t, wv, key, rule, scores))
			}
		}
	}
}

// TestCapNotStable documents why the cap is the papers' assumption: on a
// raw graph above the bound, removing one node changes the training
// subgraphs of more than R roots, through the chains of swapped edges the
// capacity it frees starts (here a path visited from one end, the
// counterexample in package degree: first with the cap's keyed order
// replaced by the worst one, then with the keys themselves).
func TestCapNotStable(t *testing.T) {
	const n = 40
	// The cap with the order fixed to the path's, from node first: it keeps
	// the edges {first, first+1}, {first+2, first+3}, ... (first = 1: node
	// 0 removed, and every kept edge flips).
	capped := func(first int) *SignedWalker {
		var src, dst []int
		for i := first; i+1 < n; i += 2 {
			src, dst = append(src, i, i+1), append(dst, i+1, i)
		}
		w, err := NewSignedWalker(graphs.FromCOO(n, n, src, dst, nil), nil, Config{Degree: 1, Paths: 1, MaxLen: 2})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	g, gv := capped(0), capped(1) // node 0 removed
	key := degree.NewKey(rand.NewPCG(1, 1))
	diff := differingRoots(sampleAll(t, g, key, TransitionPositive, nil), sampleAll(t, gv, key, TransitionPositive, nil))
	if r := g.OccurrenceBound(); len(diff) <= r {
		t.Fatalf("%d subgraphs differ, want more than R = %d", len(diff), r)
	}
	// With the keyed order a long chain is unlikely but possible: some key
	// among the first 200 gives one on the same path.
	pos, _ := signedFromEdges(n, func() (e [][3]int) {
		for i := 0; i+1 < n; i++ {
			e = append(e, [3]int{i, i + 1, 1})
		}
		return
	}())
	found := 0
	for s := uint64(1); s <= 200 && found == 0; s++ {
		cfg := Config{Degree: 1, Paths: 1, MaxLen: 2, Mode: degree.Sample, SampleKey: graphstest.Key(s)}
		w, err := NewSignedWalker(pos, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wv, err := NewSignedWalker(graphs.RemoveNode(pos, 0), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := differingRoots(sampleAll(t, w, key, TransitionPositive, nil), sampleAll(t, wv, key, TransitionPositive, nil))
		if len(d) > w.OccurrenceBound() {
			found = len(d)
			t.Logf("key %d: %d subgraphs differ, R = %d: %v", s, len(d), w.OccurrenceBound(), d)
		}
	}
	if found == 0 {
		t.Error("no key among 200 makes the keyed cap change more than R subgraphs")
	}
	// The public bound refuses the raw path at D = 1 (degree 2).
	if _, err := NewSignedWalker(pos, nil, Config{Degree: 1, Paths: 1, MaxLen: 2}); err == nil {
		t.Fatal("public bound accepted a path at D = 1")
	}
}

// TestStarNeedsBound shows the occurrence bound needs the degree bound:
// walks on a raw star put its centre into every leaf's training subgraph,
// far above R_{3,L}; at the public bound D = n − 1 that is within
// R_{D,L}.
func TestStarNeedsBound(t *testing.T) {
	const n = 200
	var e [][3]int
	for i := 1; i < n; i++ {
		e = append(e, [3]int{0, i, 1})
	}
	pos, _ := signedFromEdges(n, e)
	w, err := NewSignedWalker(pos, nil, Config{Degree: n - 1, Paths: 3, MaxLen: 2})
	if err != nil {
		t.Fatal(err)
	}
	occ := walkOccurrences(sampleAll(t, w, degree.NewKey(rand.NewPCG(2, 2)), TransitionPositive, nil))
	r3, _ := ReceptiveField(3, 2)
	if occ[0] != n || occ[0] <= r3 {
		t.Errorf("centre in %d subgraphs, want all %d (> R_{3,2} = %d)", occ[0], n, r3)
	}
	if occ[0] > w.OccurrenceBound() {
		t.Errorf("centre in %d subgraphs, above R_{D,L} = %d", occ[0], w.OccurrenceBound())
	}
}

// TestSampler checks that a root's sample depends only on the key and the
// root: repeatable, independent of the other roots sampled, different for
// another key; and the discriminator element's shape.
func TestSampler(t *testing.T) {
	pos, neg := tcBoundedSigned(100, 3, 1000, 0.5, 4)
	w, err := NewSignedWalker(pos, neg, Config{Degree: 3, Paths: 3, MaxLen: 3})
	if err != nil {
		t.Fatal(err)
	}
	key := degree.NewKey(rand.NewPCG(9, 9))
	all := sampleAll(t, w, key, TransitionNegative, embScores(100, 1, 1))
	s, _ := w.NewSampler(key, TransitionNegative, embScores(100, 1, 1))
	batch, err := s.DiscBatch([]int{57, 3, 57, 99})
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range []int{57, 3, 57, 99} {
		if !reflect.DeepEqual(batch[k], all[r].d) {
			t.Errorf("root %d sampled alone differs from the full pass", r)
		}
	}
	other := sampleAll(t, w, degree.NewKey(rand.NewPCG(9, 10)), TransitionNegative, embScores(100, 1, 1))
	if len(differingRoots(all, other)) < 10 {
		t.Error("another key gives (almost) the same samples")
	}
	g := w.Graph()
	aborted := 0
	for r, rd := range all {
		d := rd.d
		if d.Root != r {
			t.Fatalf("root %d", d.Root)
		}
		if d.Aborted {
			aborted++
			if d.Real != nil || d.Fakes != nil {
				t.Fatalf("aborted root %d has pairs", r)
			}
			continue
		}
		cols, vals := g.Row(r)
		if !slices.Equal(d.Real, cols) || len(d.Fakes) != 3 || len(d.FakeSign) != 3 {
			t.Fatalf("root %d: real %v (neighbours %v), fakes %v", r, d.Real, cols, d.Fakes)
		}
		for k := range vals {
			if float64(d.RealSign[k]) != vals[k] {
				t.Fatalf("root %d: real signs %v, edge signs %v", r, d.RealSign, vals)
			}
		}
		if len(rd.g) != 3 {
			t.Fatalf("root %d: %d generator walks", r, len(rd.g))
		}
	}
	if aborted == 0 || aborted == len(all) {
		t.Errorf("%d of %d roots aborted", aborted, len(all))
	}
	if _, err := s.Disc(100); err == nil {
		t.Error("Disc(100) on 100 nodes: want an error")
	}
}

// TestOccurrenceRealData checks Claims 1 and 2 on Bitcoin-Alpha: the
// paper's N = 3, L = 4 (R = 121) with the cap, on G and on G without its
// largest hub and other nodes, for the positive and the negative subgraph;
// the public bound refuses the raw graph at D = 3 and proves both claims
// at D = its largest degree with L = 1.
func TestOccurrenceRealData(t *testing.T) {
	g, err := graphio.LoadSigned(filepath.Join(testutil.DataDir(t), "signed", "bitcoin_alpha"))
	if err != nil {
		t.Fatal(err)
	}
	var be *degree.BoundError
	if _, err := NewSignedWalker(g.Adj, nil, Config{Degree: 3, Paths: 3, MaxLen: 4}); !errors.As(err, &be) {
		t.Fatalf("public bound at D = 3: %v", err)
	}
	// hubOf returns the node of largest degree in m and that degree.
	hubOf := func(m *graphs.CSR) (int, int) {
		degs := m.Degrees()
		h := 0
		for v, d := range degs {
			if d > degs[h] {
				h = v
			}
		}
		return h, degs[h]
	}
	scores := embScores(g.N, 1, 0.3)
	key := degree.NewKey(rand.NewPCG(11, 11))
	cfg := Config{Degree: 3, Paths: 3, MaxLen: 4, Mode: degree.Sample, SampleKey: graphstest.Key(5)}
	for _, ph := range []struct {
		name     string
		pos, neg *graphs.CSR
		rule     Transition
	}{{"G+", g.Adj, nil, TransitionPositive}, {"G−", nil, g.Neg, TransitionNegative}} {
		w, err := NewSignedWalker(ph.pos, ph.neg, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if w.OccurrenceBound() != 121 {
			t.Fatalf("R = %d, want 121", w.OccurrenceBound())
		}
		raw := ph.pos
		if raw == nil {
			raw = ph.neg
		}
		hub, _ := hubOf(raw)
		degs := raw.Degrees()
		base := sampleAll(t, w, key, ph.rule, scores)
		mx := checkOccurrences(t, ph.name, w, base)
		t.Logf("%s, cap: at most %d subgraphs contain one node (R = 121)", ph.name, mx)
		for _, v := range []int{hub, 1, g.N / 2} {
			rm := func(m *graphs.CSR) *graphs.CSR {
				if m == nil {
					return nil
				}
				return graphs.RemoveNode(m, v)
			}
			wv, err := NewSignedWalker(rm(ph.pos), rm(ph.neg), cfg)
			if err != nil {
				t.Fatal(err)
			}
			rem := sampleAll(t, wv, key, ph.rule, scores)
			checkOccurrences(t, ph.name+" − v", wv, rem)
			t.Logf("%s − %d (raw degree %d), cap: %d subgraphs differ (no proven bound with the cap)",
				ph.name, v, degs[v], len(differingRoots(base, rem)))
		}
	}
	// Public bound at the largest positive degree, L = 1: R = 1 + D.
	hub, dmax := hubOf(g.Adj)
	pcfg := Config{Degree: dmax, Paths: 3, MaxLen: 1}
	w, err := NewSignedWalker(g.Adj, nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	base := sampleAll(t, w, key, TransitionPositive, scores)
	checkOccurrences(t, "G+ public", w, base)
	for _, v := range []int{hub, 1, g.N / 2} {
		wv, err := NewSignedWalker(graphs.RemoveNode(g.Adj, v), nil, pcfg)
		if err != nil {
			t.Fatal(err)
		}
		rem := sampleAll(t, wv, key, TransitionPositive, scores)
		checkOccurrences(t, "G+ − v public", wv, rem)
		ball := ballOf(g.Adj, v, 1)
		diff := differingRoots(base, rem)
		for _, r := range diff {
			if !ball[r] {
				t.Fatalf("public bound: root %d outside the ball of %d changed", r, v)
			}
		}
		if len(diff) > w.OccurrenceBound() {
			t.Fatalf("public bound: %d subgraphs differ, above R = %d", len(diff), w.OccurrenceBound())
		}
	}
}

// TestDegreeNone: without a degree bound the walker takes any graph (a
// star far above Degree, with a depth whose R_{D,L} would overflow), has
// no occurrence bound, and walks the raw graph.
func TestDegreeNone(t *testing.T) {
	const n = 300
	var e [][3]int
	for i := 1; i < n; i++ {
		e = append(e, [3]int{0, i, 1})
	}
	pos, _ := signedFromEdges(n, e)
	cfg := Config{Degree: 3, Paths: 2, MaxLen: 40, Mode: degree.None}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.OccurrenceBound(); err == nil {
		t.Error("an occurrence bound without a degree bound")
	}
	w, err := NewSignedWalker(pos, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.OccurrenceBound() != 0 || w.Graph().NNZ() != pos.NNZ() || cfg.Mode.String() != "none" {
		t.Fatalf("R = %d, %d of %d entries kept", w.OccurrenceBound(), w.Graph().NNZ(), pos.NNZ())
	}
	tr, err := w.Tree(5)
	if err != nil || len(tr.Nodes) != n {
		t.Fatalf("tree from a leaf has %d nodes (%v), want all %d", len(tr.Nodes), err, n)
	}
}
