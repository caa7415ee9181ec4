package dpnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Per-sample rule tests: examples spanning several rows (a computation
// tree's rows), each with its own block of a GCN-normalised adjacency, laid
// out in a batch of fixed capacity as DP-SGD lays them out.

const rulesF, rulesC = 4, 3

// rulesData holds the examples: their feature rows, one label per row, and
// the normalised adjacency block of each.
type rulesData struct {
	x   [][][]float64 // example → row → features
	y   [][]int       // example → row → label
	adj [][][]float64 // example → its normalised block (rows × rows)
	// cross joins the first rows of consecutive examples of a batch in the
	// adjacency: a layer that reads across examples.
	cross bool
	rows  int // batch capacity
}

func newRulesData(sizes []int, seed uint64) *rulesData {
	r := rand.New(rand.NewPCG(seed, 7))
	d := &rulesData{rows: 1} // one padding row at least
	for _, n := range sizes {
		d.rows += n
		x := make([][]float64, n)
		y := make([]int, n)
		for i := range x {
			x[i] = make([]float64, rulesF)
			for j := range x[i] {
				if r.Float64() < 0.6 {
					x[i][j] = r.NormFloat64()
				}
			}
			y[i] = r.IntN(rulesC)
		}
		// a random connected block with self-loops: D^-½(A+I)D^-½
		a := make([][]float64, n)
		for i := range a {
			a[i] = make([]float64, n)
			a[i][i] = 1
			if i > 0 {
				j := r.IntN(i) // a tree edge keeps the block connected
				a[i][j], a[j][i] = 1, 1
			}
		}
		for i := range n {
			for j := range i {
				if r.Float64() < 0.3 {
					a[i][j], a[j][i] = 1, 1
				}
			}
		}
		deg := make([]float64, n)
		for i := range a {
			for _, v := range a[i] {
				deg[i] += v
			}
		}
		for i := range a {
			for j := range a[i] {
				a[i][j] /= math.Sqrt(deg[i] * deg[j])
			}
		}
		d.x, d.y, d.adj = append(d.x, x), append(d.y, y), append(d.adj, a)
	}
	return d
}

// rulesBatch is a model's batch inputs: dense and sparse features, the
// adjacency, the loss and the row groups.
type rulesBatch struct {
	d      *rulesData
	groups *nn.RowGroups
	xd     *G.Node
	xbuf   []float64
	xs     *nn.Sparse
	adj    *nn.Sparse
	ce     *nn.CrossEntropy
}

func newRulesBatch(m *nn.Model, d *rulesData) *rulesBatch {
	R := d.rows
	b := &rulesBatch{d: d, groups: &nn.RowGroups{Of: make([]int, R)}, xbuf: make([]float64, R*rulesF)}
	b.xd = m.Input("X", b.xbuf, R, rulesF)
	b.xs = nn.NewSparse("Xs", &graphs.CSR{Rows: R, Cols: rulesF, Indptr: make([]int, R+1)})
	b.adj = nn.NewSparse("A", &graphs.CSR{Rows: R, Cols: R, Indptr: make([]int, R+1)})
	return b
}

// fill lays the examples' rows out in order (example k of ex gets group
// k), their adjacency blocks on the diagonal, and makes the loss count
// every row of theirs; the other rows are padding.
func (b *rulesBatch) fill(ex []int) error {
	d, R := b.d, b.d.rows
	clear(b.xbuf)
	labels := make([]int, R)
	var live, xsrc, xdst, asrc, adst, firsts []int
	var xval, aval []float64
	for r := range b.groups.Of {
		b.groups.Of[r] = -1
	}
	off := 0
	for k, e := range ex {
		n := len(d.x[e])
		if off+n > R {
			return fmt.Errorf("batch of %d rows cannot hold example %d", R, e)
		}
		firsts = append(firsts, off)
		for i := range n {
			r := off + i
			b.groups.Of[r] = k
			copy(b.xbuf[r*rulesF:], d.x[e][i])
			for j, v := range d.x[e][i] {
				if v != 0 {
					xsrc, xdst, xval = append(xsrc, r), append(xdst, j), append(xval, v)
				}
			}
			labels[r] = d.y[e][i]
			live = append(live, r)
			for j, v := range d.adj[e][i] {
				if v != 0 {
					asrc, adst, aval = append(asrc, r), append(adst, off+j), append(aval, v)
				}
			}
		}
		off += n
	}
	if d.cross {
		for k := 0; k+1 < len(firsts); k++ {
			u, v := firsts[k], firsts[k+1]
			asrc, adst, aval = append(asrc, u, v), append(adst, v, u), append(aval, 0.5, 0.5)
		}
	}
	b.groups.Samples = len(ex)
	if err := nn.SetValue(b.xd, b.xbuf); err != nil {
		return err
	}
	if err := b.xs.Set(graphs.FromCOO(R, rulesF, xsrc, xdst, xval)); err != nil {
		return err
	}
	if err := b.adj.Set(graphs.FromCOO(R, R, asrc, adst, aval)); err != nil {
		return err
	}
	return b.ce.SetRows(live, labels)
}

// colScaleRule is a per-sample rule written outside nn, for a custom op
// y = x∘s (column scales s): example k's gradient is Σ_{r∈k} δᵣ∘xᵣ.
type colScaleRule struct{ x *G.Node }

func (r colScaleRule) NormSq(delta *G.Node, groups *nn.RowGroups, name string) (*G.Node, error) {
	return nn.GhostNormSq(nil, G.Must(G.HadamardProd(delta, r.x)), groups, name)
}
func (r colScaleRule) ClippedSum(cd *G.Node) (*G.Node, error) {
	return nn.ColSums(G.Must(G.HadamardProd(cd, r.x))), nil
}
func (colScaleRule) String() string                      { return "column-scale" }
func (r colScaleRule) Inputs() ([]*G.Node, []*nn.Sparse) { return []*G.Node{r.x}, nil }

// rowwiseRule is a deliberately wrong rule for y = a·W: it takes every row
// for its own example (the Gram form without its cross terms), so it is
// wrong for examples that span several rows.
type rowwiseRule struct {
	a    *G.Node
	rows *nn.RowGroups
}

func (r rowwiseRule) NormSq(delta *G.Node, _ *nn.RowGroups, name string) (*G.Node, error) {
	return nn.GhostNormSq(r.a, delta, r.rows, name)
}
func (r rowwiseRule) ClippedSum(cd *G.Node) (*G.Node, error) { return nn.MatMulTA(r.a, cd), nil }
func (rowwiseRule) String() string                           { return "rowwise-linear (wrong)" }
func (r rowwiseRule) Inputs() ([]*G.Node, []*nn.Sparse)      { return []*G.Node{r.a}, nil }

// negatedRule has LinearWeight's norms but sums the negated gradients: a
// rule whose norms are right and whose clipped sum is wrong.
type negatedRule struct{ nn.LinearWeight }

func (r negatedRule) ClippedSum(cd *G.Node) (*G.Node, error) {
	g, err := r.LinearWeight.ClippedSum(cd)
	if err != nil {
		return nil, err
	}
	return G.Neg(g)
}
func (negatedRule) String() string { return "negated-linear (wrong)" }

// rulesModels are models whose recorded paths CheckPerSample must pass
// (wrong == "") or fail, naming the parameter wrong.
var rulesModels = []struct {
	name  string
	cross bool
	wrong string
	build func(m *nn.Model, b *rulesBatch) *G.Node
}{
	{name: "linear-dense", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		return layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG).Forward(b.xd)
	}},
	{name: "linear-sparse", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		return layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG).ForwardSparse(b.xs)
	}},
	{name: "features-linear-dense", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		l := layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG)
		return (&layers.Features{N: b.d.rows, F: rulesF, Dense: b.xd}).Linear(m, l, 0.3)
	}},
	{name: "features-linear-sparse", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		l := layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG)
		return (&layers.Features{N: b.d.rows, F: rulesF, Sparse: b.xs}).Linear(m, l, 0.3)
	}},
	{name: "mlp-groupnorm", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		p, err := layers.NewMLP(m, "mlp", layers.MLPConfig{Dims: []int{rulesF, 5, 4, rulesC}, Activation: layers.SELU, Norm: layers.NormGroup, PlainLast: true})
		if err != nil {
			panic(err)
		}
		return p.Forward(b.xd)
	}},
	// widths 6 > F: (Â·X)·W for dense features (InputFirst), then Â·(H·W)
	{name: "gcn-input-first", build: buildGCN(6, false)},
	// width 3 < F: Â·(X·W) for dense features
	{name: "gcn-dense", build: buildGCN(3, false)},
	{name: "gcn-sparse", build: buildGCN(6, true)},
	{name: "custom-rule-via-record", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		s := m.NewParam("scale", nn.Uniform(1), rulesF)
		y := m.Record(nn.MulRow(b.xd, s.Node), s, colScaleRule{x: b.xd})
		return layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG).Forward(nn.ReLU(y))
	}},
	// Wrong rules: the check must fail and name the parameter.
	{name: "wrong-input", wrong: "lin.W", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		l := layers.NewLinear(m, "lin", rulesF, rulesC, false, layers.InitPyG)
		twice := G.Must(G.Add(b.xd, b.xd))
		// y = (2x)·W recorded as if it were x·W: norms a quarter, gradients half
		return m.Record(nn.MatMul(twice, l.W.Node), l.W, nn.LinearWeight{Input: b.xd})
	}},
	{name: "wrong-row-groups", wrong: "lin.W", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		l := layers.NewLinear(m, "lin", rulesF, rulesC, false, layers.InitPyG)
		rows := &nn.RowGroups{Of: make([]int, b.d.rows)}
		rows.Singletons(b.d.rows)
		return m.Record(nn.MatMul(b.xd, l.W.Node), l.W, rowwiseRule{a: b.xd, rows: rows})
	}},
	{name: "wrong-clipped-sum", wrong: "gradient entry", build: func(m *nn.Model, b *rulesBatch) *G.Node {
		l := layers.NewLinear(m, "lin", rulesF, rulesC, false, layers.InitPyG)
		return m.Record(nn.MatMul(b.xd, l.W.Node), l.W, negatedRule{nn.LinearWeight{Input: b.xd}})
	}},
	// GCNConv's rules hold only for an adjacency that keeps examples apart.
	{name: "gcn-cross-example", cross: true, wrong: "gcn.", build: buildGCN(6, false)},
}

