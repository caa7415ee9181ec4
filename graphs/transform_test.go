package graphs

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// tcRandomCSR returns a random n×n CSR with about p·n² entries (self-loops
// allowed), weighted with values in (0, 2] when weighted is set.
func tcRandomCSR(n int, p float64, weighted bool, seed uint64) *CSR {
	r := rand.New(rand.NewPCG(seed, 1))
	var src, dst []int
	var vals []float64
	if weighted {
		vals = []float64{}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if r.Float64() < p {
				src, dst = append(src, i), append(dst, j)
				if weighted {
					vals = append(vals, 2-2*r.Float64()+1e-3)
				}
			}
		}
	}
	return FromCOO(n, n, src, dst, vals)
}

func tcMust(g *Graph, err error) *Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// tcImmutable runs f and fails if it changed a.
func tcImmutable(t *testing.T, what string, a *CSR, f func()) {
	t.Helper()
	before := a.Clone()
	f()
	if !tcEqualCSR(before, a) {
		t.Fatalf("%s mutated its input", what)
	}
}

func TestSymmetrizeAndLoops(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			n := 9
			a := tcRandomCSR(n, 0.25, weighted, seed)
			d := tcDense(a)
			var s, rl, al1, al3 *CSR
			tcImmutable(t, "transforms", a, func() {
				s = Symmetrize(a)
				rl = RemoveSelfLoops(a)
				al1 = AddSelfLoops(a, 1)
				al3 = AddSelfLoops(a, 3)
			})
			for _, m := range []*CSR{s, rl, al1, al3} {
				tcCheckCanonical(t, "result", m)
			}
			if (s.Data != nil) != weighted || (rl.Data != nil) != weighted || (al1.Data != nil) != weighted || al3.Data == nil {
				t.Fatal("weightedness not preserved as documented")
			}
			ds, drl, d1, d3 := tcDense(s), tcDense(rl), tcDense(al1), tcDense(al3)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					x, y := d[i*n+j], d[j*n+i]
					want := math.Max(x, y) // entries are positive; absent = 0
					if ds[i*n+j] != want {
						t.Fatalf("Symmetrize[%d,%d] = %v, want %v", i, j, ds[i*n+j], want)
					}
					wrl, w1, w3 := x, x, x
					if i == j {
						wrl, w1, w3 = 0, 1, 3
					}
					if drl[i*n+j] != wrl || d1[i*n+j] != w1 || d3[i*n+j] != w3 {
						t.Fatalf("loops[%d,%d]: remove %v add1 %v add3 %v (A=%v)", i, j, drl[i*n+j], d1[i*n+j], d3[i*n+j], x)
					}
				}
			}
			if !IsSymmetric(s) {
				t.Fatal("Symmetrize result not symmetric")
			}
		}
	}
	asym := FromCOO(3, 3, []int{0}, []int{1}, nil)
	if IsSymmetric(asym) || !IsSymmetric(Symmetrize(asym)) {
		t.Fatal("IsSymmetric wrong on a single directed edge")
	}
	wasym := FromCOO(2, 2, []int{0, 1}, []int{1, 0}, []float64{1, 2})
	if IsSymmetric(wasym) {
		t.Fatal("IsSymmetric ignores values")
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

func TestHoldOutEdges(t *testing.T) {
	g := tcGraph(200, 2, 6, 3)
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

func TestRemoveEdgesBetween(t *testing.T) {
	a := tcRandomCSR(12, 0.4, true, 8)
	setA, setB := []int{0, 3, 5, 7}, []int{1, 3, 9, 11, 40}
	var b *CSR
	tcImmutable(t, "RemoveEdgesBetween", a, func() { b = RemoveEdgesBetween(a, setA, setB) })
	tcCheckCanonical(t, "cut", b)
	in := func(s []int, i int) bool { return slices.Contains(s, i) }
	da, db := tcDense(a), tcDense(b)
	for i := 0; i < 12; i++ {
		for j := 0; j < 12; j++ {
			want := da[i*12+j]
			if (in(setA, i) && in(setB, j)) || (in(setB, i) && in(setA, j)) {
				want = 0
			}
			if db[i*12+j] != want {
				t.Fatalf("(%d,%d) = %v, want %v", i, j, db[i*12+j], want)
			}
		}
	}
}

func TestSplitEdgesAt(t *testing.T) {
	a := tcRandomCSR(12, 0.4, true, 9)
	nodes := []int{2, 5, 6, 40}
	var touch, rest *CSR
	tcImmutable(t, "SplitEdgesAt", a, func() { touch, rest = SplitEdgesAt(a, nodes) })
	tcCheckCanonical(t, "touching", touch)
	tcCheckCanonical(t, "rest", rest)
	da, dt, dr := tcDense(a), tcDense(touch), tcDense(rest)
	for i := 0; i < 12; i++ {
		for j := 0; j < 12; j++ {
			k := i*12 + j
			hit := slices.Contains(nodes, i) || slices.Contains(nodes, j)
			if hit && (dt[k] != da[k] || dr[k] != 0) || !hit && (dr[k] != da[k] || dt[k] != 0) {
				t.Fatalf("(%d,%d): A=%v touching=%v rest=%v", i, j, da[k], dt[k], dr[k])
			}
		}
	}
}

func TestInducedSubgraph(t *testing.T) {
	// 5 nodes; path 0-1-2-3-4 plus 0-4, a negative edge 1-3.
	adj := Symmetrize(FromCOO(5, 5, []int{0, 1, 2, 3, 0}, []int{1, 2, 3, 4, 4}, nil))
	neg := Symmetrize(FromCOO(5, 5, []int{1}, []int{3}, nil))
	sparseX := FromCOO(5, 3, []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 0, 1}, []float64{1, 2, 3, 4, 5})
	base := &Graph{Name: "toy", N: 5, Adj: adj, Neg: neg, Labels: []int{0, 1, 0, 1, -1}, NumClasses: 2,
		Split:      Split{Train: []int{0, 1}, Val: []int{2}, Test: []int{3}},
		MaskSplits: []Split{{Train: []int{4, 3}, Test: []int{0}}},
	}
	nodes := []int{4, 1, 3, 0}
	for _, sparse := range []bool{false, true} {
		g := *base
		if sparse {
			g.X = &Features{N: 5, F: 3, Sparse: sparseX}
		} else {
			g.X = &Features{N: 5, F: 3, Dense: (&Features{N: 5, F: 3, Sparse: sparseX}).ToDense()}
		}
		before := tcDense(g.Adj)
		sub, old2new := InducedSubgraph(&g, nodes)
		if !slices.Equal(tcDense(g.Adj), before) {
			t.Fatal("input mutated")
		}
		if !slices.Equal(old2new, []int{3, 1, -1, 2, 0}) {
			t.Fatalf("old2new = %v", old2new)
		}
		if sub.N != 4 || sub.Name != "toy" || sub.NumClasses != 2 || sub.X.IsSparse() != sparse {
			t.Fatalf("header %+v", sub)
		}
		if !slices.Equal(sub.Labels, []int{-1, 1, 1, 0}) {
			t.Fatalf("labels %v", sub.Labels)
		}
		tcCheckCanonical(t, "sub adj", sub.Adj)
		dAdj, dSub := tcDense(adj), tcDense(sub.Adj)
		dNeg, dSubNeg := tcDense(neg), tcDense(sub.Neg)
		xFull, xSub := g.X.ToDense(), sub.X.ToDense()
		for a, i := range nodes {
			for b, j := range nodes {
				if dSub[a*4+b] != dAdj[i*5+j] || dSubNeg[a*4+b] != dNeg[i*5+j] {
					t.Fatalf("sub (%d,%d) ≠ orig (%d,%d)", a, b, i, j)
				}
			}
			if !slices.Equal(xSub[a*3:a*3+3], xFull[i*3:i*3+3]) {
				t.Fatalf("features of %d not carried", i)
			}
		}
		want := Split{Train: []int{1, 3}, Val: nil, Test: []int{2}}
		if !slices.Equal(sub.Split.Train, want.Train) || len(sub.Split.Val) != 0 || !slices.Equal(sub.Split.Test, want.Test) {
			t.Fatalf("split %+v", sub.Split)
		}
		if len(sub.MaskSplits) != 1 || !slices.Equal(sub.MaskSplits[0].Train, []int{0, 2}) || !slices.Equal(sub.MaskSplits[0].Test, []int{3}) {
			t.Fatalf("mask splits %+v", sub.MaskSplits)
		}
	}
	for _, bad := range [][]int{{0, 0}, {5}, {-1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("nodes %v did not panic", bad)
				}
			}()
			InducedSubgraph(base, bad)
		}()
	}
}

func TestWithAdj(t *testing.T) {
	g := tcGraph(20, 2, 2, 1)
	old := g.Adj
	h := g.WithAdj(RemoveSelfLoops(AddSelfLoops(g.Adj, 1)))
	if g.Adj != old || h.Adj == old || h.X != g.X || h.N != g.N || !tcEqualCSR(h.Adj, old) {
		t.Fatal("WithAdj must shallow-copy and replace only Adj")
	}
}

func TestUndirectedEdges(t *testing.T) {
	cases := []struct {
		name     string
		src, dst []int
		want     int
	}{
		{"both directions count once", []int{0, 1, 1, 2}, []int{1, 0, 2, 1}, 2},
		{"one direction only", []int{0, 2}, []int{1, 1}, 2},
		{"mixed", []int{0, 1, 0, 2}, []int{1, 0, 2, 3}, 3},
		{"self-loop once", []int{1, 1, 0}, []int{1, 2, 1}, 3},
		{"empty", nil, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := FromCOO(4, 4, tc.src, tc.dst, nil)
			if got := a.UndirectedEdges(); got != tc.want {
				t.Errorf("UndirectedEdges() = %d, want %d", got, tc.want)
			}
		})
	}
}
