package run

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/methods"
)

// TestSignedLinkPrepare: a published split is kept and the training graph
// is built from its training edges only (a pair listed with both signs in
// both graphs); without one, a fraction of the edges is held out and the
// test edges are out of the training graph.
func TestSignedLinkPrepare(t *testing.T) {
	// 5 nodes; whole graph: 0+1, 1−2, 2+3, 3−4, 0+4; train: 0→1 +, 1→0 −,
	// 1→2 −, 2→3 +; test: 3→4 −, 0→4 +.
	pos := graphs.FromCOO(5, 5, []int{0, 1, 2, 3, 0, 4}, []int{1, 0, 3, 2, 4, 0}, nil)
	neg := graphs.FromCOO(5, 5, []int{1, 2, 3, 4}, []int{2, 1, 4, 3}, nil)
	g := &graphs.Graph{Name: "toy", N: 5, Adj: pos, Neg: neg,
		EdgeTrain: graphs.FromCOO(5, 5, []int{0, 1, 1, 2}, []int{1, 0, 2, 3}, []float64{1, -1, -1, 1}),
		EdgeTest:  graphs.FromCOO(5, 5, []int{3, 0}, []int{4, 4}, []float64{-1, 1})}
	task := SignedLink{TestFraction: 0.2}
	if err := task.Check(g); err != nil {
		t.Fatal(err)
	}
	out, err := task.Prepare(g, 1)
	if err != nil {
		t.Fatal(err)
	}
	if out.EdgeTest != g.EdgeTest || out.Adj.HasEntry(0, 4) || out.Neg.HasEntry(3, 4) {
		t.Fatal("test edges leaked into the training graph")
	}
	for _, e := range [][2]int{{0, 1}, {1, 0}, {2, 3}, {3, 2}} {
		if !out.Adj.HasEntry(e[0], e[1]) {
			t.Errorf("positive training edge %v missing", e)
		}
	}
	for _, e := range [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 1}} {
		if !out.Neg.HasEntry(e[0], e[1]) {
			t.Errorf("negative training edge %v missing", e)
		}
	}
	if out.Adj.NNZ() != 4 || out.Neg.NNZ() != 4 || g.Adj != pos {
		t.Errorf("training graph has %d positive and %d negative entries, want 4 and 4 (input untouched)", out.Adj.NNZ(), out.Neg.NNZ())
	}
	// No published split: hold out.
	s := gen.SignedSBM(gen.SignedSBMConfig{Nodes: 60, Communities: 2, AvgDegree: 6, NegWithin: 0.1, PosAcross: 0.1}, 3)
	out, err = task.Prepare(s, 7)
	if err != nil {
		t.Fatal(err)
	}
	total := s.Adj.UndirectedEdges() + s.Neg.UndirectedEdges()
	if got := out.EdgeTest.NNZ(); got != int(math.Round(0.2*float64(total))) {
		t.Errorf("%d test edges of %d, want 20%%", got, total)
	}
	for i := 0; i < out.EdgeTest.Rows; i++ {
		cols, _ := out.EdgeTest.Row(i)
		for _, j := range cols {
			if out.Adj.HasEntry(i, j) || out.Neg.HasEntry(i, j) {
				t.Fatalf("held-out edge %d–%d is in the training graph", i, j)
			}
		}
	}
	if err := task.Check(&graphs.Graph{Name: "unsigned", N: 5, Adj: pos}); err == nil {
		t.Error("an unsigned graph passed the check")
	}
}

