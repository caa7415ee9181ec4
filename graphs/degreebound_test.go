package graphs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func tcKey(s uint64) PairKey {
	var k PairKey
	r := rand.New(rand.NewPCG(s, 77))
	for i := range k {
		k[i] = byte(r.Uint32())
	}
	return k
}

// tcPowerLaw is a Chung–Lu graph with expected degrees ∝ (i+1)^(−1/(γ−1)),
// scaled to the given mean (hubs of degree ≫ mean): symmetric, no
// self-loops.
func tcPowerLaw(n int, gamma, mean float64, seed uint64) *CSR {
	r := rand.New(rand.NewPCG(seed, 91))
	w := make([]float64, n)
	sum := 0.0
	for i := range w {
		w[i] = math.Pow(float64(i+1), -1/(gamma-1))
		sum += w[i]
	}
	scale := mean * float64(n) / sum
	for i := range w {
		w[i] *= scale
	}
	var src, dst []int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < math.Min(1, w[i]*w[j]/(mean*float64(n))) {
				src, dst = append(src, i, j), append(dst, j, i)
			}
		}
	}
	return FromCOO(n, n, src, dst, nil)
}

// tcRandomDirected has every ordered pair with probability p.
func tcRandomDirected(n int, p float64, seed uint64) *CSR {
	r := rand.New(rand.NewPCG(seed, 93))
	var src, dst []int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && r.Float64() < p {
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	return FromCOO(n, n, src, dst, nil)
}

func tcRow(m *CSR, i int) []int {
	c, _ := m.Row(i)
	return append([]int(nil), c...)
}

func TestSampleOutDegree(t *testing.T) {
	g := CSBM(CSBMConfig{Nodes: 400, Classes: 2, Features: 1, AvgDegree: 12, Homophily: 0.5, Signal: 0}, 3)
	a := g.Adj
	for _, d := range []int{-1, 0, 1, 5, 12, 1000} {
		var b *CSR
		tcImmutable(t, "SampleOutDegree", a, func() { b = SampleOutDegree(a, d, tcKey(11)) })
		tcCheckCanonical(t, "sampled", b)
		for i := 0; i < a.Rows; i++ {
			orig, _ := a.Row(i)
			got, _ := b.Row(i)
			if len(got) != min(len(orig), max(d, 0)) {
				t.Fatalf("d=%d row %d keeps %d of %d", d, i, len(got), len(orig))
			}
			for _, j := range got {
				if _, ok := slices.BinarySearch(orig, j); !ok {
					t.Fatalf("d=%d row %d gained entry %d", d, i, j)
				}
			}
		}
		if !tcEqualCSR(b, SampleOutDegree(a, d, tcKey(11))) {
			t.Fatal("not a function of the key")
		}
		if d == 5 {
			if tcEqualCSR(b, SampleOutDegree(a, d, tcKey(12))) {
				t.Fatal("different keys gave the same sample")
			}
			if IsSymmetric(b) {
				t.Fatal("sampled graph unexpectedly symmetric (it must not be re-symmetrised)")
			}
		}
	}
	// The last row is bounded too (ProGAP's code skips it).
	star := FromCOO(3, 3, []int{2, 2, 0}, []int{0, 1, 2}, nil)
	if b := SampleOutDegree(star, 1, tcKey(1)); b.Indptr[3]-b.Indptr[2] != 1 {
		t.Fatal("last row not bounded")
	}
	// Weights travel with their entries.
	w := FromCOO(1, 6, []int{0, 0, 0, 0, 0, 0}, []int{0, 1, 2, 3, 4, 5}, []float64{10, 11, 12, 13, 14, 15})
	b := SampleOutDegree(w, 3, tcKey(5))
	for k, j := range b.Indices {
		if b.Data[k] != float64(10+j) {
			t.Fatal("weight separated from its column")
		}
	}
	// Uniformity over keys: each of 10 entries is kept with probability 3/10.
	row := FromCOO(1, 10, make([]int, 10), tcRange(10), nil)
	counts := make([]int, 10)
	const trials = 4000
	for s := uint64(0); s < trials; s++ {
		for _, j := range SampleOutDegree(row, 3, tcKey(s)).Indices {
			counts[j]++
		}
	}
	for j, c := range counts {
		if f := float64(c) / trials; math.Abs(f-0.3) > 0.04 {
			t.Fatalf("entry %d kept with frequency %.3f, want 0.3", j, f)
		}
	}
}

// TestSampleOutDegreeNodeRemoval checks SampleOutDegree's proven stability
// statement on 120 random graphs (power-law, Erdős–Rényi, directed) for
// every node v: sampling G − v gives the sample of G with v's row and
// column emptied, plus exactly one promoted entry in each row j ≠ v that
// has more than d entries and kept v, and nothing else.
func TestSampleOutDegreeNodeRemoval(t *testing.T) {
	graphsSeen, promotions := 0, 0
	for s := uint64(0); s < 120; s++ {
		var a *CSR
		var kind string
		switch s % 3 {
		case 0:
			a, kind = tcPowerLaw(60, 2.2, 5, s), "power-law"
		case 1:
			a, kind = tcRandomDirected(40, 0.15, s), "directed"
		default:
			a, kind = CSBM(CSBMConfig{Nodes: 50, Classes: 2, Features: 1, AvgDegree: 6, Homophily: 0.7, Signal: 0}, s).Adj, "csbm"
		}
		d := []int{1, 2, 3, 5}[s%4]
		key := tcKey(1000 + s)
		base := SampleOutDegree(a, d, key)
		graphsSeen++
		for v := 0; v < a.Rows; v++ {
			nb := SampleOutDegree(RemoveNode(a, v), d, key)
			if c := tcRow(nb, v); len(c) != 0 {
				t.Fatalf("%s seed %d: removed node %d keeps row %v", kind, s, v, c)
			}
			for j := 0; j < a.Rows; j++ {
				if j == v {
					continue
				}
				before := slices.DeleteFunc(tcRow(base, j), func(i int) bool { return i == v })
				after := tcRow(nb, j)
				keptV := base.HasEntry(j, v)
				deg := a.Indptr[j+1] - a.Indptr[j]
				if !(keptV && deg > d) {
					if !slices.Equal(before, after) {
						t.Fatalf("%s seed %d d=%d v=%d: row %d changed %v → %v without having kept v", kind, s, d, v, j, before, after)
					}
					continue
				}
				// Exactly one promoted entry, taken from A's row j.
				var added []int
				for _, i := range after {
					if !slices.Contains(before, i) {
						added = append(added, i)
					}
				}
				for _, i := range before {
					if !slices.Contains(after, i) {
						t.Fatalf("%s seed %d v=%d: row %d lost entry %d", kind, s, v, j, i)
					}
				}
				if len(added) != 1 || !a.HasEntry(j, added[0]) || added[0] == v {
					t.Fatalf("%s seed %d v=%d: row %d gained %v, want one promoted out-neighbour", kind, s, v, j, added)
				}
				promotions++
			}
		}
	}
	if graphsSeen < 100 || promotions == 0 {
		t.Fatalf("property exercised on %d graphs with %d promotions", graphsSeen, promotions)
	}
}

// TestCheckOutDegree: the public-bound mode refuses inputs above the bound
// and its universe is closed under node removal.
func TestCheckOutDegree(t *testing.T) {
	a := tcPowerLaw(80, 2.1, 4, 7)
	_, mx := OutDegreeExcess(a, 0)
	if err := CheckOutDegree(a, mx); err != nil {
		t.Fatal(err)
	}
	err := CheckOutDegree(a, mx-1)
	var be *BoundError
	if !errors.As(err, &be) {
		t.Fatalf("above the bound: err = %v, want a *BoundError", err)
	}
	tcWantErr(t, err, "outside the public bound", fmt.Sprintf("at most %d out-neighbours", mx-1))
	if CheckOutDegree(a, -1) == nil {
		t.Fatal("negative bound accepted")
	}
	for v := 0; v < a.Rows; v++ {
		if err := CheckOutDegree(RemoveNode(a, v), mx); err != nil {
			t.Fatalf("G − %d left the universe: %v", v, err)
		}
	}
}

// TestBoundRefusalNamesOnlyTheBound: a refusal by a public bound is the
// same text for every input outside the bound, whatever its largest degree
// and however many nodes exceed the bound (both private statistics), and
// it never contains them. Inputs: stars with hubs of 6 to 40 leaves and 1 to
// 4 hubs, at bound D = 5 (out-degrees via CheckOutDegree, degrees of the
// walk graph via NewSignedWalker).
func TestBoundRefusalNamesOnlyTheBound(t *testing.T) {
	const d = 5
	stars := func(hubs, leaves int) *CSR {
		n := hubs * (leaves + 1)
		var src, dst []int
		for h := 0; h < hubs; h++ {
			c := h * (leaves + 1)
			for l := 1; l <= leaves; l++ {
				src, dst = append(src, c, c+l), append(dst, c+l, c)
			}
		}
		return FromCOO(n, n, src, dst, nil)
	}
	var outText, walkText string
	for _, tc := range []struct{ hubs, leaves int }{{1, 6}, {1, 40}, {4, 6}, {3, 23}} {
		a := stars(tc.hubs, tc.leaves)
		cnt, mx := OutDegreeExcess(a, d)
		if cnt != tc.hubs || mx != tc.leaves {
			t.Fatalf("stars(%d, %d): %d above %d, largest %d", tc.hubs, tc.leaves, cnt, d, mx)
		}
		errOut := CheckOutDegree(a, d)
		_, errWalk := NewSignedWalker(a, nil, WalkConfig{Degree: d, Paths: 1, MaxLen: 1})
		for _, err := range []error{errOut, errWalk} {
			var be *BoundError
			if !errors.As(err, &be) {
				t.Fatalf("stars(%d, %d): err = %v, want a *BoundError", tc.hubs, tc.leaves, err)
			}
			msg := err.Error()
			if strings.Contains(msg, fmt.Sprint(tc.leaves)) || strings.Contains(msg, "largest") || strings.Contains(msg, "node(s)") {
				t.Errorf("stars(%d, %d): refusal %q names a private statistic", tc.hubs, tc.leaves, msg)
			}
		}
		if outText == "" {
			outText, walkText = errOut.Error(), errWalk.Error()
		}
		if errOut.Error() != outText || errWalk.Error() != walkText {
			t.Errorf("stars(%d, %d): refusals %q, %q differ from %q, %q: they depend on the input", tc.hubs, tc.leaves, errOut, errWalk, outText, walkText)
		}
	}
}

func TestRemoveNodeAndEntry(t *testing.T) {
	a := FromCOO(4, 4, []int{0, 1, 1, 2, 3, 0}, []int{1, 0, 2, 1, 0, 3}, nil)
	b := RemoveNode(a, 1)
	if b.HasEntry(0, 1) || b.HasEntry(1, 0) || b.HasEntry(1, 2) || b.HasEntry(2, 1) || !b.HasEntry(3, 0) || !b.HasEntry(0, 3) {
		t.Fatalf("RemoveNode(1): %v", tcDense(b))
	}
	if b.Rows != 4 || b.Cols != 4 {
		t.Fatal("RemoveNode changed the shape")
	}
	c := RemoveEntry(a, 0, 1, false)
	if c.HasEntry(0, 1) || !c.HasEntry(1, 0) || c.NNZ() != a.NNZ()-1 {
		t.Fatal("RemoveEntry directed")
	}
	c = RemoveEntry(a, 0, 1, true)
	if c.HasEntry(0, 1) || c.HasEntry(1, 0) || c.NNZ() != a.NNZ()-2 {
		t.Fatal("RemoveEntry undirected")
	}
}

// TestGreedyProjectionCascades documents why the stable-ordering greedy
// projection (Day, Li & Lyu 2016; BoundDegreeSymmetric with a random order)
// is not used for node-level sensitivity: on a path visited from one end
// with D = 1, removing the first node flips every edge.
func TestGreedyProjectionCascades(t *testing.T) {
	const n = 41
	var pairs []pair
	for i := 0; i+1 < n; i++ {
		pairs = append(pairs, pair{i, i + 1, 1})
	}
	g := greedyDegreeBound(n, pairs, 1, false)
	h := greedyDegreeBound(n, pairs[1:], 1, false) // node 0 removed
	changed := 0
	for _, p := range pairs[1:] {
		if g.HasEntry(p.i, p.j) != h.HasEntry(p.i, p.j) {
			changed++
		}
	}
	if changed != n-2 {
		t.Fatalf("%d of %d remaining edges changed, want all (the chain runs to the end)", changed, n-2)
	}
}

// TestSampleOutDegreeSpread shows the spread that makes sampling unsound
// for raw graphs: node v with 200 neighbours u of degree 101 (v and the
// same 100 nodes w). At D = 100 about 200·100/101 of the u's kept v, and
// each of them enters one more w row when v is removed.
func TestSampleOutDegreeSpread(t *testing.T) {
	const nu, nw, d = 200, 100, 100
	v := 0
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	for u := 1; u <= nu; u++ {
		add(v, u)
		for w := 0; w < nw; w++ {
			add(u, 1+nu+w)
		}
	}
	a := FromCOO(1+nu+nw, 1+nu+nw, src, dst, nil)
	base := SampleOutDegree(a, d, tcKey(3))
	nb := SampleOutDegree(RemoveNode(a, v), d, tcKey(3))
	added := 0
	for u := 1; u <= nu; u++ {
		added += len(tcRow(nb, u)) - len(slices.DeleteFunc(tcRow(base, u), func(i int) bool { return i == v }))
	}
	if added < 180 {
		t.Fatalf("%d rows gained an entry, want ≈ 198", added)
	}
}

func TestHoldOutEdges(t *testing.T) {
	g := CSBM(CSBMConfig{Nodes: 200, Classes: 2, Features: 4, AvgDegree: 6, Homophily: 0.8, Signal: 1}, 3)
	h, err := HoldOutEdges(g, 0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	total := g.Adj.NNZ() / 2
	if nt := h.EdgeTest.NNZ(); nt != int(0.2*float64(total)+0.5) || nt+h.EdgeTrain.NNZ() != total || h.Adj.NNZ() != 2*h.EdgeTrain.NNZ() {
		t.Fatalf("held out %d, kept %d of %d edges (adjacency %d entries)", nt, h.EdgeTrain.NNZ(), total, h.Adj.NNZ())
	}
	for i := 0; i < g.N; i++ {
		cols, _ := h.EdgeTest.Row(i)
		for _, j := range cols {
			if h.Adj.HasEntry(i, j) || h.Adj.HasEntry(j, i) || !g.Adj.HasEntry(i, j) {
				t.Fatalf("held-out edge {%d,%d} still in the training adjacency or not an edge of g", i, j)
			}
		}
	}
	if _, err := HoldOutEdges(g, 1, 7); err == nil {
		t.Error("a test fraction of 1 was accepted")
	}
}
