package run

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/methods"

	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/trainers"
)

// SignedLink is edge-sign prediction on a signed graph (ASGL's evaluation):
// a method learns node embeddings from the training edges, and the run is
// measured on the test edges by
//
//   - sign_auc and sign_f1: a logistic regression on the pair feature
//     [e_u, e_v] (the two embeddings concatenated), fit to the signs of the
//     training edges (L2, C = 1, intercept: scikit-learn's
//     LogisticRegression defaults, which the authors' code uses), scores
//     every test edge; sign_auc is the ROC AUC of the probability of +1
//     against the true signs, sign_f1 the macro-F1 of its 0.5 threshold;
//   - ssi: the structural similarity index of the embeddings on the test
//     edges (trainers.SSI).
//
// A dataset with a published edge split (Graph.EdgeTrain, EdgeTest: the
// signed datasets) keeps it; any other signed graph holds out TestFraction
// of its undirected edges at random (from the run's seed). Prepare returns
// the graph the method trains on: Adj and Neg become the symmetrised
// positive and negative training edges, so the test edges are out of
// reach; a pair listed with both signs (one per direction) is in both, as
// in the authors' code. A method reports the three metrics in
// Outcome.Extra, computed by SignMetrics from the embeddings it releases.
type SignedLink struct {
	// TestFraction of the undirected signed edges held out when the
	// dataset has no published edge split: (0, 1).
	TestFraction float64
}

func (SignedLink) Name() string { return "edge-sign prediction" }

func (t SignedLink) Check(g *graphs.Graph) error {
	if !g.Signed() || g.Adj == nil {
		return fmt.Errorf("dataset %s is not a signed graph (it has no negative edges); the signed datasets are %s (dpgnn data fetch NAME)",
			g.Name, strings.Join(graphio.SignedDatasets(), ", "))
	}
	if (g.EdgeTrain == nil) != (g.EdgeTest == nil) {
		return fmt.Errorf("dataset %s has a training or a test edge list but not both", g.Name)
	}
	if g.EdgeTrain == nil && !(t.TestFraction > 0 && t.TestFraction < 1) {
		return fmt.Errorf("dataset %s has no published edge split and the task holds out a fraction %v of its edges, want (0, 1)", g.Name, t.TestFraction)
	}
	if g.Adj.NNZ()+g.Neg.NNZ() < 4 {
		return fmt.Errorf("dataset %s has too few signed edges for edge-sign prediction", g.Name)
	}
	return nil
}

func (SignedLink) NodeSplit(*graphs.Graph) bool { return false }

// SplitRecord: "fixed" for the edge split the dataset comes with, else
// "edges:random:F" (a fraction F held out from each run's seed). No node
// split is drawn, so --split is refused, except "fixed" where the dataset
// has its published edge split: a split that would not run is never
// recorded.
func (t SignedLink) SplitRecord(g *graphs.Graph, given string, _ graphs.SplitSpec) (string, error) {
	published := g.EdgeTrain != nil
	switch {
	case given == "" || given == string(graphs.SplitFixed) && published:
	case given == string(graphs.SplitFixed):
		return "", fmt.Errorf("--split fixed: dataset %s has no published edge split (no .train/.test files), so each run holds out a fraction %g of its edges at random; leave --split out",
			g.Name, t.TestFraction)
	case published:
		return "", fmt.Errorf("--split %s: edge-sign prediction draws no node split; it trains on the edge split dataset %s comes with (.train/.test); leave --split out or pass --split fixed",
			given, g.Name)
	default:
		return "", fmt.Errorf("--split %s: edge-sign prediction draws no node split; on dataset %s it holds out a fraction %g of the edges at random from each run's seed; leave --split out",
			given, g.Name, t.TestFraction)
	}
	if published {
		return string(graphs.SplitFixed), nil
	}
	return edgeHoldOut(t.TestFraction), nil
}