// TestSignMetrics: on a graph whose edge signs are the target node's
// type, embeddings that carry the type give AUC 1, macro-F1 1 (the
// regression on [e_u, e_v] reads it from e_v), and random ones about 1/2;
// the SSI of embeddings aligned along positive and opposed along negative
// test edges is large.
func TestSignMetrics(t *testing.T) {
	const n, k, m = 200, 4, 3000
	r := rand.New(rand.NewPCG(1, 2))
	good := make([]float64, n)
	for i := range good {
		good[i] = float64(r.IntN(2)*2 - 1)
	}
	var src, dst []int
	var sign []float64
	seen := map[[2]int]bool{}
	for len(src) < m {
		u, v := r.IntN(n), r.IntN(n)
		if u == v || seen[[2]int{u, v}] || seen[[2]int{v, u}] {
			continue
		}
		seen[[2]int{u, v}] = true
		src, dst, sign = append(src, u), append(dst, v), append(sign, good[v])
	}
	split := m * 7 / 10
	g := &graphs.Graph{Name: "types", N: n,
		EdgeTrain: graphs.FromCOO(n, n, src[:split], dst[:split], sign[:split]),
		EdgeTest:  graphs.FromCOO(n, n, src[split:], dst[split:], sign[split:])}
	typed := make([]float64, n*k)
	random := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			typed[i*k+j] = 0.3 * r.NormFloat64()
			random[i*k+j] = r.NormFloat64()
		}
		typed[i*k] = good[i]
	}
	met, err := SignMetrics(g, typed, k)
	if err != nil {
		t.Fatal(err)
	}
	if met["sign_auc"] < 0.999 || met["sign_f1"] < 0.99 {
		t.Errorf("typed embeddings: %v", met)
	}
	met, err = SignMetrics(g, random, k)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(met["sign_auc"]-0.5) > 0.1 || math.Abs(met["ssi"]-0.5) > 0.1 {
		t.Errorf("random embeddings: %v", met)
	}
	// SSI: every node's embedding is ±e₁ by community, positive edges
	// inside communities, negative across: s+ = 1, s− = −1 up to the jitter.
	s := gen.SignedSBM(gen.SignedSBMConfig{Nodes: 200, Communities: 2, AvgDegree: 10}, 5)
	gs, err := SignedLink{TestFraction: 0.3}.Prepare(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	planted := make([]float64, gs.N*k)
	for i := 0; i < gs.N; i++ {
		planted[i*k] = float64(1 - 2*s.Labels[i])
		planted[i*k+1] = 0.05 * r.NormFloat64()
	}
	if met, err = SignMetrics(gs, planted, k); err != nil || met["ssi"] < 20 {
		t.Errorf("planted communities: %v, %v", met, err)
	}
	if _, err := SignMetrics(g, typed[:10], k); err == nil {
		t.Error("short embedding accepted")
	}
	// Test edges of one sign (the last negative one's endpoint removed):
	// ssi and sign_auc are undefined (NaN), not an error after training.
	var ps, pd []int
	var pv []float64
	for i := split; i < m; i++ {
		if sign[i] > 0 {
			ps, pd, pv = append(ps, src[i]), append(pd, dst[i]), append(pv, 1)
		}
	}
	one := *g
	one.EdgeTest = graphs.FromCOO(n, n, ps, pd, pv)
	met, err = SignMetrics(&one, typed, k)
	if err != nil || !math.IsNaN(met["ssi"]) || !math.IsNaN(met["sign_auc"]) {
		t.Errorf("test edges of one sign: %v, %v; want NaN ssi and sign_auc", met, err)
	}
	if _, err := (SignedLink{}).Metrics(&one, &methods.Outcome{Extra: met}); err != nil {
		t.Errorf("metrics with undefined ssi: %v", err)
	}
}

// TestFitLogistic: the fit's gradient vanishes at the returned point (the
// objective is strictly convex, so it is the minimiser).
func TestFitLogistic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, d = 300, 5
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range y {
		s := 0.0
		for j := 0; j < d; j++ {
			x[i*d+j] = r.NormFloat64() * float64(j+1)
			s += x[i*d+j] * float64(j%2*2-1)
		}
		y[i] = 1
		if s+0.5*r.NormFloat64() < 0.3 {
			y[i] = -1
		}
	}
	w, err := fitLogistic(x, y, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, d+1)
	for i := range y {
		z := y[i] * margin(w, x[i*d:(i+1)*d])
		a := -y[i] / (1 + math.Exp(z))
		for j := 0; j < d; j++ {
			grad[j] += a * x[i*d+j]
		}
		grad[d] += a
	}
	for j := 0; j < d; j++ {
		grad[j] += w[j]
	}
	for j, v := range grad {
		if math.Abs(v) > 1e-5 {
			t.Errorf("gradient entry %d = %g at the fit", j, v)
		}
	}
}
