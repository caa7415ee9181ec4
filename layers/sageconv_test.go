package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// matVec is x·W (+ b) for row-major x (n×in) and W (in×out).
func matVec(x []float64, n, in int, w []float64, out int, b []float64) []float64 {
	y := make([]float64, n*out)
	for i := 0; i < n; i++ {
		for o := 0; o < out; o++ {
			s := 0.0
			if b != nil {
				s = b[o]
			}
			for c := 0; c < in; c++ {
				s += x[i*in+c] * w[c*out+o]
			}
			y[i*out+o] = s
		}
	}
	return y
}

// TestSAGEConvFormula: the layer computes PyG's SAGEConv, aggr(x)·W_l + b +
// x·W_r, row-normalised with Normalize, for every mode and switch.
func TestSAGEConvFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	a := randomAdjacency(r, 10, 10, 0.3)
	nb, err := NewNeighbours("A", a)
	if err != nil {
		t.Fatal(err)
	}
	const in, out = 5, 3
	x := randSlice(r, 10*in)
	for _, mode := range []Aggr{Sum, Mean, Max} {
		for _, opt := range []SAGEOptions{{}, {NoRootWeight: true}, {NoBias: true}, {Normalize: true}, {NoRootWeight: true, NoBias: true, Normalize: true}} {
			m := nn.NewModel(3)
			c := NewSAGEConv(m, "sage", in, out, mode, opt)
			wantParams := 3
			if opt.NoRootWeight {
				wantParams--
			}
			if opt.NoBias {
				wantParams--
			}
			if len(m.Params) != wantParams {
				t.Fatalf("%s: %d parameters, want %d", c, len(m.Params), wantParams)
			}
			xn := m.Input("x", x, 10, in)
			var y *G.Node
			err := nn.Build(func() error {
				var err error
				if y, err = c.Forward(nb, xn); err != nil {
					return err
				}
				return m.Compile(nil, []*G.Node{y})
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Evaluate(); err != nil {
				t.Fatal(err)
			}
			var b []float64
			if c.Lin.B != nil {
				b = c.Lin.B.Value()
			}
			want := matVec(aggregateRef(a, x, in, mode), 10, in, c.Lin.W.Value(), out, b)
			if c.Root != nil {
				root := matVec(x, 10, in, c.Root.W.Value(), out, nil)
				for p := range want {
					want[p] += root[p]
				}
			}
			if opt.Normalize {
				for i := 0; i < 10; i++ {
					row := want[i*out : (i+1)*out]
					n := 0.0
					for _, v := range row {
						n += v * v
					}
					for k := range row {
						row[k] /= math.Sqrt(n)
					}
				}
			}
			got := nn.Values(y)
			for p := range want {
				if math.Abs(got[p]-want[p]) > 1e-12 {
					t.Errorf("%s: out[%d][%d] = %v, want %v", c, p/out, p%out, got[p], want[p])
				}
			}
		}
	}
	m := nn.NewModel(1)
	c := NewSAGEConv(m, "sage", 2, 2, Mean, SAGEOptions{})
	rect, _ := NewNeighbours("R", &graphs.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 0, 0}})
	if _, err := c.Forward(rect, m.Input("x", make([]float64, 6), 3, 2)); err == nil {
		t.Error("the root term accepted a rectangular adjacency")
	}
}

// blockAdjacency is a block-diagonal adjacency over examples of the given
// sizes: random entries within each block only (self-loops allowed), so no
// row gathers a row of another example. Row Start[e] is example e's root.
func blockAdjacency(r *rand.Rand, sizes []int, p float64) (a *graphs.CSR, of []int, roots []int) {
	var src, dst []int
	n := 0
	for e, s := range sizes {
		roots = append(roots, n)
		for i := 0; i < s; i++ {
			of = append(of, e)
			for j := 0; j < s; j++ {
				if r.Float64() < p {
					src, dst = append(src, n+i), append(dst, n+j)
				}
			}
		}
		n += s
	}
	return graphs.FromCOO(n, n, src, dst, nil), of, roots
}

// sageModel is a two-layer SAGE network x → SAGEConv → ReLU → SAGEConv →
// cross-entropy on the given rows, recorded for DP-SGD when record.
type sageModel struct {
	m  *nn.Model
	ce *nn.CrossEntropy
}

