package caribou

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
	"github.com/dpgnn/dpgnn/methods/run"
)

func newCARIBOU(t *testing.T, args ...string) *CARIBOU {
	t.Helper()
	m := New(DefaultConfig())
	methodtest.Configure(t, m, args...)
	return m
}

func testGraph(t *testing.T) *graphs.Graph { return methodtest.Graph(t, "ratio:0.5:0.25") }

// TestCalibrationMatchesCNIVectors: at edge level the plan's multiplier is
// σ_mult = √g/μ* — CARIBOU's calibration (Thm 6 with the exact GDP
// conversion, as the authors calibrated through autodp; Thm 11's RDP route
// with rdp-standard). Reference values: σ_mult for (ε, δ, K, C_L) =
// (1, 1e-5, 10, 0.9) is 11.300631 (GDP) and 14.844501 (RDP), for
// (4, 1e-6, 15, 0.8) 3.456716 and 4.064038; with C_L = 1 (no
// contraction) the linear composition's 11.797293 at K = 10.
func TestCalibrationMatchesCNIVectors(t *testing.T) {
	for _, tc := range []struct {
		eps, delta float64
		args       []string
		want       float64
	}{
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "0.9"}, 11.300631},
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "0.9", "--accountant", "rdp-standard"}, 14.844501},
		{4, 1e-6, []string{"--hops", "15", "--lipschitz", "0.8"}, 3.456716},
		{4, 1e-6, []string{"--hops", "15", "--lipschitz", "0.8", "--accountant", "rdp-standard"}, 4.064038},
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "1"}, 11.797293},
	} {
		m := newCARIBOU(t, tc.args...)
		ctx := &methods.Context{Level: methods.Edge, Epsilon: tc.eps, Delta: tc.delta}
		c, err := m.AccountPlan(ctx, run.Counts{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.Multiplier-tc.want) > 2e-5*tc.want {
			t.Errorf("%v ε=%g: σ_mult %.6f, want %.6f", tc.args, tc.eps, c.Multiplier, tc.want)
		}
		wantStd := c.Multiplier * layers.EdgeSensitivity(m.cfg.Lipschitz, m.cfg.Alpha1, 0)
		if got := c.Plan.Noise["pcmp_std"]; math.Abs(got-wantStd) > 1e-12*wantStd {
			t.Errorf("%v: pcmp_std %v, want σ_mult·Δ_e = %v", tc.args, got, wantStd)
		}
	}
}