func (t SignedLink) Prepare(g *graphs.Graph, seed uint64) (*graphs.Graph, error) {
	train, test := g.EdgeTrain, g.EdgeTest
	if train == nil {
		var err error
		if train, test, err = holdOutSigned(g, t.TestFraction, seed); err != nil {
			return nil, err
		}
	}
	if err := checkSignedEdges(train, g.N, "training"); err != nil {
		return nil, err
	}
	if err := checkSignedEdges(test, g.N, "test"); err != nil {
		return nil, err
	}
	out := *g
	out.Adj, out.Neg = signedTrainGraphs(train)
	out.EdgeTrain, out.EdgeTest = train, test
	return &out, nil
}

func (SignedLink) Metrics(_ *graphs.Graph, out *methods.Outcome) (map[string]float64, error) {
	for _, k := range []string{"sign_auc", "sign_f1", "ssi"} {
		if _, ok := out.Extra[k]; !ok { // NaN: undefined on these test edges
			return nil, fmt.Errorf("an edge-sign prediction outcome must report %s", k)
		}
	}
	return out.Extra, nil
}

func (SignedLink) Evaluation() string {
	return "edge-sign prediction on the test edges (sign_auc, sign_f1) by a logistic regression fit to the training edges' signs over the released embeddings, " +
		"and SSI on the test edges (the metrics of this record); the edges and signs it reads are private at node level and publishing these numbers is not covered"
}

// checkSignedEdges checks that a signed edge list is n×n with values ±1.
func checkSignedEdges(e *graphs.CSR, n int, what string) error {
	if e.Rows != n || e.Cols != n {
		return fmt.Errorf("the %s edges are %d×%d, want %d×%d", what, e.Rows, e.Cols, n, n)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("the %s edges: %w", what, err)
	}
	for k := range e.Indices {
		if v := e.Value(k); v != 1 && v != -1 {
			return fmt.Errorf("the %s edges hold the value %v, want signs ±1", what, v)
		}
	}
	return nil
}

// signedTrainGraphs returns the symmetric unweighted patterns of the
// positive and of the negative entries of the signed edge list e, without
// self-loops.
func signedTrainGraphs(e *graphs.CSR) (pos, neg *graphs.CSR) {
	var ps, pd, ns, nd []int
	for i := 0; i < e.Rows; i++ {
		for k := e.Indptr[i]; k < e.Indptr[i+1]; k++ {
			j := e.Indices[k]
			if j == i {
				continue
			}
			if e.Value(k) > 0 {
				ps, pd = append(ps, i, j), append(pd, j, i)
			} else {
				ns, nd = append(ns, i, j), append(nd, j, i)
			}
		}
	}
	return graphs.FromCOO(e.Rows, e.Rows, ps, pd, nil), graphs.FromCOO(e.Rows, e.Rows, ns, nd, nil)
}

// holdOutSigned splits the undirected signed edges of g (positive from
// Adj, negative from Neg) at random: a fraction frac (at least one) goes to
// the test list. Both lists hold each edge once, as (min, max) with its
// sign.
func holdOutSigned(g *graphs.Graph, frac float64, seed uint64) (train, test *graphs.CSR, err error) {
	type edge struct {
		u, v int
		s    float64
	}
	var edges []edge
	for _, p := range []struct {
		m *graphs.CSR
		s float64
	}{{g.Adj, 1}, {g.Neg, -1}} {
		for i := 0; i < p.m.Rows; i++ {
			cols, _ := p.m.Row(i)
			for _, j := range cols {
				if i < j {
					edges = append(edges, edge{i, j, p.s})
				}
			}
		}
	}
	nTest := int(math.Round(frac * float64(len(edges))))
	if nTest < 1 || nTest >= len(edges) {
		return nil, nil, fmt.Errorf("holding out %v of %d signed edges leaves no training or no test edge", frac, len(edges))
	}
	r := rand.New(rand.NewPCG(seed, 0x5167ed))
	r.Shuffle(len(edges), func(a, b int) { edges[a], edges[b] = edges[b], edges[a] })
	build := func(es []edge) *graphs.CSR {
		src, dst, val := make([]int, len(es)), make([]int, len(es)), make([]float64, len(es))
		for k, e := range es {
			src[k], dst[k], val[k] = e.u, e.v, e.s
		}
		return graphs.FromCOO(g.N, g.N, src, dst, val)
	}
	return build(edges[nTest:]), build(edges[:nTest]), nil
}

