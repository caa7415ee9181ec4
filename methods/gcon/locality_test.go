package gcon

import (
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
)

// TestPrivateInferenceLocality is unit test 12: changing an edge not
// incident to v leaves v's one-hop features, hence its prediction,
// bit-identical.
func TestPrivateInferenceLocality(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const k = 3
	for trial := 0; trial < 40; trial++ {
		n := 6 + r.IntN(20)
		e := randomEdges(r, n, 0.3)
		x := unitRows(r, n, k)
		steps := [][]int{{2}, {0, 2}, {Inf}, {1, 5}}[r.IntN(4)]
		alphaI := r.Float64()
		z, err := OneHop(Transition(adjacency(n, e)), x, k, alphaI, steps)
		if err != nil {
			t.Fatal(err)
		}
		u := r.IntN(n)
		v := (u + 1 + r.IntN(n-1)) % n
		z2, _ := OneHop(Transition(adjacency(n, toggled(e, edge{min(u, v), max(u, v)}))), x, k, alphaI, steps)
		d := k * len(steps)
		for w := 0; w < n; w++ {
			if w == u || w == v {
				continue
			}
			for j := 0; j < d; j++ {
				if z[w*d+j] != z2[w*d+j] {
					t.Fatalf("node %d's inference features changed when edge (%d,%d) toggled", w, u, v)
				}
			}
		}
		// The closed form of §3.6 for a node v of degree k_v.
		at := Transition(adjacency(n, e))
		w := r.IntN(n)
		cols, _ := at.Row(w)
		kv := float64(len(cols) - 1)
		for j := 0; j < k; j++ {
			want := (alphaI + (1-alphaI)/(kv+1)) * x[w*k+j]
			for _, c := range cols {
				if c != w {
					want += (1 - alphaI) / (kv + 1) * x[c*k+j]
				}
			}
			for b, m := range steps {
				got := z[w*d+b*k+j] * float64(len(steps))
				exp := want
				if m == 0 {
					exp = x[w*k+j]
				}
				if d := got - exp; d > 1e-12 || d < -1e-12 {
					t.Fatalf("one-hop row %d = %g, want %g", w, got, exp)
				}
			}
		}
	}
}

// TestPublicTestGraphSeparation: with --inference public, training sees no
// edge touching a validation or test node, inference sees only such edges
// (the public test graph), and together they are the whole graph.
func TestPublicTestGraphSeparation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 30
	a := adjacency(n, randomEdges(r, n, 0.2))
	g := &graphs.Graph{N: n, Adj: a, Split: graphs.Split{Train: []int{0, 1, 2, 3}, Val: []int{4, 5, 6}, Test: []int{7, 8, 9, 10}}}
	eval := map[int]bool{}
	for _, i := range append(append([]int{}, g.Split.Val...), g.Split.Test...) {
		eval[i] = true
	}
	ctx := &methods.Context{Graph: g, Level: methods.Edge, Epsilon: 1}
	m := &GCON{cfg: Config{Inference: "public"}}
	tc, at, err := m.graphsFor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := Delta(ctx); tc.Delta != want || tc.DeltaRule != methods.DeltaGiven {
		t.Errorf("δ = %g (%s), want the whole graph's %g", tc.Delta, tc.DeltaRule, want)
	}
	priv := tc.Graph.Adj
	for i := 0; i < n; i++ {
		pc, _ := priv.Row(i)
		for _, j := range pc {
			if eval[i] || eval[j] {
				t.Errorf("training graph has edge (%d,%d) touching an evaluated node", i, j)
			}
		}
		ac, _ := at.Row(i)
		for _, j := range ac {
			if j != i && !eval[i] && !eval[j] {
				t.Errorf("inference graph has private edge (%d,%d)", i, j)
			}
		}
		oc, _ := a.Row(i)
		if len(oc) != len(pc)+len(ac)-1 { // at has the self-loop
			t.Errorf("node %d: %d edges, split into %d private + %d public", i, len(oc), len(pc), len(ac)-1)
		}
	}
	// Private inference keeps one graph.
	m.cfg.Inference = "private"
	if tc, at, _ := m.graphsFor(ctx); tc != ctx || at != nil {
		t.Errorf("private inference changed the graphs")
	}
}
