package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// reachCase is a random graph, features and output nodes for the Reach
// property tests.
type reachCase struct {
	name   string
	adj    *graphs.CSR // Â
	x      *graphs.Features
	out    []int
	layers int
	widths []int // layer output widths
	p      float64
}

// reachCases are random graphs (Chung–Lu with hubs and isolated nodes,
// directed Erdős–Rényi: Â not symmetric) with dense features narrower and
// wider than the first layer and sparse ones, stacks of 1 to 3 layers and
// output sets from a few nodes (every layer restricted) to more than 90 %
// of the nodes (none restricted).
func reachCases() []reachCase {
	var cs []reachCase
	r := rand.New(rand.NewPCG(7, 11))
	for seed := uint64(1); seed <= 6; seed++ {
		n := 40 + r.IntN(80)
		var a *graphs.CSR
		kind := "powerlaw"
		if seed%2 == 0 {
			a, kind = graphstest.RandomDirected(n, 2.5/float64(n), seed), "directed"
		} else {
			a = graphstest.PowerLaw(n, 2.5, 3, seed)
		}
		adj := graphs.GCNNorm(a)
		for _, feats := range []string{"narrow", "wide", "sparse"} {
			f := 3 + r.IntN(4)
			hidden := f + 2
			if feats == "wide" {
				hidden = f - 1
			}
			x := &graphs.Features{N: n, F: f}
			if feats == "sparse" {
				var src, dst []int
				for i := range n {
					for j := range f {
						if r.Float64() < 0.4 {
							src, dst = append(src, i), append(dst, j)
						}
					}
				}
				x.Sparse = graphs.FromCOO(n, f, src, dst, nil)
			} else {
				x.Dense = make([]float64, n*f)
				for i := range x.Dense {
					x.Dense[i] = r.NormFloat64()
				}
			}
			for _, frac := range []float64{0.05, 0.2, 0.5, 0.95} {
				out := r.Perm(n)[:max(1, int(frac*float64(n)))]
				k := 1 + r.IntN(3)
				widths := []int{hidden, hidden + 1, 3}[3-k:]
				cs = append(cs, reachCase{name: fmt.Sprintf("%s%d/%s/out%.2f/K%d", kind, seed, feats, frac, k),
					adj: adj, x: x, out: out, layers: k, widths: widths, p: 0.5})
			}
		}
	}
	return cs
}

// stack is a GCN of the case's layers over the rows r plans: ReLU and
// dropout p between layers, input dropout p.
type stack struct {
	m      *nn.Model
	convs  []*GCNConv
	logits *G.Node
	ce     *nn.CrossEntropy
	reach  *Reach
}