// TestRunsWithinPlan: whole runs at edge and node level make exactly the
// planned releases (one PCMP, at node level the two DP-SGD runs), their
// reports stay within ε, and one PCMP release more than planned fails the
// report.
func TestRunsWithinPlan(t *testing.T) {
	for _, level := range []methods.Level{methods.Edge, methods.Node} {
		m := newCARIBOU(t, "--hops", "4", "--epochs", "3", "--encoder-epochs", "3", "--batch-size", "32", "--max-degree", "40")
		ctx := &methods.Context{Graph: testGraph(t), Level: level, Epsilon: 4, Delta: 1e-5, Seed: 1}
		out, err := m.Run(ctx)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		if out.Privacy == nil || out.Privacy.Epsilon == nil || *out.Privacy.Epsilon > 4+1e-9 {
			t.Fatalf("%s: report %+v", level, out.Privacy)
		}
		m = m.at(true) // the configuration the run used
		s, cal := setupCalibrated(t, m, ctx)
		if _, err := m.pcmp(ctx, s, cal.Plan, cal.Multiplier, make([]float64, ctx.Graph.N), 1, dp.NewSource(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := run.Report(ctx, cal.Plan); err == nil || !strings.Contains(err.Error(), `"pcmp"`) {
			t.Errorf("%s: one PCMP release more than planned: err = %v", level, err)
		}
	}
}

// TestPublicDegreeBounds: at node level an input above the public D_max
// is refused before anything is released, with a message that says only
// that the bound was exceeded (no degree of the input: the only number in
// it is the bound); --min-degree refuses nothing (it floors the
// normalisation); --rows normalize is refused with privacy.
func TestPublicDegreeBounds(t *testing.T) {
	g := testGraph(t)
	m := newCARIBOU(t, "--max-degree", "3")
	_, err := m.Run(&methods.Context{Graph: g, Level: methods.Node, Epsilon: 4, Delta: 1e-5, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "--max-degree 3") {
		t.Fatalf("an input above --max-degree 3: err = %v", err)
	}
	nums := regexp.MustCompile(`[0-9]+`).FindAllString(err.Error(), -1)
	if len(nums) == 0 || slices.ContainsFunc(nums, func(n string) bool { return n != "3" }) {
		t.Errorf("the refusal prints numbers %q besides the bound: %v", nums, err)
	}
	for _, level := range []methods.Level{methods.Edge, methods.Node} {
		m = newCARIBOU(t, "--min-degree", "50", "--max-degree", "100").at(true)
		s, err := m.setupGraph(&methods.Context{Graph: g, Level: level, Epsilon: 4, Delta: 1e-5, Seed: 1})
		if err != nil {
			t.Fatalf("%s, --min-degree 50 on a graph below it: %v (a floor refuses nothing)", level, err)
		}
		if s.layer.Floor != 50 {
			t.Errorf("%s: layer floor %d, want 50", level, s.layer.Floor)
		}
	}
	m = newCARIBOU(t, "--max-degree", "3", "--rows", "normalize")
	if _, err := m.AccountPlan(&methods.Context{Level: methods.Edge, Epsilon: 1, Delta: 1e-5}, run.Counts{}); err == nil {
		t.Fatal("--rows normalize with privacy: no error")
	}
}

// edgeGraph is an n-node graph from undirected edges, every node a
// training node (node level needs some).
func edgeGraph(n int, edges [][2]int) *graphs.Graph {
	src, dst := make([]int, len(edges)), make([]int, len(edges))
	for k, e := range edges {
		src[k], dst[k] = e[0], e[1]
	}
	train := make([]int, n)
	for i := range train {
		train[i] = i
	}
	return &graphs.Graph{N: n, Adj: graphs.FromCOO(n, n, src, dst, nil), Split: graphs.Split{Train: train}}
}

// withoutEdge is edges without its k-th edge.
func withoutEdge(edges [][2]int, k int) [][2]int {
	return append(append([][2]int(nil), edges[:k]...), edges[k+1:]...)
}

// withoutNode is the graph on n−1 nodes that is G without node v and its
// edges (the raw node-level neighbour; nodes after v move down by one).
func withoutNode(n int, edges [][2]int, v int) *graphs.Graph {
	var rest [][2]int
	idx := func(i int) int { return i - btoi(i > v) }
	for _, e := range edges {
		if e[0] != v && e[1] != v {
			rest = append(rest, [2]int{idx(e[0]), idx(e[1])})
		}
	}
	return edgeGraph(n-1, rest)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changeBound is an upper bound on the sensitivity of one CGL application
// between the layers l1 over G and l2 over G′, sup over X, X⁽⁰⁾ with rows
// of norm ≤ 1 of ‖CGL_G(X) − CGL_G′(X)‖_F: the map is linear in the
// stacked rows (X, X⁽⁰⁾) with matrix L, and ‖L·Y‖_F ≤ √(Σ_i ‖L_i‖₁²). G′
// has G's nodes (v < 0) or G's nodes without v (v ≥ 0), its row for v
// then taken as 0 (the padded release of the proof).
func changeBound(l1, l2 *layers.CGL, v int) float64 {
	n := l1.Adj.Rows
	drop := func(x []float64) []float64 {
		if v < 0 {
			return x
		}
		return append(append([]float64(nil), x[:v]...), x[v+1:]...)
	}
	l1norm := make([]float64, n)
	x, x0 := make([]float64, n), make([]float64, n)
	for j := 0; j < 2*n; j++ {
		clear(x)
		clear(x0)
		if j < n {
			x[j] = 1
		} else {
			x0[j-n] = 1
		}
		a := make([]float64, n)
		l1.Apply(x, x0, 1, a)
		xs, x0s := drop(x), drop(x0)
		b := make([]float64, len(xs))
		l2.Apply(xs, x0s, 1, b)
		for i := 0; i < n; i++ {
			bi := 0.0
			switch {
			case v < 0 || i < v:
				bi = b[i]
			case i > v:
				bi = b[i-1]
			}
			l1norm[i] += math.Abs(a[i] - bi)
		}
	}
	s := 0.0
	for _, r := range l1norm {
		s += r * r
	}
	return math.Sqrt(s)
}

// isolatedWithout is the node-level neighbour as the code base represents
// it (cmd/dpgnn's --remove-node): g with v's edges removed, its feature
// row zero, its label 0 and v in no split; v keeps its id, isolated.
func isolatedWithout(g *graphs.Graph, v int) *graphs.Graph {
	gp := g.WithAdj(graphs.RemoveNode(g.Adj, v))
	if g.X != nil {
		x := g.X.ToDense()
		clear(x[v*g.X.F : (v+1)*g.X.F])
		gp.X = &graphs.Features{N: g.X.N, F: g.X.F, Dense: x}
	}
	if g.Labels != nil {
		gp.Labels = append([]int(nil), g.Labels...)
		gp.Labels[v] = 0
	}
	drop := func(ids []int) []int { return slices.DeleteFunc(slices.Clone(ids), func(i int) bool { return i == v }) }
	gp.Split = graphs.Split{Train: drop(g.Split.Train), Val: drop(g.Split.Val), Test: drop(g.Split.Test)}
	return gp
}

// changeBoundIsolated is changeBound for the isolated-id neighbour: l2 is
// the layer over G′ = G with v's edges removed (same n ids), X⁽⁰⁾′ is X⁽⁰⁾
// with row v zero (pcmpInput of a zero feature row), and G′'s layer reads
// X with row v replaced by X⁽⁰⁾′_v = 0 at the first hop (hop1: both sides
// start from G's X⁽⁰⁾) or X itself at later hops. It returns √(Σ_i ‖L_i‖₁²)
// of that linear map: an upper bound on the sup over X, X⁽⁰⁾ ∈ 𝒦 of the
// change of every row, v's included.
func changeBoundIsolated(l1, l2 *layers.CGL, v int, hop1 bool) float64 {
	n := l1.Adj.Rows
	l1norm := make([]float64, n)
	x, x0 := make([]float64, n), make([]float64, n)
	for j := 0; j < 2*n; j++ {
		clear(x)
		clear(x0)
		if j < n {
			x[j] = 1
		} else {
			x0[j-n] = 1
		}
		a, b := make([]float64, n), make([]float64, n)
		l1.Apply(x, x0, 1, a)
		xp, x0p := append([]float64(nil), x...), append([]float64(nil), x0...)
		x0p[v] = 0
		if hop1 {
			xp[v] = 0
		}
		l2.Apply(xp, x0p, 1, b)
		for i := range n {
			l1norm[i] += math.Abs(a[i] - b[i])
		}
	}
	s := 0.0
	for _, r := range l1norm {
		s += r * r
	}
	return math.Sqrt(s)
}

func complete(n int) [][2]int {
	var e [][2]int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			e = append(e, [2]int{i, j})
		}
	}
	return e
}

// TestNeighboursAcceptedAndCovered: for every accepted input G and EVERY
// raw neighbour G′ of the claimed unit — G minus each of its edges at edge
// level, G minus each of its nodes at node level, both deleted with its
// edges (N − 1 ids) and as this code base represents it (its id kept,
// isolated, features zero; both the first hop and the later ones, every
// row compared) — the run's set-up accepts G′ too, and the change of the
// layer it builds between G and G′ is at most the Δ the run charges (an
// upper bound on the exact change, so this is a proof for the pair, not a
// search). Graphs:
// the complete graph K12 with --min-degree 11 (every node at the bound:
// on main G − e was refused, a model on G and an error on G − e, and no
// edge was protected), a hub joined to a 4-regular circulant at its degree,
// stars, paths and a random graph, at floors at, below and above the
// input's minimum degree.
func TestNeighboursAcceptedAndCovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int, p float64) [][2]int {
		var e [][2]int
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < p {
					e = append(e, [2]int{i, j})
				}
			}
		}
		return e
	}
	hub := func(m int) [][2]int {
		var e [][2]int
		for i := 0; i < m; i++ {
			e = append(e, [2]int{0, 1 + i}, [2]int{1 + i, 1 + (i+1)%m}, [2]int{1 + i, 1 + (i+2)%m})
		}
		return e
	}
	star := func(m int) [][2]int {
		var e [][2]int
		for j := 1; j <= m; j++ {
			e = append(e, [2]int{0, j})
		}
		return e
	}
	path := func(n int) [][2]int {
		var e [][2]int
		for i := 0; i+1 < n; i++ {
			e = append(e, [2]int{i, i + 1})
		}
		return e
	}
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int
		args  []string
	}{
		{"K12 --min-degree 11", 12, complete(12), []string{"--min-degree", "11", "--max-degree", "11"}},
		{"K12 --min-degree 4", 12, complete(12), []string{"--min-degree", "4", "--max-degree", "11"}},
		{"hub over a 4-regular circulant, --min-degree 5", 11, hub(10), []string{"--min-degree", "5", "--max-degree", "10"}},
		{"star K_{1,9}, --min-degree 3", 10, star(9), []string{"--min-degree", "3", "--max-degree", "9"}},
		{"star K_{1,9}, no floor", 10, star(9), []string{"--max-degree", "9", "--beta", "0"}},
		{"path P_9, --min-degree 2", 9, path(9), []string{"--min-degree", "2", "--max-degree", "2", "--alpha1", "0.7"}},
		{"random, --min-degree 3", 12, random(12, 0.35), []string{"--min-degree", "3", "--max-degree", "11", "--beta", "0.5"}},
	} {
		for _, level := range []methods.Level{methods.Edge, methods.Node} {
			m := newCARIBOU(t, tc.args...).at(true)
			ctx := func(g *graphs.Graph) *methods.Context {
				return &methods.Context{Graph: g, Level: level, Epsilon: 4, Delta: 1e-5, Seed: 1}
			}
			s, err := m.setupGraph(ctx(edgeGraph(tc.n, tc.edges)))
			if err != nil {
				t.Fatalf("%s, %s: G refused: %v", tc.name, level, err)
			}
			if _, err := m.calibrate(ctx(edgeGraph(tc.n, tc.edges)), s); err != nil {
				t.Fatalf("%s, %s: %v", tc.name, level, err)
			}
			worst, worstIsolated := 0.0, 0.0
			pairs := len(tc.edges)
			if level == methods.Node {
				pairs = tc.n
			}
			for k := 0; k < pairs; k++ {
				var gp *graphs.Graph
				v := -1
				if level == methods.Edge {
					gp = edgeGraph(tc.n, withoutEdge(tc.edges, k))
				} else {
					v, gp = k, withoutNode(tc.n, tc.edges, k)
				}
				sp, err := m.setupGraph(ctx(gp))
				if err != nil {
					t.Fatalf("%s, %s: G accepted, its neighbour %d refused: %v", tc.name, level, k, err)
				}
				if sp.sensitivity != s.sensitivity {
					t.Fatalf("%s, %s: Δ %v on G′, %v on G (it must not read the graph)", tc.name, level, sp.sensitivity, s.sensitivity)
				}
				b := changeBound(s.layer, sp.layer, v)
				if b > s.sensitivity*(1+1e-12) {
					t.Errorf("%s, %s, neighbour %d: the layer changes by up to %.10g, above the charged Δ = %.10g", tc.name, level, k, b, s.sensitivity)
				}
				worst = max(worst, b/s.sensitivity)
				if level != methods.Node {
					continue
				}
				// The code base's node neighbour: v keeps its id, isolated.
				si, err := m.setupGraph(ctx(isolatedWithout(edgeGraph(tc.n, tc.edges), k)))
				if err != nil {
					t.Fatalf("%s: G accepted, its neighbour without node %d (id kept) refused: %v", tc.name, k, err)
				}
				if si.sensitivity != s.sensitivity {
					t.Fatalf("%s: Δ %v on the isolated-id G′, %v on G", tc.name, si.sensitivity, s.sensitivity)
				}
				for _, hop1 := range []bool{true, false} {
					b := changeBoundIsolated(s.layer, si.layer, k, hop1)
					if b > s.sensitivity*(1+1e-12) {
						t.Errorf("%s, node %d removed, id kept (first hop %v): the layer changes by up to %.10g, above the charged Δ = %.10g", tc.name, k, hop1, b, s.sensitivity)
					}
					worstIsolated = max(worstIsolated, b/s.sensitivity)
				}
			}
			if worst == 0 {
				t.Errorf("%s, %s: no change measured", tc.name, level)
			}
			t.Logf("%-48s %s: %d neighbours, worst change bound / charged Δ = %.4f", tc.name, level, pairs, worst)
			if level == methods.Node {
				if worstIsolated == 0 {
					t.Errorf("%s: no change measured on the isolated-id neighbours", tc.name)
				}
				t.Logf("%-48s %s: the same with the removed node's id kept (isolated): %.4f", tc.name, level, worstIsolated)
			}
		}
	}
}