func buildSAGE(t *testing.T, nb *Neighbours, x []float64, in int, mode Aggr, opt SAGEOptions, record bool) *sageModel {
	t.Helper()
	s := &sageModel{m: nn.NewModel(11)}
	if record {
		s.m.StartRecording()
	}
	l1 := NewSAGEConv(s.m, "sage1", in, 6, mode, opt)
	l2 := NewSAGEConv(s.m, "sage2", 6, 3, mode, opt)
	err := nn.Build(func() error {
		xn := s.m.Input("x", x, nb.A.Cols, in)
		h, err := l1.Forward(nb, xn)
		if err != nil {
			return err
		}
		logits, err := l2.Forward(nb, nn.ReLU(h))
		if err != nil {
			return err
		}
		s.ce, err = nn.NewCrossEntropy(s.m, logits, "loss")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s.m.StopRecording()
	return s
}

// ghostNorms compiles s's model (recorded) to compute, per sample of
// groups, the squared norm of its gradient over all parameters from the
// recorded per-sample rules (as DP-SGD does), and returns the node.
func ghostNorms(t *testing.T, s *sageModel, groups *nn.RowGroups) *G.Node {
	t.Helper()
	m := s.m
	recs := m.PerSampleRecords()
	if len(recs) != len(m.Params) {
		t.Fatalf("%d per-sample records for %d parameters", len(recs), len(m.Params))
	}
	var total *G.Node
	err := nn.Build(func() error {
		loss := G.Must(nn.SumAll(s.ce.PerRow))
		var probes G.Nodes
		for _, rec := range recs {
			probes = append(probes, rec.Probe)
		}
		deltas, err := m.Grad(loss, probes...)
		if err != nil {
			return err
		}
		grads := make([]*G.Node, len(m.Params))
		for i, rec := range recs {
			n, err := rec.Rule.NormSq(deltas[i], groups, rec.Param.Name)
			if err != nil {
				return err
			}
			if total == nil {
				total = n
			} else {
				total = G.Must(nn.Add(total, n))
			}
			for k, p := range m.Params {
				if p == rec.Param {
					if grads[k], err = rec.Rule.ClippedSum(deltas[i]); err != nil {
						return err
					}
				}
			}
		}
		return m.CompileGradients(loss, grads, nil, total)
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// TestSAGEConvPerSampleNorms: on the DP-SGD recording path, with rows
// grouped per example (nn.RowGroups) and an adjacency block-diagonal over
// the examples, the per-example squared gradient norms computed from the
// recorded rules (ghost norms) equal those of the gradients computed one
// example at a time on an unrecorded model with the same parameters — for
// every aggregation, with and without root weight, bias and
// normalisation. With one entry crossing two blocks the recorded norms
// are no longer per-example norms (the requirement is real).
func TestSAGEConvPerSampleNorms(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	sizes := []int{1, 4, 3, 6, 2, 5}
	a, of, roots := blockAdjacency(r, sizes, 0.4)
	const in = 4
	x := randSlice(r, a.Rows*in)
	labels := make([]int, a.Rows)
	for i := range labels {
		labels[i] = r.IntN(3)
	}
	// crossed is a with one entry more, from example 3's root to a row of
	// example 1
	src, dst := []int{roots[3]}, []int{roots[1] + 1}
	for i := 0; i < a.Rows; i++ {
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			src, dst = append(src, i), append(dst, a.Indices[k])
		}
	}
	crossed := graphs.FromCOO(a.Rows, a.Cols, src, dst, nil)
	for _, mode := range []Aggr{Sum, Mean, Max} {
		for _, opt := range []SAGEOptions{{}, {NoRootWeight: true, Normalize: true}, {NoBias: true}} {
			for _, cross := range []bool{false, true} {
				name := fmt.Sprintf("%s %+v cross=%v", mode, opt, cross)
				adj := a
				if cross {
					adj = crossed
				}
				nb, err := NewNeighbours("A", adj)
				if err != nil {
					t.Fatal(err)
				}
				dp := buildSAGE(t, nb, x, in, mode, opt, true)
				groups := &nn.RowGroups{Of: of, Samples: len(sizes)}
				total := ghostNorms(t, dp, groups)
				if err := dp.ce.SetRows(roots, labels); err != nil {
					t.Fatal(err)
				}
				if _, err := dp.m.StepMode(false); err != nil {
					t.Fatal(err)
				}
				ghost := append([]float64(nil), nn.Values(total)[:len(sizes)]...)

				ref := buildSAGE(t, nb, x, in, mode, opt, false)
				for i, p := range ref.m.Params {
					copy(p.Value(), dp.m.Params[i].Value())
				}
				if err := nn.Build(func() error {
					return ref.m.Compile(G.Must(nn.SumAll(ref.ce.PerRow)), nil)
				}); err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for e, root := range roots {
					if err := ref.ce.SetRows([]int{root}, labels); err != nil {
						t.Fatal(err)
					}
					if _, err := ref.m.StepMode(false); err != nil {
						t.Fatal(err)
					}
					want := 0.0
					grads, err := ref.m.Grads()
					if err != nil {
						t.Fatal(err)
					}
					for _, g := range grads {
						for _, v := range g {
							want += v * v
						}
					}
					if want == 0 {
						t.Fatalf("%s: example %d has a zero gradient: the comparison says nothing", name, e)
					}
					worst = math.Max(worst, math.Abs(ghost[e]-want)/want)
				}
				switch {
				case !cross && worst > 1e-10:
					t.Errorf("%s: ghost norms differ from per-example norms by %.3g (relative)", name, worst)
				case cross && worst < 1e-6:
					t.Errorf("%s: an entry across examples left the norms per-example (worst relative difference %.3g): the test cannot see a crossing", name, worst)
				}
			}
		}
	}
}

// TestSAGEOnRootedSubgraphsIsExact: a K-layer SAGE network (K = 1, 2, 3;
// every aggregation) run on the K-hop rooted subgraphs of a directed graph
// gives at each root the output it gives on the whole graph — so the
// examples DP-SGD trains on compute what the model computes on the graph,
// and their per-example gradients are exact (TestSAGEConvPerSampleNorms).
func TestSAGEOnRootedSubgraphsIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n, in, d = 50, 3, 4
	var src, dst []int
	rows, cols := make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if r.Float64() < 0.08 && rows[i] < d && cols[j] < d {
				rows[i]++
				cols[j]++
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	a := graphs.FromCOO(n, n, src, dst, nil)
	x := randSlice(r, n*in)
	roots := []int{0, 7, 13, 21, 34, 49}
	for k := 1; k <= 3; k++ {
		sub, err := degree.RootedSubgraphs(a, degree.Bound{Mode: degree.Public, D: d, Kind: degree.Out}, roots, k, in)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, len(sub.Node)*in)
		for row, w := range sub.Node {
			copy(xs[row*in:(row+1)*in], x[w*in:(w+1)*in])
		}
		for _, mode := range []Aggr{Sum, Mean, Max} {
			run := func(adj *graphs.CSR, feats []float64) []float64 {
				m := nn.NewModel(9) // same seed: same parameters
				nb, err := NewNeighbours("A", adj)
				if err != nil {
					t.Fatal(err)
				}
				var h *G.Node
				err = nn.Build(func() error {
					h = m.Input("x", feats, adj.Rows, in)
					width := in
					for l := 0; l < k; l++ {
						c := NewSAGEConv(m, fmt.Sprintf("sage%d", l), width, 5, mode, SAGEOptions{})
						var err error
						if h, err = c.Forward(nb, h); err != nil {
							return err
						}
						h, width = nn.ReLU(h), 5
					}
					return m.Compile(nil, []*G.Node{h})
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Evaluate(); err != nil {
					t.Fatal(err)
				}
				return nn.Values(h)
			}
			full, blocks := run(a, x), run(sub.Adj, xs)
			for e, u := range roots {
				root := sub.Start[e]
				for c := 0; c < 5; c++ {
					if got, want := blocks[root*5+c], full[u*5+c]; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
						t.Errorf("K=%d %s root %d: output %v on its subgraph, %v on the graph", k, mode, u, got, want)
					}
				}
			}
		}
	}
}