// buildGCN is a two-layer GCN (GCNConv.ForwardInput, ReLU, GCNConv.Forward)
// on the batch adjacency, over dense or sparse features.
func buildGCN(hidden int, sparse bool) func(m *nn.Model, b *rulesBatch) *G.Node {
	return func(m *nn.Model, b *rulesBatch) *G.Node {
		l1 := layers.NewGCNConv(m, "gcn.0", b.adj, rulesF, hidden)
		l2 := layers.NewGCNConv(m, "gcn.1", b.adj, hidden, rulesC)
		x := &layers.Features{N: b.d.rows, F: rulesF, Dense: b.xd}
		if sparse {
			x = &layers.Features{N: b.d.rows, F: rulesF, Sparse: b.xs}
		}
		return l2.Forward(nn.ReLU(l1.ForwardInput(m, x, 0.2)))
	}
}

// buildRulesModel builds tc's model on d (recording its path when record).
func buildRulesModel(t *testing.T, d *rulesData, build func(*nn.Model, *rulesBatch) *G.Node, record bool) (*nn.Model, *rulesBatch) {
	t.Helper()
	m := nn.NewModel(5)
	var b *rulesBatch
	err := nn.Build(func() error {
		b = newRulesBatch(m, d)
		if record {
			m.StartRecording()
		}
		logits := build(m, b)
		m.StopRecording()
		var err error
		b.ce, err = nn.NewCrossEntropy(m, logits, "loss")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

var rulesSizes = []int{1, 3, 2, 1, 4, 2}

// TestCheckPerSampleLayers: every built-in layer that records a rule, and a
// rule written outside nn and registered with Model.Record, passes the
// check on examples of several rows each; a rule deliberately wrong (wrong
// input, row groups ignored) and a GCNConv whose adjacency joins two
// examples fail it, with an error naming the parameter and the example.
func TestCheckPerSampleLayers(t *testing.T) {
	for _, tc := range rulesModels {
		t.Run(tc.name, func(t *testing.T) {
			d := newRulesData(rulesSizes, 3)
			d.cross = tc.cross
			m, b := buildRulesModel(t, d, tc.build, true)
			all := []int{0, 1, 2, 3, 4, 5}
			res, err := m.CheckPerSample(nn.PerSampleCheck{Loss: b.ce.PerRow, Groups: b.groups, Fill: b.fill, Examples: all})
			if tc.wrong == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != len(m.Params) {
					t.Fatalf("%d results for %d parameters", len(res), len(m.Params))
				}
				for _, r := range res {
					if r.NormErr > 1e-9 || r.GradErr > 1e-9 {
						t.Errorf("%s (%s): relative errors %.2g (norm), %.2g (gradient)", r.Param, r.Rule, r.NormErr, r.GradErr)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("a wrong rule passed: %+v", res)
			}
			t.Log(err)
			for _, want := range []string{tc.wrong, "disagrees with example", "computed alone"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestCheckPerSampleRefusals: the check refuses what DP-SGD refuses (a
// parameter without a rule, BatchNorm) and malformed requests, with an
// error that says what is wrong.
func TestCheckPerSampleRefusals(t *testing.T) {
	d := newRulesData(rulesSizes, 3)
	cases := []struct {
		name  string
		build func(*nn.Model, *rulesBatch) *G.Node
		edit  func(*nn.PerSampleCheck)
		want  string
	}{
		{"no-rule", func(m *nn.Model, b *rulesBatch) *G.Node {
			l := layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG)
			return l.Affine(b.xd) // not recorded
		}, nil, "parameter lin.W has no per-sample gradient rule"},
		{"batchnorm", func(m *nn.Model, b *rulesBatch) *G.Node {
			p, err := layers.NewMLP(m, "mlp", layers.MLPConfig{Dims: []int{rulesF, 5, rulesC}, Activation: layers.ReLU, Norm: layers.NormBatch, PlainLast: true})
			if err != nil {
				panic(err)
			}
			return p.Forward(b.xd)
		}, nil, "mixes samples"},
		{"no-examples", rulesModels[0].build, func(c *nn.PerSampleCheck) { c.Examples = nil }, "at least one example"},
		{"no-fill", rulesModels[0].build, func(c *nn.PerSampleCheck) { c.Fill = nil }, "fill function"},
		{"bad-tolerance", rulesModels[0].build, func(c *nn.PerSampleCheck) { c.Tol = -1 }, "tolerance"},
		{"fill-without-groups", rulesModels[0].build, func(c *nn.PerSampleCheck) {
			f := c.Fill
			c.Fill = func(ex []int) error { err := f(ex); c.Groups.Samples = 0; return err }
		}, "fill set 0 examples"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, b := buildRulesModel(t, d, tc.build, true)
			c := nn.PerSampleCheck{Loss: b.ce.PerRow, Groups: b.groups, Fill: b.fill, Examples: []int{0, 1}}
			if tc.edit != nil {
				tc.edit(&c)
			}
			_, err := m.CheckPerSample(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestRecordMisuse: Model.Record's programming errors come back from
// nn.Build as errors, not crashes.
func TestRecordMisuse(t *testing.T) {
	other := nn.NewModel(1)
	foreign := other.NewParam("foreign", nn.Constant(1), 2, 2)
	for _, tc := range []struct {
		name string
		rec  func(m *nn.Model, x *G.Node, w *nn.Param)
		want string
	}{
		{"nil-rule", func(m *nn.Model, x *G.Node, w *nn.Param) { m.Record(x, w, nil) }, "needs an output, a parameter and a rule"},
		{"foreign-param", func(m *nn.Model, x *G.Node, _ *nn.Param) { m.Record(x, foreign, nn.Bias{}) }, "not a parameter of this model"},
		{"vector-output", func(m *nn.Model, x *G.Node, w *nn.Param) { m.Record(G.Must(nn.SumAll(nn.RowSums(x))), w, nn.Bias{}) }, "must be a matrix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := nn.NewModel(1)
			err := nn.Build(func() error {
				w := m.NewParam("w", nn.Constant(1), 2, 2)
				x := m.Input("x", make([]float64, 4), 2, 2)
				m.StartRecording()
				tc.rec(m, x, w)
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestGCNConvDPSGDMatchesPerExampleReference: a two-layer GCN trains under
// DP-SGD (on the old code BuildSGD refused it: its parameters had no
// per-sample rule), and one step with the noise off and B = 1 releases
// exactly Σ_k c_k·g_k, with g_k each example's gradient computed alone on
// a plain (unrecorded) copy of the model and c_k = min(1, C/‖g_k‖): the
// clipped contribution of every example is bounded by C, the sensitivity
// the accountant is told.
func TestGCNConvDPSGDMatchesPerExampleReference(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hidden int
		sparse bool
		clip   float64
	}{
		{"input-first", 6, false, 0.3},
		{"dense", 3, false, 0.5},
		{"sparse", 6, true, 0.4},
		{"no-clipping", 6, false, 1e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newRulesData(rulesSizes, 9)
			ex := []int{0, 1, 2, 3, 4, 5}
			m, b := buildRulesModel(t, d, buildGCN(tc.hidden, tc.sparse), true)
			s, err := BuildSGD(m, b.ce.PerRow, SGDConfig{Clip: tc.clip, Multiplier: 0, Rate: 1, Samples: 1, Capacity: d.rows}, dp.NewSource(1), nil)
			if err != nil {
				t.Fatal(err)
			}
			b.groups = s.Groups
			if err := b.fill(ex); err != nil {
				t.Fatal(err)
			}
			if _, err := m.StepMode(false); err != nil {
				t.Fatal(err)
			}
			got, err := m.Grads()
			if err != nil {
				t.Fatal(err)
			}

			ref, rb := buildRulesModel(t, d, buildGCN(tc.hidden, tc.sparse), false)
			if err := ref.Compile(G.Must(nn.SumAll(rb.ce.PerRow)), nil); err != nil {
				t.Fatal(err)
			}
			want := make([][]float64, len(ref.Params))
			for i, p := range ref.Params {
				want[i] = make([]float64, p.Size())
			}
			clipped := 0
			for _, e := range ex {
				if err := rb.fill([]int{e}); err != nil {
					t.Fatal(err)
				}
				if _, err := ref.StepMode(false); err != nil {
					t.Fatal(err)
				}
				g, err := ref.Grads()
				if err != nil {
					t.Fatal(err)
				}
				n2 := 0.0
				for _, gi := range g {
					for _, v := range gi {
						n2 += v * v
					}
				}
				if n2 == 0 {
					t.Fatalf("example %d has a zero gradient: the test does not exercise it", e)
				}
				c := math.Min(1, tc.clip/(math.Sqrt(n2)+1e-6))
				if c < 1 {
					clipped++
				}
				for i, gi := range g {
					for j, v := range gi {
						want[i][j] += c * v
					}
				}
			}
			if tc.clip < 1 && clipped == 0 {
				t.Fatal("no example was clipped: the test does not exercise clipping")
			}
			for i, p := range m.Params {
				for j := range want[i] {
					if diff := math.Abs(got[i][j] - want[i][j]); diff > 1e-9*math.Max(1, math.Abs(want[i][j])) {
						t.Fatalf("%s[%d]: DP-SGD %.12g, per-example reference %.12g", p.Name, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}

// TestCheckPerSampleGANPlayers: ASGL's GAN players record sparse
// embedding-lookup rules over examples of several pairs (each pair two
// rows, U's and V's); both kinds pass the check.
func TestCheckPerSampleGANPlayers(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const nodes, dim, capacity = 7, 3, 8
	// example → its pairs (1 to 3)
	var examples [][]layers.GANPair
	for range 5 {
		var ps []layers.GANPair
		for range 1 + r.IntN(3) {
			u, v := r.IntN(nodes), r.IntN(nodes)
			sign := 1.0
			if r.IntN(2) == 0 {
				sign = -1
			}
			ps = append(ps, layers.GANPair{U: u, V: v, Sign: sign, Target: float64(r.IntN(2)), Weight: 0.5 + r.Float64()})
		}
		examples = append(examples, ps)
	}
	for _, kind := range []layers.GANKind{layers.Discriminator, layers.Generator} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			m := nn.NewModel(2)
			m.StartRecording()
			p, err := layers.NewGANPlayer(m, "g", kind, nodes, dim, capacity)
			if err != nil {
				t.Fatal(err)
			}
			m.StopRecording()
			for _, v := range [][]float64{p.Emb.Value(), p.Bias.Value()} {
				for i := range v {
					v[i] = r.NormFloat64() // a nonzero bias too
				}
			}
			groups := &nn.RowGroups{Of: make([]int, 2*capacity)}
			fill := func(ex []int) error {
				var pairs []layers.GANPair
				for k, e := range ex {
					for _, q := range examples[e] {
						q.Sample = k
						pairs = append(pairs, q)
					}
				}
				return p.SetPairs(pairs, groups, len(ex))
			}
			res, err := m.CheckPerSample(nn.PerSampleCheck{Loss: p.PerRow, Groups: groups, Fill: fill, Examples: []int{0, 1, 2, 3}})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range res {
				if x.NormErr > 1e-9 || x.GradErr > 1e-9 {
					t.Errorf("%s (%s): relative errors %.2g, %.2g", x.Param, x.Rule, x.NormErr, x.GradErr)
				}
			}
		})
	}
}

// TestBuildSGDRefusesPathsWithoutRules: DP-SGD refuses, naming the
// parameter, a parameter with no per-sample rule on the recorded path, one
// recorded twice (a shared weight), and a rule whose recorded output does
// not have the loss's rows (it would index examples by the wrong rows).
func TestBuildSGDRefusesPathsWithoutRules(t *testing.T) {
	d := newRulesData(rulesSizes, 3)
	for _, tc := range []struct {
		name  string
		build func(*nn.Model, *rulesBatch) *G.Node
		want  string
	}{
		{"no-rule", func(m *nn.Model, b *rulesBatch) *G.Node {
			return layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG).Affine(b.xd)
		}, "parameter lin.W has no per-sample gradient rule on the training path"},
		{"shared-weight", func(m *nn.Model, b *rulesBatch) *G.Node {
			l := layers.NewLinear(m, "lin", rulesF, rulesF, true, layers.InitPyG)
			return l.Forward(nn.ReLU(l.Forward(b.xd)))
		}, "parameter lin.W is used twice"},
		{"rows-not-batch-rows", func(m *nn.Model, b *rulesBatch) *G.Node {
			y := layers.NewLinear(m, "lin", rulesF, rulesC, true, layers.InitPyG).Forward(b.xd)
			idx := make([]int, b.d.rows-1)
			for i := range idx {
				idx[i] = i
			}
			return G.Must(nn.GatherRows(y, idx, "first"))
		}, fmt.Sprintf("parameter lin.W (linear-weight): its recorded output has %d rows, the per-row loss %d", d.rows, d.rows-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, b := buildRulesModel(t, d, tc.build, true)
			rows := b.ce.PerRow.Shape()[0]
			_, err := BuildSGD(m, b.ce.PerRow, SGDConfig{Clip: 1, Multiplier: 1, Rate: 0.5, Samples: 4, Capacity: rows}, dp.NewSource(1), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
