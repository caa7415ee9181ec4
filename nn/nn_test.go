package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
)

func randCSR(rng *rand.Rand, rows, cols int, density float64) *graphs.CSR {
	var src, dst []int
	var val []float64
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if rng.Float64() < density {
				src, dst, val = append(src, i), append(dst, j), append(val, rng.NormFloat64())
			}
		}
	}
	return graphs.FromCOO(rows, cols, src, dst, val)
}

func randSlice(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

func denseOf(a *graphs.CSR) [][]float64 {
	d := make([][]float64, a.Rows)
	for i := range d {
		d[i] = make([]float64, a.Cols)
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			d[i][a.Indices[k]] += a.Value(k)
		}
	}
	return d
}

func TestSpMMForwardMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := randCSR(rng, 7, 5, 0.4)
	x := randSlice(rng, 5*3)
	m := NewModel(1)
	xn := m.Input("x", x, 5, 3)
	s := NewSparse("A", a)
	y, err := SpMM(s, xn)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(nil, []*G.Node{y}); err != nil {
		t.Fatal(err)
	}
	if err := m.Evaluate(); err != nil {
		t.Fatal(err)
	}
	got := Values(y)
	d := denseOf(a)
	for i := 0; i < 7; i++ {
		for c := 0; c < 3; c++ {
			want := 0.0
			for j := 0; j < 5; j++ {
				want += d[i][j] * x[j*3+c]
			}
			if math.Abs(got[i*3+c]-want) > 1e-12 {
				t.Fatalf("y[%d,%d] = %v, want %v", i, c, got[i*3+c], want)
			}
		}
	}
	if s.Calls != 1 {
		t.Errorf("Calls = %d, want 1", s.Calls)
	}
}

func TestSparseTransposeRefreshesValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randCSR(rng, 6, 4, 0.5)
	s := NewSparse("A", a)
	t1 := s.T()
	for k := range a.Data {
		a.Data[k] *= 2
	}
	t2 := s.T()
	want := a.Transpose()
	for k := range want.Data {
		if t2.Data[k] != want.Data[k] || t1.Indices[k] != want.Indices[k] {
			t.Fatalf("transpose entry %d: got %v want %v", k, t2.Data[k], want.Data[k])
		}
	}
}

// buildCheckModel builds a small model that exercises every custom op and
// returns it compiled with a masked cross-entropy loss.
func buildCheckModel(t *testing.T, zeroRow bool, batchNorm bool) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	const n, f, h, c = 9, 6, 5, 3
	a := randCSR(rng, n, n, 0.3)
	xs := randCSR(rng, n, f, 0.5)
	if zeroRow {
		// make row 2 of the features empty: RowNormalize must keep it 0
		for k := xs.Indptr[2]; k < xs.Indptr[3]; k++ {
			xs.Data[k] = 0
		}
	}
	m := NewModel(7)
	var ce *CrossEntropy
	err := Build(func() error {
		w1 := m.NewParam("w1", GlorotUniform(), f, h)
		b1 := m.NewParam("b1", Uniform(0.5), h)
		g1 := m.NewParam("g1", Uniform(2), h)
		w2 := m.NewParam("w2", GlorotUniform(), 2*h, c)
		hid := G.Must(SpMM(NewSparse("X", xs), w1.Node))
		hid = AddRow(hid, b1.Node)
		hid = RowNormalize2(hid)
		var hn *G.Node
		if batchNorm {
			hn = m.BatchStandardize(hid, 1e-5, 0.1)
		} else {
			hn = m.RowStandardize(hid, 1e-5)
		}
		agg := G.Must(SpMM(NewSparse("A", a), SELU(MulRow(hn, g1.Node))))
		cat := ConcatCols(agg, ReLU(hid))
		logits := G.Must(G.Mul(cat, w2.Node))
		var err error
		ce, err = NewCrossEntropy(m, logits, "loss")
		if err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{logits})
	})
	if err != nil {
		t.Fatal(err)
	}
	labels := []int{0, 1, 2, 0, 1, 2, 0, 1, 2}
	if err := ce.SetRows([]int{0, 2, 3, 5, 8}, labels); err != nil {
		t.Fatal(err)
	}
	return m
}

// RowNormalize2 is RowNormalize with Must, for building test graphs.
func RowNormalize2(x *G.Node) *G.Node { return G.Must(RowNormalize(x)) }

func TestGradCheckCustomOps(t *testing.T) {
	for _, tc := range []struct {
		name      string
		zeroRow   bool
		batchNorm bool
	}{{"rownorm", false, false}, {"zero-row", true, false}, {"batchnorm", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := buildCheckModel(t, tc.zeroRow, tc.batchNorm)
			res, err := m.GradCheck(1e-4, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.MaxRel > 1e-6 {
					t.Errorf("%s: max relative error %.3g at %d (abs %.3g)", r.Param, r.MaxRel, r.WorstIdx, r.MaxAbs)
				}
				if r.Checked == 0 {
					t.Errorf("%s: nothing checked", r.Param)
				}
			}
		})
	}
}