// TestNodeSensitivityUsesPublicBounds: the node-level plan's sensitivity is
// the strict bound at the public D_max and floor D_min, and the report
// lists what it treats as public (the DP-SGD rate's training count, the
// node ids) and which neighbours the degree bounds cover.
func TestNodeSensitivityUsesPublicBounds(t *testing.T) {
	ctx := &methods.Context{Level: methods.Node, Epsilon: 8, Delta: 1e-5}
	m := newCARIBOU(t, "--max-degree", "168", "--min-degree", "2", "--lipschitz", "0.9", "--alpha1", "0.9", "--beta", "2")
	c, err := m.AccountPlan(ctx, run.Counts{TrainNodes: 1895})
	if err != nil {
		t.Fatal(err)
	}
	if want := layers.NodeSensitivity(0.9, 0.9, 2, 2, 168); c.Plan.Noise["sensitivity"] != want {
		t.Errorf("sensitivity %v, want %v", c.Plan.Noise["sensitivity"], want)
	}
	var public, rate, ids, dmax, floor bool
	for _, u := range c.Plan.Uses {
		if strings.HasPrefix(u.Covered, "treated as public (") {
			public = true
			rate = rate || strings.Contains(u.What, "N_train")
			ids = ids || strings.Contains(u.What, "node ids")
		}
		dmax = dmax || (u.Kind == "degree-bound" && strings.Contains(u.What, "public degree bound D=168") && strings.Contains(u.Covered, "G − v"))
		floor = floor || (strings.Contains(u.What, "D_min=2") && strings.Contains(u.What, "minus any one node") && u.Covered == "accounted")
	}
	if !public || !rate || !ids || !dmax || !floor {
		t.Errorf("uses %+v: want the training count and the node ids treated as public (%v %v %v), D_max covering G − v (%v), the floor accounted (%v)",
			c.Plan.Uses, public, rate, ids, dmax, floor)
	}
	c, err = newCARIBOU(t, "--min-degree", "3").AccountPlan(&methods.Context{Level: methods.Edge, Epsilon: 1, Delta: 1e-5}, run.Counts{})
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Plan.Uses[len(c.Plan.Uses)-1]; !strings.Contains(u.What, "minus any one undirected edge") || u.Covered != "accounted" {
		t.Errorf("edge level: last use %+v, want the floor covering every edge removal", u)
	}
}