// buildStack builds the case's stack on a model of the given seed, over the
// rows Reach plans for out (restricted) or for every node, with the loss
// over the output nodes (labels: node mod the last width).
func buildStack(t *testing.T, c reachCase, seed uint64, restricted bool) *stack {
	t.Helper()
	s := &stack{m: nn.NewModel(seed)}
	err := nn.Build(func() error {
		x, err := NewFeatures(s.m, c.x, "X")
		if err != nil {
			return err
		}
		in := c.x.F
		for k, w := range c.widths {
			s.convs = append(s.convs, NewGCNConv(s.m, fmt.Sprintf("conv%d", k), nil, in, w))
			in = w
		}
		var out []int
		if restricted {
			out = c.out
		}
		s.reach = NewReach(nn.NewSparse("Â", c.adj), c.layers, out)
		h := s.reach.Conv(s.convs[0], 0).ForwardInput(s.m, x, c.p)
		for k := 1; k < c.layers; k++ {
			h = s.reach.Conv(s.convs[k], k).Forward(s.reach.Dropout(s.m, nn.ReLU(h), c.p, k-1))
		}
		s.logits = h
		s.m.Keep(h)
		if s.ce, err = nn.NewCrossEntropy(s.m, h, "loss"); err != nil {
			return err
		}
		return s.m.Compile(s.ce.Mean, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]int, c.adj.Rows)
	for i := range labels {
		labels[i] = i % c.widths[len(c.widths)-1]
	}
	rows, targets := c.out, labels // the full stack's loss over the same nodes
	if restricted {
		rows, targets = s.reach.Loss(labels)
	}
	if err := s.ce.SetRows(rows, targets); err != nil {
		t.Fatal(err)
	}
	return s
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// TestReachEqualsFull: on random graphs and features, a stack over the rows
// Reach plans for some output nodes gives, in training mode (dropout on),
// the logits of the stack over every node at those nodes bit for bit, the
// same loss up to the order of its sum, the same weight gradients bit for
// bit, and after five Adam steps the same parameters bit for bit.
func TestReachEqualsFull(t *testing.T) {
	restrictedLayers := 0
	for _, c := range reachCases() {
		t.Run(c.name, func(t *testing.T) {
			full := buildStack(t, c, 5, false)
			part := buildStack(t, c, 5, true)
			for k := range c.layers {
				if part.reach.Rows[k] != nil {
					restrictedLayers++
				}
			}
			out := part.reach.Out()
			C := c.widths[len(c.widths)-1]
			optF, optP := nn.NewAdam(0.05, 5e-4), nn.NewAdam(0.05, 5e-4)
			for step := range 5 {
				lf, err := full.m.Step()
				if err != nil {
					t.Fatal(err)
				}
				lp, err := part.m.Step()
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(lf-lp) > 1e-12*math.Abs(lf) {
					t.Fatalf("step %d: loss %v over the planned rows, %v over every node", step, lp, lf)
				}
				vf, vp := nn.Values(full.logits), nn.Values(part.logits)
				if out == nil {
					if !slices.EqualFunc(vf, vp, sameBits) {
						t.Fatalf("step %d: unrestricted plan, logits differ", step)
					}
				}
				for r, i := range out {
					for j := range C {
						if !sameBits(vp[r*C+j], vf[i*C+j]) {
							t.Fatalf("step %d, node %d: logit %v over the planned rows, %v over every node", step, i, vp[r*C+j], vf[i*C+j])
						}
					}
				}
				gf, err := full.m.Grads()
				if err != nil {
					t.Fatal(err)
				}
				gp, err := part.m.Grads()
				if err != nil {
					t.Fatal(err)
				}
				for q := range gf {
					if !slices.EqualFunc(gf[q], gp[q], sameBits) {
						t.Fatalf("step %d, %s: gradient %v over the planned rows, %v over every node", step, full.m.Params[q].Name, gp[q], gf[q])
					}
				}
				optF.Step(full.m.ParamValues(), gf)
				optP.Step(part.m.ParamValues(), gp)
			}
			for q, v := range full.m.ParamValues() {
				if !slices.EqualFunc(v, part.m.ParamValues()[q], sameBits) {
					t.Fatalf("%s after 5 steps: differs", full.m.Params[q].Name)
				}
			}
		})
	}
	if restrictedLayers < 40 {
		t.Fatalf("only %d restricted layers over all cases: the cases do not exercise the plan", restrictedLayers)
	}
}

// TestReachRows: the plan's rows are the output nodes (sorted) and, below
// them, exactly the nodes K−k hops reach through Â — the columns with an
// entry in the next layer's rows — unless more than 90 % of the nodes; a
// layer computing every row has every layer below it do so too; and each
// restricted adjacency is Â's rows with columns renumbered to the rows
// below.
func TestReachRows(t *testing.T) {
	for _, c := range reachCases() {
		a := nn.NewSparse("Â", c.adj)
		r := NewReach(a, c.layers, c.out)
		n := c.adj.Rows
		want := slices.Sorted(slices.Values(c.out))
		if 10*len(want) > 9*n {
			want = nil
		}
		for k := c.layers - 1; k >= 0; k-- {
			if !slices.Equal(r.Rows[k], want) {
				t.Fatalf("%s: layer %d computes %v, want %v", c.name, k, r.Rows[k], want)
			}
			if want == nil {
				if r.Adj[k] != a {
					t.Fatalf("%s: layer %d computes every row but not over Â", c.name, k)
				}
				continue
			}
			a := r.Adj[k].A
			var below []int
			if k > 0 {
				seen := map[int]bool{}
				for _, i := range want {
					for q := c.adj.Indptr[i]; q < c.adj.Indptr[i+1]; q++ {
						seen[c.adj.Indices[q]] = true
					}
				}
				for j := range n {
					if seen[j] {
						below = append(below, j)
					}
				}
				if 10*len(below) > 9*n {
					below = nil
				}
			}
			// row k of a is Â's row want[k], its columns those of below
			for q, i := range want {
				cols, vals := graphstest.Row(c.adj, i), c.adj.Data[c.adj.Indptr[i]:c.adj.Indptr[i+1]]
				got := graphstest.Row(a, q)
				if below != nil {
					for e := range got {
						got[e] = below[got[e]]
					}
				}
				if !slices.Equal(got, cols) || !slices.Equal(a.Data[a.Indptr[q]:a.Indptr[q+1]], vals) {
					t.Fatalf("%s: layer %d, row %d (node %d): columns %v values %v, Â has %v %v", c.name, k, q, i, got, a.Data[a.Indptr[q]:a.Indptr[q+1]], cols, vals)
				}
			}
			want = below
		}
	}
}

// TestReachGradCheck: the restricted stack's symbolic gradients agree with
// finite differences (nn.Model.GradCheck) on cases where every layer is
// restricted.
func TestReachGradCheck(t *testing.T) {
	checked := 0
	for _, c := range reachCases() {
		if c.layers < 2 || !strings.Contains(c.name, "out0.20") {
			continue
		}
		s := buildStack(t, c, 3, true)
		if s.reach.Rows[0] == nil {
			continue
		}
		checked++
		// A stencil of step 1e-4 can straddle two ReLU kinks at once
		// (GradCheck moves past one); a wrong gradient is wrong at both
		// steps, a straddled kink not at the smaller one.
		worst := map[string]float64{}
		for _, h := range []float64{1e-4, 1e-5} {
			res, err := s.m.GradCheck(h, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if w, ok := worst[r.Param]; !ok || r.MaxRel < w {
					worst[r.Param] = r.MaxRel
				}
			}
		}
		for p, rel := range worst {
			if rel > 1e-6 {
				t.Errorf("%s: %s: relative error %.3g", c.name, p, rel)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("only %d fully restricted cases checked", checked)
	}
}

// TestForwardInputConst: on an evaluation path (no dropout), constant
// dense features narrower than the layer start from a fixed Â·X (an input
// node, no sparse product with X) and give the bits of the same features
// not declared constant, for every row plan; wide or sparse features
// have no fixed input.
func TestForwardInputConst(t *testing.T) {
	for _, c := range reachCases() {
		if c.layers != 2 {
			continue
		}
		var vals [2][]float64
		for k, konst := range []bool{false, true} {
			m := nn.NewModel(1)
			var y *G.Node
			var l *GCNConv
			err := nn.Build(func() error {
				x, err := NewFeatures(m, c.x, "X")
				if err != nil {
					return err
				}
				x.Const = konst
				l = NewGCNConv(m, "conv", nil, c.x.F, c.widths[0])
				r := NewReach(nn.NewSparse("Â", c.adj), 1, c.out)
				y = r.Conv(l, 0).ForwardInput(m, x, 0)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			fixed := false
			for _, x := range m.G.AllNodes() {
				if strings.Contains(x.Name(), "·X") {
					fixed = true
				}
			}
			if want := konst && c.x.Dense != nil && c.x.F < l.Out; fixed != want {
				t.Fatalf("%s, const %v: fixed Â·X %v, want %v", c.name, konst, fixed, want)
			}
			run, err := m.NewRunner(y)
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Run(); err != nil {
				t.Fatal(err)
			}
			vals[k] = slices.Clone(nn.Values(y))
		}
		if !slices.EqualFunc(vals[0], vals[1], sameBits) {
			t.Fatalf("%s: constant features give other bits", c.name)
		}
	}
}

// BenchmarkReachStep is a training step (forward, loss, gradients) of a
// two-layer GCN (hidden 64, dropout 0.5) over a 2·10⁴-node csbm graph
// (average degree 10, 32 dense features) with the loss over a tenth of the
// nodes: every row of both layers, or the rows Reach plans.
func BenchmarkReachStep(b *testing.B) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 20000, Classes: 5, Features: 32, AvgDegree: 10, Homophily: 0.8, Signal: 1}, 1)
	adj := graphs.GCNNorm(g.Adj)
	out := rand.New(rand.NewPCG(1, 2)).Perm(g.N)[:g.N/10]
	for _, restricted := range []bool{false, true} {
		name := "every-row"
		if restricted {
			name = "reach"
		}
		b.Run(name, func(b *testing.B) {
			m := nn.NewModel(1)
			var ce *nn.CrossEntropy
			var r *Reach
			err := nn.Build(func() error {
				x, err := NewFeatures(m, g.X, "X")
				if err != nil {
					return err
				}
				a := nn.NewSparse("Â", adj).Fixed()
				l1, l2 := NewGCNConv(m, "gcn.0", a, g.X.F, 64), NewGCNConv(m, "gcn.1", a, 64, g.NumClasses)
				var rows []int
				if restricted {
					rows = out
				}
				r = NewReach(a, 2, rows)
				h := nn.ReLU(r.Conv(l1, 0).ForwardInput(m, x, 0.5))
				y := r.Conv(l2, 1).Forward(r.Dropout(m, h, 0.5, 0))
				if ce, err = nn.NewCrossEntropy(m, y, "loss"); err != nil {
					return err
				}
				return m.Compile(ce.Mean, nil)
			})
			if err != nil {
				b.Fatal(err)
			}
			rows, targets := out, g.Labels
			if restricted {
				rows, targets = r.Loss(g.Labels)
			}
			if err := ce.SetRows(rows, targets); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := m.Step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