// brokenSpMM is SpMM with a deliberately wrong gradient: it applies A
// instead of Aᵀ to the output gradient.
type brokenSpMM struct{ *spmmOp }

func (op brokenSpMM) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	n, err := G.ApplyOp(op.spmmOp, grad)
	return G.Nodes{n}, err
}

func TestGradCheckDetectsBrokenGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	a := randCSR(rng, 6, 6, 0.5) // square, not symmetric
	m := NewModel(1)
	x := m.Input("x", randSlice(rng, 6*4), 6, 4)
	w := m.NewParam("w", GlorotUniform(), 4, 3)
	var ce *CrossEntropy
	err := Build(func() error {
		h := G.Must(G.Mul(x, w.Node))
		logits := G.Must(G.ApplyOp(brokenSpMM{&spmmOp{s: NewSparse("A", a)}}, h))
		var err error
		if ce, err = NewCrossEntropy(m, logits, "loss"); err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{logits})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ce.SetRows([]int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2, 0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	res, err := m.GradCheck(1e-4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MaxRel < 1e-2 {
		t.Fatalf("a wrong gradient passed the check: worst relative error %.3g", res[0].MaxRel)
	}
}

// TestGradCheckMovesOffKinks: a ReLU pre-activation 1.5e-5 from its kink
// makes the stencil at h = 1e-4 cross it; the check confirms the entry
// after moving it and counts the move, while the broken gradient above
// still fails.
func TestGradCheckMovesOffKinks(t *testing.T) {
	m := NewModel(1)
	// h = x·w = [w0, w0 + 2·w1]: h0 = 1.5e-5 sits next to ReLU's kink.
	x := m.Input("x", []float64{1, 0, 1, 2}, 2, 2)
	w := m.NewParam("w", Constant(0), 2, 1)
	copy(w.Value(), []float64{1.5e-5, 3})
	var ce *CrossEntropy
	err := Build(func() error {
		h := G.Must(G.Mul(x, w.Node))
		logits := G.Must(G.Concat(1, h, ReLU(h)))
		var err error
		if ce, err = NewCrossEntropy(m, logits, "loss"); err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{logits})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ce.SetRows([]int{0, 1}, []int{1, 0}); err != nil {
		t.Fatal(err)
	}
	res, err := m.GradCheck(1e-4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MaxRel > 1e-6 {
		t.Fatalf("gradient of w: worst relative error %.3g at %d after the move", res[0].MaxRel, res[0].WorstIdx)
	}
	if res[0].Moved != 1 {
		t.Fatalf("moved %d entries, want 1 (w[0], 1.5e-5 from the ReLU's kink)", res[0].Moved)
	}
}

func TestRowNormalizeZeroRowsStayZero(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", []float64{3, 4, 0, 0, 1, 0}, 3, 2)
	y := G.Must(RowNormalize(x))
	if err := m.Compile(nil, []*G.Node{y}); err != nil {
		t.Fatal(err)
	}
	if err := m.Evaluate(); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.6, 0.8, 0, 0, 1, 0}
	for i, v := range Values(y) {
		if math.Abs(v-want[i]) > 1e-15 {
			t.Fatalf("y = %v, want %v", Values(y), want)
		}
	}
}

func TestDropoutIsSeededAndOffInEval(t *testing.T) {
	run := func(seed uint64) ([]float64, []float64) {
		m := NewModel(seed)
		x := m.Input("x", []float64{1, 1, 1, 1, 1, 1, 1, 1}, 2, 4)
		y := m.Dropout(x, 0.5)
		w := m.NewParam("w", Constant(1), 4, 1)
		loss := G.Must(G.Sum(G.Must(G.Mul(y, w.Node))))
		if err := m.Compile(loss, []*G.Node{y}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Step(); err != nil {
			t.Fatal(err)
		}
		tr := append([]float64(nil), Values(y)...)
		if err := m.Evaluate(); err != nil {
			t.Fatal(err)
		}
		return tr, append([]float64(nil), Values(y)...)
	}
	a, ev := run(3)
	b, _ := run(3)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("dropout masks differ for the same seed")
		}
		if a[i] != 0 && a[i] != 2 {
			t.Fatalf("training dropout value %v, want 0 or 2", a[i])
		}
		if ev[i] != 1 {
			t.Fatalf("evaluation should be the identity, got %v", ev)
		}
	}
}

func TestAdamMatchesReference(t *testing.T) {
	// One-dimensional f(p) = p², p0 = 1, lr 0.1: PyTorch's first Adam step
	// moves p by exactly lr (m̂/√v̂ = ±1), then by lr·m̂/(√v̂+ε).
	p := [][]float64{{1}}
	a := NewAdam(0.1, 0)
	a.Step(p, [][]float64{{2}})
	if math.Abs(p[0][0]-0.9) > 1e-7 {
		t.Fatalf("after one step p = %v, want 0.9", p[0][0])
	}
	p1 := 1 - 0.2/(2+1e-8)
	a.Step(p, [][]float64{{1.8}})
	// m = 0.9·0.2+0.18 = 0.36 → m̂ = 0.36/0.19; v = 0.999·0.004+0.001·3.24 = 0.007236 → v̂ = 0.007236/0.001999
	mh := 0.36 / 0.19
	vh := 0.007236 / (1 - 0.999*0.999)
	want := p1 - 0.1*mh/(math.Sqrt(vh)+1e-8)
	if math.Abs(p[0][0]-want) > 1e-12 {
		t.Fatalf("after two steps p = %.15g, want %.15g", p[0][0], want)
	}
}

func TestGatherRowsGradientWithRepeatedIndices(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	m := NewModel(2)
	x := m.Input("x", randSlice(rng, 5*3), 5, 3)
	w := m.NewParam("w", GlorotUniform(), 3, 4)
	var ce *CrossEntropy
	err := Build(func() error {
		h := SELU(G.Must(G.Mul(x, w.Node)))
		rows := G.Must(GatherRows(h, []int{4, 1, 1, 0, 4, 4}, "batch"))
		var err error
		if ce, err = NewCrossEntropy(m, rows, "loss"); err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{rows})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ce.SetRows([]int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2, 3, 0, 1}); err != nil {
		t.Fatal(err)
	}
	res, err := m.GradCheck(1e-4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MaxRel > 1e-6 {
		t.Fatalf("gather gradient: worst relative error %.3g", res[0].MaxRel)
	}
	if _, err := GatherRows(x, []int{5}, "bad"); err == nil {
		t.Fatal("out-of-range index accepted")
	}
}

func TestGradientsDoNotAccumulateAcrossSteps(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", []float64{1, 2, 3, 4}, 2, 2)
	w := m.NewParam("w", Constant(1), 2, 1)
	loss := G.Must(G.Sum(G.Must(G.Mul(x, w.Node))))
	if err := m.Compile(loss, []*G.Node{loss}); err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 3; step++ {
		if _, err := m.Step(); err != nil {
			t.Fatal(err)
		}
		g, _ := w.Grad()
		if g[0] != 4 || g[1] != 6 {
			t.Fatalf("step %d: gradient %v, want [4 6]", step, g)
		}
	}
}

// A Fixed matrix's transpose keeps the values of the last Set: in-place
// writes are not looked at (that is the declaration), a Set is.
func TestFixedSparseTransposeFollowsSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randCSR(rng, 6, 4, 0.5)
	s := NewSparse("A", a).Fixed()
	want := a.Transpose()
	for _, v := range []float64{1, 2} {
		b := a.Clone()
		for k := range b.Data {
			b.Data[k] *= v
		}
		if err := s.Set(b); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got := s.T()
			for k := range want.Data {
				if got.Data[k] != want.Data[k]*v || got.Indices[k] != want.Indices[k] {
					t.Fatalf("×%v: transpose entry %d: got %v want %v", v, k, got.Data[k], want.Data[k]*v)
				}
			}
		}
	}
}

// TestRowNormalizeUnderflow: rows whose squares underflow (values near
// 1e-162, a lone 5e-324) come out with norm 1, not 2 or more, in the
// forward pass (the four-row and the one-row paths) and keep a finite
// gradient; zero rows stay zero.
func TestRowNormalizeUnderflow(t *testing.T) {
	const k = 8
	rows := [][]float64{
		{1.6e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162},
		{5e-324, 0, 0, 0, 0, 0, 0, 0},
		{3, 4, 0, 0, 0, 0, 0, 0},
		{0, 0, 0, 0, 0, 0, 0, 0},
		{1e-170, -1e-170, 1e-170, 0, 0, 0, 0, 0},
	}
	var x []float64
	for _, r := range rows {
		x = append(x, r...)
	}
	m := NewModel(1)
	var out *G.Node
	var in *G.Node
	if err := Build(func() error {
		in = m.Input("X", x, len(rows), k)
		out = G.Must(RowNormalize(in))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r, err := m.NewRunner(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	y := Values(out)
	for i := range rows {
		s := 0.0
		for _, v := range y[i*k : (i+1)*k] {
			s += v * v
		}
		want := 1.0
		if i == 3 {
			want = 0
		}
		if math.Abs(math.Sqrt(s)-want) > 1e-12 {
			t.Errorf("row %d: output norm %v, want %v", i, math.Sqrt(s), want)
		}
	}
}