// TestPaperSensitivityReportsProvenEpsilon: --sensitivity paper calibrates
// the PCMP noise with Theorem 9 as printed, and the plan, the report and
// the run's JSON state the ε proven for that noise — the events composed
// with PCMP at multiplier z·Δ_paper/Δ_strict, computed here independently —
// not the target (on main the report said the target, 8). At edge level
// Theorem 8's value is the proven one, so paper and strict agree.
func TestPaperSensitivityReportsProvenEpsilon(t *testing.T) {
	ctx := &methods.Context{Level: methods.Node, Epsilon: 8, Delta: 1e-5}
	m := newCARIBOU(t, "--max-degree", "168", "--lipschitz", "0.9", "--alpha1", "0.9", "--beta", "2", "--sensitivity", "paper", "--accountant", "rdp")
	c, err := m.AccountPlan(ctx, run.Counts{TrainNodes: 1895})
	if err != nil {
		t.Fatal(err)
	}
	strict, paper := layers.NodeSensitivity(0.9, 0.9, 2, 0, 168), layers.NodeSensitivityPaper(0.9, 0.9, 0, 168, math.MaxInt32)
	gf, err := dp.CNIFactor(0.9, 10)
	if err != nil {
		t.Fatal(err)
	}
	z, nz := c.Multiplier, c.Plan.Noise
	events := func(pcmp float64) []dp.Event {
		return []dp.Event{dp.GaussianEvent{Multiplier: pcmp / math.Sqrt(gf), Count: 1},
			dp.PoissonGaussianEvent{Rate: nz["rate"], Multiplier: z, Steps: int(nz["classifier_steps"])},
			dp.PoissonGaussianEvent{Rate: nz["rate"], Multiplier: z, Steps: int(nz["encoder_steps"])}}
	}
	claimed, err := dp.EpsilonOf("rdp", events(z), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(claimed-8) > 0.01 {
		t.Errorf("the paper's accounting of z = %v gives ε = %v, want the target 8 (z is the paper's calibration)", z, claimed)
	}
	proven, err := dp.EpsilonOf("rdp", events(z*paper/strict), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Plan.Report(c.Plan.AsPlanned())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Epsilon == nil || math.Abs(*rep.Epsilon-proven) > 1e-9*proven || proven < 9 {
		t.Fatalf("report ε %v, want the proven %v (> the target 8)", rep.Epsilon, proven)
	}
	if c.Plan.Noise["pcmp_std"] != z*paper || c.Plan.Noise["sensitivity"] != strict {
		t.Errorf("noise %v: want pcmp_std z·Δ_paper = %v and sensitivity Δ_strict = %v", c.Plan.Noise, z*paper, strict)
	}
	if notes := strings.Join(c.Plan.Notes, " "); !strings.Contains(notes, "claims ε = 8") || !strings.Contains(notes, "proven for that noise") {
		t.Errorf("notes %q: want the paper's target and the proven ε explained", notes)
	}

	// A whole run: the ledger matches the proven plan, and the JSON report's
	// epsilon is the proven value for that run's counts.
	m = newCARIBOU(t, "--hops", "4", "--epochs", "3", "--encoder-epochs", "3", "--batch-size", "32", "--max-degree", "40", "--sensitivity", "paper")
	rc := &methods.Context{Graph: testGraph(t), Level: methods.Node, Epsilon: 4, Delta: 1e-5, Seed: 1}
	out, err := m.Run(rc)
	if err != nil {
		t.Fatal(err)
	}
	m = m.at(true)
	s, err := m.setupGraph(rc)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := m.calibrate(rc, s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cal.Plan.Proven()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(out.Privacy)
	if err != nil {
		t.Fatal(err)
	}
	var j struct{ Epsilon *float64 }
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	if j.Epsilon == nil || *j.Epsilon != want || want <= 4.5 {
		t.Errorf("run JSON epsilon %v, want the proven %v (target 4)", j.Epsilon, want)
	}

	// Edge level: Theorem 8 is the proven value; the two modes coincide.
	var eps [2]float64
	for i, mode := range []string{"strict", "paper"} {
		c, err := newCARIBOU(t, "--sensitivity", mode, "--min-degree", "2").AccountPlan(&methods.Context{Level: methods.Edge, Epsilon: 1, Delta: 1e-5}, run.Counts{})
		if err != nil {
			t.Fatal(err)
		}
		if eps[i], err = c.Plan.Proven(); err != nil {
			t.Fatal(err)
		}
		if c.Plan.Noise["pcmp_multiplier"] != c.Multiplier {
			t.Errorf("edge level, %s: PCMP accounted at %v, want its own multiplier %v", mode, c.Plan.Noise["pcmp_multiplier"], c.Multiplier)
		}
	}
	if eps[0] != eps[1] || eps[0] > 1 {
		t.Errorf("edge level: strict ε %v, paper ε %v: want equal and ≤ 1", eps[0], eps[1])
	}
}

// TestPCMPInputZeroesFeaturelessRows: PCMP's input row of a node whose raw
// feature row is all zero — dense, sparse without entries, or sparse with
// only stored zeros — is 0, every other row is the embedding's, and the
// embedding itself is not modified (the classifier reads it). On main a
// featureless node's row was the encoder's output for a zero row (its
// biases, normalised), which the node-level Δ_n does not cover for the
// removed node of the isolated-id G′.
func TestPCMPInputZeroesFeaturelessRows(t *testing.T) {
	const n, width = 4, 2
	x0 := []float64{0.6, 0.8, 1, 0, 0, -1, 0.5, 0.5}
	dense := &graphs.Features{N: n, F: 3, Dense: []float64{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}}
	sparse := &graphs.Features{N: n, F: 3, Sparse: &graphs.CSR{Rows: n, Cols: 3,
		Indptr: []int{0, 1, 2, 3, 3}, Indices: []int{0, 1, 2}, Data: []float64{1, 0, 2}}}
	pattern := &graphs.Features{N: n, F: 3, Sparse: &graphs.CSR{Rows: n, Cols: 3, Indptr: []int{0, 1, 2, 3, 4}, Indices: []int{0, 1, 2, 0}}}
	for _, tc := range []struct {
		name  string
		feats *graphs.Features
		want  []float64
	}{
		{"dense, rows 1 and 3 zero", dense, []float64{0.6, 0.8, 0, 0, 0, -1, 0, 0}},
		{"sparse, row 1 a stored zero, row 3 empty", sparse, []float64{0.6, 0.8, 0, 0, 0, -1, 0, 0}},
		{"sparse pattern (every entry 1)", pattern, x0},
		{"no features", nil, x0},
	} {
		before := slices.Clone(x0)
		got := pcmpInput(x0, width, tc.feats)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: PCMP input %v, want %v", tc.name, got, tc.want)
		}
		if !slices.Equal(x0, before) {
			t.Errorf("%s: the embedding was modified to %v", tc.name, x0)
		}
	}
}

// auditNode audits releases on g and on gp (every value compared, the
// removed node's included) with trials runs per side.
func auditNode(t *testing.T, rg, rgp run.Release1, trials int, delta float64) dp.AuditResult {
	t.Helper()
	sampler := func(rel run.Release1, side string) dp.AuditSampler {
		return func(i int, _ bool) ([]float64, error) {
			return rel(dp.NewSource(11).Split(fmt.Sprintf("%s %d", side, i)))
		}
	}
	res, err := dp.AuditStream(sampler(rg, "G"), sampler(rgp, "G′"), trials, dp.AuditConfig{Delta: delta})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestNodeAuditIsolatedIdWithinClaim audits one PCMP release at node level
// against the code base's node neighbour — the hub removed, its id kept,
// isolated, with zero features — comparing every row, the hub's own
// included, at α₁ = 0.9 and β = 4 (so the hub's row on G′ is C_L(α₁·X_v +
// α₂·mean) + noise, not 0). On a star K_{1,5} at K = 1 (the claim is then
// one Gaussian release at multiplier z, μ = 1/z, with no amplification to
// hide behind) and on the wheel graphs.Star (hub and 100 rim nodes, D_max
// 100) at K = 1 and 10, ε_lb and the GDP bound stay ≤ the claim, and on
// the star the audit does tell G from G′ (μ_lb > 0.3). The same audit of
// the star with the hub's input row on G′ pointing opposite to G's (what
// an encoder's biases could give a featureless node before pcmpInput)
// exceeds the claim: the audit sees the case the zero-row rule excludes.
func TestNodeAuditIsolatedIdWithinClaim(t *testing.T) {
	const delta, width, z = 1e-5, 1, 1.0
	withSplit := func(g *graphs.Graph) *graphs.Graph {
		spec, err := graphs.ParseSplit("ratio:0.5:0.25")
		if err != nil {
			t.Fatal(err)
		}
		gs, err := graphs.ApplySplit(g, spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	star := edgeGraph(6, [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}})
	star.X = &graphs.Features{N: 6, F: 2, Dense: []float64{1, 0, 1, 1, 0, 1, 1, 2, 2, 1, 1, 1}}
	star.Labels, star.NumClasses, star.Name = []int{0, 1, 0, 1, 0, 1}, 2, "star-5"
	wheel := withSplit(gen.Star(1))
	for _, tc := range []struct {
		name      string
		g         *graphs.Graph
		args      []string
		trials    int
		antipodal bool
	}{
		{"star K_{1,5}, K=1", star, []string{"--hops", "1", "--alpha1", "0.9", "--max-degree", "5"}, 6000, false},
		{"star K_{1,5}, K=1, G′'s hub input row −X⁽⁰⁾_v", star, []string{"--hops", "1", "--alpha1", "0.9", "--max-degree", "5"}, 6000, true},
		{"wheel (graphs.Star), K=1", wheel, []string{"--hops", "1", "--alpha1", "0.9", "--max-degree", "100"}, 3000, false},
		{"wheel (graphs.Star), K=10", wheel, []string{"--alpha1", "0.9", "--max-degree", "100"}, 1500, false},
	} {
		m := newCARIBOU(t, tc.args...)
		ctx := &methods.Context{Graph: tc.g, Dataset: tc.g.Name, Level: methods.Node, Epsilon: 8, Delta: delta, Seed: 1}
		target, err := m.AuditTarget(ctx, run.AuditOptions{Embedding: "aligned", Width: width, Multiplier: z})
		if err != nil {
			t.Fatal(err)
		}
		if target.OwnRow != "" {
			t.Fatalf("%s: the audit leaves the removed node's row out (%q)", tc.name, target.OwnRow)
		}
		gp := isolatedWithout(tc.g, 0)
		rg, err := target.Prepare(tc.g)
		if err != nil {
			t.Fatal(err)
		}
		rgp, err := target.Prepare(gp)
		if err != nil {
			t.Fatal(err)
		}
		if tc.antipodal {
			gc := *ctx
			gc.Graph, gc.Multiplier = gp, z
			s, err := m.at(true).setupGraph(&gc)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, gp.N*width)
			for i := range gp.N {
				x[i*width] = 1
			}
			x[0] = -1
			rgp = func(src *dp.Source) ([]float64, error) { return m.newPCMP(s, z*s.noiseScale, src).Release(x, width) }
		}
		res := auditNode(t, rg, rgp, tc.trials, delta)
		if res.Dimension != tc.g.N*width {
			t.Fatalf("%s: compared %d values, want all %d", tc.name, res.Dimension, tc.g.N*width)
		}
		gf, err := dp.CNIFactor(0.9, m.cfg.Hops)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: claimed ε %.3f (μ %.3f), ε_lb %.3f, as a Gaussian mechanism %.3f (μ_lb %.3f)",
			tc.name, target.Claimed, math.Sqrt(gf)/z, res.EpsilonLB, res.EpsilonLBGDP, res.MuLB)
		exceeds := res.EpsilonLB > target.Claimed || res.EpsilonLBGDP > target.Claimed
		if exceeds != tc.antipodal {
			t.Errorf("%s: ε_lb %.3f, GDP ε_lb %.3f against the claimed %.3f: exceeds = %v, want %v",
				tc.name, res.EpsilonLB, res.EpsilonLBGDP, target.Claimed, exceeds, tc.antipodal)
		}
		if tc.g == star && res.MuLB < 0.3 {
			t.Errorf("%s: μ_lb %.3f: the audit did not tell G from G′", tc.name, res.MuLB)
		}
	}
}

// TestLevelDefaults: the automatic --encoder-layers and --beta resolve by
// privacy (no encoder and β = 0.2 without privacy — --privacy none or
// ε = ∞ — the encoder and β = 4 in a private run), an explicit flag always
// wins, a run with the automatic values is bit for bit the run with the
// resolved values given explicitly, the node-level plan's Δ_n is computed
// with the resolved β (the β the layer applies), and an unresolved
// configuration is refused where the sensitivity is set up rather than
// given a Δ for a layer no run builds.
func TestLevelDefaults(t *testing.T) {
	for _, tc := range []struct {
		private  bool
		args     []string
		wantEnc  int
		wantBeta float64
	}{
		{false, nil, 0, 0.2},
		{true, nil, 2, 4},
		{false, []string{"--encoder-layers", "2", "--beta", "4"}, 2, 4},
		{true, []string{"--encoder-layers", "0", "--beta", "0.2"}, 0, 0.2},
		{true, []string{"--beta", "1"}, 2, 1},
		{false, []string{"--beta", "0"}, 0, 0},
	} {
		m := newCARIBOU(t, tc.args...)
		r := m.at(tc.private)
		if r.cfg.EncoderLayers != tc.wantEnc || r.cfg.Beta != tc.wantBeta {
			t.Errorf("private %v %v: encoder layers %d, β %g; want %d, %g", tc.private, tc.args, r.cfg.EncoderLayers, r.cfg.Beta, tc.wantEnc, tc.wantBeta)
		}
		if again := r.cfg.At(!tc.private); again != r.cfg {
			t.Errorf("private %v %v: At is not idempotent: %+v then %+v", tc.private, tc.args, r.cfg, again)
		}
	}

	// Whole runs: automatic = the resolved values given explicitly; ε = ∞
	// at edge level is a non-private run.
	g := testGraph(t)
	short := []string{"--hops", "3", "--epochs", "3", "--encoder-epochs", "3", "--batch-size", "32", "--max-degree", "40"}
	none, private := []string{"--encoder-layers", "0", "--beta", "0.2"}, []string{"--encoder-layers", "2", "--beta", "4"}
	for _, tc := range []struct {
		level    methods.Level
		eps      float64
		explicit []string
	}{
		{methods.None, math.Inf(1), none},
		{methods.Edge, math.Inf(1), none},
		{methods.Edge, 4, private},
		{methods.Node, 4, private},
	} {
		var preds [2][]int
		for i, args := range [][]string{short, append(slices.Clone(short), tc.explicit...)} {
			out, err := newCARIBOU(t, args...).Run(&methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Delta: 1e-5, Seed: 3})
			if err != nil {
				t.Fatalf("%s ε=%g %v: %v", tc.level, tc.eps, args, err)
			}
			preds[i] = out.Pred
		}
		if !slices.Equal(preds[0], preds[1]) {
			t.Errorf("%s ε=%g: the automatic defaults ran differently from %v", tc.level, tc.eps, tc.explicit)
		}
	}

	// Node level: the plan's Δ_n reads the resolved β.
	for _, tc := range []struct {
		args []string
		beta float64
	}{{nil, 4}, {[]string{"--beta", "0.2"}, 0.2}} {
		m := newCARIBOU(t, append([]string{"--max-degree", "40"}, tc.args...)...)
		c, err := m.AccountPlan(&methods.Context{Level: methods.Node, Epsilon: 8, Delta: 1e-5}, run.Counts{TrainNodes: 150})
		if err != nil {
			t.Fatal(err)
		}
		want := layers.NodeSensitivity(0.9, 1, tc.beta, 0, 40)
		if got := c.Plan.Noise["sensitivity"]; got != want {
			t.Errorf("node level %v: sensitivity %v, want Δ_n(β = %g) = %v", tc.args, got, tc.beta, want)
		}
	}

	// Unresolved: refused where the sensitivity is set up; bad values refused by Validate.
	if _, err := newCARIBOU(t).setupCounts(methods.Node, run.Counts{TrainNodes: 150}); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Errorf("unresolved configuration at node level: err = %v", err)
	}
	for _, args := range [][]string{{"--beta", "-2"}, {"--encoder-layers", "-2"}, {"--beta", "-0.5"}} {
		m := New(DefaultConfig())
		if err := methods.ParseConfigFlags(m.Config(), args); err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// TestPCMPRecorderRefusedBeforeRelease: PCMP built under a plan that does
// not declare its release, or declares it at another noise multiplier, is
// refused before it draws (nothing recorded, no output).
func TestPCMPRecorderRefusedBeforeRelease(t *testing.T) {
	m := newCARIBOU(t, "--hops", "4", "--epochs", "3", "--encoder-epochs", "3").at(true)
	ctx := &methods.Context{Graph: testGraph(t), Level: methods.Edge, Epsilon: 4, Delta: 1e-5, Seed: 1}
	s, cal := setupCalibrated(t, m, ctx)
	renamed, half := *cal.Plan, *cal.Plan
	renamed.Releases, half.Releases = slices.Clone(cal.Plan.Releases), slices.Clone(cal.Plan.Releases)
	found := false
	for i, r := range cal.Plan.Releases {
		if r.Name == ledgerPCMP {
			found = true
			renamed.Releases[i].Name = "pcmp.other"
			g, err := dp.CNIFactor(m.cfg.Lipschitz, m.cfg.Hops)
			if err != nil {
				t.Fatal(err)
			}
			half.Releases[i].Event = pcmpEvent(s.accounted(cal.Multiplier/2), g)
		}
	}
	if !found {
		t.Fatalf("the plan has no %q release: %+v", ledgerPCMP, cal.Plan.Releases)
	}
	for name, plan := range map[string]*dp.Plan{"undeclared": &renamed, "half the multiplier": &half} {
		out, err := m.pcmp(ctx, s, plan, cal.Multiplier, make([]float64, ctx.Graph.N), 1, dp.NewSource(1))
		if err == nil || out != nil || !strings.Contains(err.Error(), `"pcmp"`) {
			t.Errorf("%s: PCMP ran (err %v)", name, err)
		}
		if n := len(ctx.Ledger().Entries()); n != 0 {
			t.Errorf("%s: %d releases recorded by a refused PCMP", name, n)
		}
	}
}

// setupCalibrated is m's privacy set-up on ctx's graph and its calibration.
func setupCalibrated(t *testing.T, m *CARIBOU, ctx *methods.Context) (*setup, *run.Calibrated) {
	t.Helper()
	s, err := m.setupGraph(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := m.calibrate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return s, cal
}