// SignMetrics measures node embeddings emb (n×k, row-major) on a graph
// prepared by SignedLink: sign_auc and sign_f1 of the logistic regression
// on [e_u, e_v] fit to EdgeTrain and scored on EdgeTest, and ssi on
// EdgeTest (see SignedLink). It fails on a shape mismatch and non-finite
// embeddings; with test edges of only one sign, ssi and sign_auc are NaN.
func SignMetrics(g *graphs.Graph, emb []float64, k int) (map[string]float64, error) {
	if g.EdgeTrain == nil || g.EdgeTest == nil {
		return nil, fmt.Errorf("sign metrics: graph %s has no training and test edge lists", g.Name)
	}
	if k < 1 || len(emb) != g.N*k {
		return nil, fmt.Errorf("sign metrics: %d embedding values for %d nodes of dimension %d", len(emb), g.N, k)
	}
	// Test edges of one sign only (a removed node can take the last
	// negative one away) leave SSI and the AUC undefined: NaN, reported
	// as missing, not an error after training — a run must not fail on
	// G − v where it succeeds on G.
	ssi := math.NaN()
	if bothSigns(g.EdgeTest) {
		var err error
		if ssi, err = trainers.SSI(emb, k, g.EdgeTest); err != nil {
			return nil, fmt.Errorf("sign metrics: %w", err)
		}
	}
	xTr, yTr := pairFeatures(g.EdgeTrain, emb, k)
	xTe, yTe := pairFeatures(g.EdgeTest, emb, k)
	w, err := fitLogistic(xTr, yTr, 2*k, 1)
	if err != nil {
		return nil, fmt.Errorf("sign metrics: logistic regression: %w", err)
	}
	var pos, neg []float64
	pred, labels := make([]int, len(yTe)), make([]int, len(yTe))
	idx := make([]int, len(yTe))
	for i, y := range yTe {
		m := margin(w, xTe[i*2*k:(i+1)*2*k])
		if y > 0 {
			pos = append(pos, m)
			labels[i] = 1
		} else {
			neg = append(neg, m)
		}
		if m > 0 {
			pred[i] = 1
		}
		idx[i] = i
	}
	return map[string]float64{"sign_auc": trainers.AUC(pos, neg), "sign_f1": trainers.MacroF1(pred, labels, idx), "ssi": ssi}, nil
}

// bothSigns reports whether the signed edge list has a positive and a
// negative entry.
func bothSigns(e *graphs.CSR) bool {
	pos, neg := false, false
	for k := range e.Indices {
		v := e.Value(k)
		pos, neg = pos || v > 0, neg || v < 0
	}
	return pos && neg
}

// pairFeatures returns the rows [e_u, e_v] (len(y)×2k) of the entries of a
// signed edge list and their signs.
func pairFeatures(e *graphs.CSR, emb []float64, k int) (x, y []float64) {
	x = make([]float64, 0, 2*k*e.NNZ())
	for i := 0; i < e.Rows; i++ {
		for p := e.Indptr[i]; p < e.Indptr[i+1]; p++ {
			j := e.Indices[p]
			x = append(x, emb[i*k:(i+1)*k]...)
			x = append(x, emb[j*k:(j+1)*k]...)
			y = append(y, e.Value(p))
		}
	}
	return x, y
}

// margin is w·x + intercept (w has len(x)+1 entries, the intercept last).
func margin(w, x []float64) float64 {
	s := w[len(x)]
	for j, v := range x {
		s += w[j] * v
	}
	return s
}

// fitLogistic minimises ½‖w‖² + c·Σ_i log(1 + exp(−y_i(w·x_i + b))) over w
// (d entries) and the unpenalised intercept b (scikit-learn's
// LogisticRegression with C = c), labels ±1, by L-BFGS. It returns w with b
// appended. It fails on non-finite features.
func fitLogistic(x, y []float64, d int, c float64) ([]float64, error) {
	if slices.ContainsFunc(x, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return nil, fmt.Errorf("non-finite feature")
	}
	n := len(y)
	const parts = 4
	chunk := (n + parts - 1) / parts
	pg := make([][]float64, parts)
	for i := range pg {
		pg[i] = make([]float64, d+1)
	}
	pl := make([]float64, parts)
	// eval returns the objective at w and writes its gradient to grad.
	eval := func(w, grad []float64) float64 {
		parallel.Rows(parts, 2*n*d, func(lo, hi int) {
			for part := lo; part < hi; part++ {
				g := pg[part]
				clear(g)
				l := 0.0
				for i := part * chunk; i < min(n, (part+1)*chunk); i++ {
					xi := x[i*d : (i+1)*d]
					z := y[i] * margin(w, xi)
					// log(1 + e^{−z}) and σ(−z), stably
					var f, s float64
					if z > 0 {
						e := math.Exp(-z)
						f, s = math.Log1p(e), e/(1+e)
					} else {
						e := math.Exp(z)
						f, s = -z+math.Log1p(e), 1/(1+e)
					}
					l += f
					a := -c * s * y[i]
					for j, v := range xi {
						g[j] += a * v
					}
					g[d] += a
				}
				pl[part] = l
			}
		})
		f := 0.0
		clear(grad)
		for part := range parts {
			f += c * pl[part]
			for j, v := range pg[part] {
				grad[j] += v
			}
		}
		for j := 0; j < d; j++ {
			f += 0.5 * w[j] * w[j]
			grad[j] += w[j]
		}
		return f
	}
	return lbfgs(eval, d+1, 1000, 1e-6), nil
}

// lbfgs minimises a smooth convex function of dim variables from 0 by
// L-BFGS (memory 10, backtracking Armijo line search), stopping when the
// largest gradient entry is below tol, the objective stops decreasing, or
// after maxIter iterations; it returns the last point.
func lbfgs(eval func(x, grad []float64) float64, dim, maxIter int, tol float64) []float64 {
	const mem = 10
	x, g := make([]float64, dim), make([]float64, dim)
	f := eval(x, g)
	var ss, ys [][]float64
	var rhos []float64
	dir, xn, gn := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	alpha := make([]float64, mem)
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	for it := 0; it < maxIter; it++ {
		gmax := 0.0
		for _, v := range g {
			gmax = math.Max(gmax, math.Abs(v))
		}
		if gmax < tol {
			break
		}
		// two-loop recursion: dir = −H·g
		for i := range dir {
			dir[i] = -g[i]
		}
		for k := len(ss) - 1; k >= 0; k-- {
			alpha[k] = rhos[k] * dot(ss[k], dir)
			for i := range dir {
				dir[i] -= alpha[k] * ys[k][i]
			}
		}
		if k := len(ss) - 1; k >= 0 {
			scale := dot(ss[k], ys[k]) / dot(ys[k], ys[k])
			for i := range dir {
				dir[i] *= scale
			}
		} else {
			scale := 1 / math.Max(1, math.Sqrt(dot(g, g)))
			for i := range dir {
				dir[i] *= scale
			}
		}
		for k := range ss {
			b := rhos[k] * dot(ys[k], dir)
			for i := range dir {
				dir[i] += (alpha[k] - b) * ss[k][i]
			}
		}
		slope := dot(g, dir)
		if slope >= 0 { // not a descent direction: restart from the gradient
			ss, ys, rhos = nil, nil, nil
			for i := range dir {
				dir[i] = -g[i]
			}
			slope = dot(g, dir)
		}
		step, fn := 1.0, 0.0
		for ls := 0; ; ls++ {
			for i := range xn {
				xn[i] = x[i] + step*dir[i]
			}
			fn = eval(xn, gn)
			if fn <= f+1e-4*step*slope || ls == 40 {
				break
			}
			step /= 2
		}
		if !(fn < f) {
			break
		}
		s, yv := make([]float64, dim), make([]float64, dim)
		for i := range s {
			s[i], yv[i] = xn[i]-x[i], gn[i]-g[i]
		}
		if sy := dot(s, yv); sy > 1e-12 {
			if len(ss) == mem {
				ss, ys, rhos = ss[1:], ys[1:], rhos[1:]
			}
			ss, ys, rhos = append(ss, s), append(ys, yv), append(rhos, 1/sy)
		}
		rel := (f - fn) / math.Max(1, math.Abs(f))
		copy(x, xn)
		copy(g, gn)
		f = fn
		if rel < 1e-12 {
			break
		}
	}
	return x
}
