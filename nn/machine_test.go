package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// machineModel builds a graph mixing the package's ops and gorgonia's
// (elementwise binary, unary, matrix product, reductions, a reshape) with a
// scalar loss, returning the model, the loss and an output.
func machineModel(t *testing.T, seed uint64) (*Model, *G.Node, *G.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	m := NewModel(seed)
	a := randCSR(rng, 9, 9, 0.3)
	x := m.Input("x", randSlice(rng, 9*5), 9, 5)
	w := m.NewParam("w", GlorotUniform(), 5, 4)
	b := m.NewParam("b", Constant(0.1), 4)
	v := m.NewParam("v", GlorotUniform(), 8, 3)
	var loss, out *G.Node
	err := Build(func() error {
		h := AddRow(MatMul(x, w.Node), b.Node)
		h = SELU(G.Must(SpMM(NewSparse("A", a), h)))
		h2 := G.Must(G.Neg(G.Must(G.Square(h))))
		hh := ConcatCols(G.Must(RowNormalize(h)), G.Must(G.HadamardProd(h, h2)))
		logits := MatMul(hh, v.Node)
		r := G.Must(G.Reshape(logits, tensor.Shape{27}))
		out = G.Must(LogSoftmax(logits))
		loss = G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(r)))), G.Must(G.Sum(G.Must(G.HadamardProd(out, out))))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, loss, out
}

// TestMachineMatchesTapeMachine runs the same graph on the machine (twice:
// the second run reuses every buffer) and on gorgonia's TapeMachine: loss,
// gradients and output agree exactly. Slots are shared (fewer slots than
// dense op nodes) and no dense op other than gorgonia's reductions and the
// reshape allocates.
func TestMachineMatchesTapeMachine(t *testing.T) {
	m, loss, out := machineModel(t, 3)
	if err := m.Compile(loss, []*G.Node{out}); err != nil {
		t.Fatal(err)
	}
	var got []float64
	var gotLoss float64
	for run := 0; run < 3; run++ {
		l, err := m.StepMode(false)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		cur := append([]float64(nil), Values(out)...)
		for _, g := range gs {
			cur = append(cur, g...)
		}
		if run > 0 && (l != gotLoss || !equalSlices(cur, got)) {
			t.Fatalf("run %d differs from run 0", run)
		}
		got, gotLoss = cur, l
	}
	for op, n := range m.Fallbacks() {
		if !strings.HasPrefix(op, "Σ") && !strings.HasPrefix(op, "Reshape") {
			t.Errorf("op %s allocated its output in %d runs", op, n)
		}
	}
	dense := 0
	for _, s := range m.trainVM.steps {
		if s.kind == prealloc || s.kind == unaryCopy {
			dense++
		}
	}
	if len(m.trainVM.slots) >= dense {
		t.Errorf("%d slots for %d buffered nodes: nothing shared", len(m.trainVM.slots), dense)
	}

	// The reference: gorgonia's TapeMachine on a fresh copy of the graph.
	ref, rloss, rout := machineModel(t, 3)
	grads, err := G.Grad(rloss, ref.Learnables()...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(ref.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	want := append([]float64(nil), Values(rout)...)
	for _, g := range grads {
		want = append(want, Values(g)...)
	}
	if gotLoss != ScalarValue(rloss) {
		t.Errorf("loss %v, TapeMachine %v", gotLoss, ScalarValue(rloss))
	}
	if !equalSlices(got, want) {
		t.Errorf("output and gradients differ from the TapeMachine's:\n%v\n%v", got, want)
	}
}

func equalSlices(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// TestMachinePinsViews: Reshape returns a view of its input; the input's
// buffer must not be handed to a later node while the view is read.
func TestMachinePinsViews(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	var y *G.Node
	err := Build(func() error {
		a := G.Must(G.Neg(x))                         // slot s
		r := G.Must(G.Reshape(a, tensor.Shape{3, 2})) // a view of s
		b := G.Must(G.Square(x))                      // would reuse s if a were released
		c := G.Must(G.Add(G.Must(G.Reshape(b, tensor.Shape{3, 2})), r))
		y = G.Must(G.Add(c, G.Must(G.Neg(G.Must(G.Reshape(x, tensor.Shape{3, 2}))))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(nil, []*G.Node{y}); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if err := m.Evaluate(); err != nil {
			t.Fatal(err)
		}
		// x² − x − x
		want := []float64{-1, 0, 3, 8, 15, 24}
		if !equalSlices(Values(y), want) {
			t.Fatalf("run %d: %v, want %v", run, Values(y), want)
		}
	}
}

// TestMachineKeep: Keep makes an intermediate node readable after a step.
func TestMachineKeep(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", []float64{1, -2, 3, -4}, 2, 2)
	w := m.NewParam("w", Constant(2), 2, 2)
	var h, loss *G.Node
	if err := Build(func() error {
		h = SELU(MatMul(x, w.Node))
		loss = G.Must(G.Sum(G.Must(G.Square(G.Must(G.Neg(h))))))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m.Keep(h)
	if err := m.Compile(loss, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Step(); err != nil {
		t.Fatal(err)
	}
	// rows (1,−2)·2 = (−2,−2) and (3,−4)·2 = (−2,−2): SELU(−2) everywhere
	want := seluLambda * seluAlpha * (math.Exp(-2) - 1)
	for _, v := range Values(h) {
		if math.Abs(v-want) > 1e-15 {
			t.Fatalf("kept node %v, want %v", Values(h), want)
		}
	}
}

// TestSnapshotInto: a snapshot written into an earlier one reuses its
// buffers and holds the current values, and Restore brings them back.
func TestSnapshotInto(t *testing.T) {
	m := NewModel(2)
	p := m.NewParam("w", GlorotUniform(), 3, 4)
	first := m.Snapshot()
	vals := p.Value()
	for i := range vals {
		vals[i] += float64(i + 1)
	}
	want := append([]float64(nil), vals...)
	second := m.SnapshotInto(first)
	if second != first || &second.Params[0][0] != &first.Params[0][0] {
		t.Fatal("SnapshotInto did not reuse the earlier snapshot's buffers")
	}
	clear(vals)
	m.Restore(second)
	for i, v := range p.Value() {
		if v != want[i] {
			t.Fatalf("entry %d restored as %v, want %v", i, v, want[i])
		}
	}
}

// TestMachineSegments: a machine runs chains of row-wise ops block of rows
// by block (segments), and its results are bit-identical to running every
// op over all rows (the same machine with its segments off), also when an
// op of a chain falls back to running whole (a BatchNorm twin before any
// statistics were observed takes its batch's, which reads every row) and
// when the rows are not a multiple of the block (a dropout mask's bits
// then start mid-word); a reduction that a row-wise op reads cuts the
// chain and runs before that op.
func TestMachineSegments(t *testing.T) {
	const n, f = 4099, 6
	rng := rand.New(rand.NewPCG(7, 1))
	m := NewModel(7)
	bn := newStandardize(0, 1e-5, 0.1)
	var out *G.Node
	err := Build(func() error {
		x := m.Input("x", randSlice(rng, n*f), n, f)
		w := m.Input("w", randSlice(rng, f*8), f, 8)
		v := m.Input("v", randSlice(rng, 14*5), 14, 5)
		bp, gp := m.NewParam("b", Constant(0), 8), m.NewParam("g", Constant(0), 5)
		copy(bp.Value(), randSlice(rng, 8))
		copy(gp.Value(), randSlice(rng, 5))
		b, g := bp.Node, gp.Node
		h := m.Dropout(SELU(MatMulBias(x, w, b)), 0.5)
		d := m.modal[len(m.modal)-1].(*dropout)
		d.ones = false
		for i := range d.bits {
			d.bits[i] = rng.Uint64()
		}
		h = ConcatCols(G.Must(RowNormalize(h)), x)
		h = ReLU(MatMul(h, v))
		h = AddRow(h, ColSums(h)) // a reduction read by a row-wise op
		h = G.Must(G.ApplyOp(affineEvalOp{bn: bn}, h, g, g))
		out = AddRow(MulRow(h, g), g)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(segments bool) []float64 {
		t.Helper()
		mc, err := newMachine(m.G.SubgraphRoots(out), G.Nodes{out})
		if err != nil {
			t.Fatal(err)
		}
		ops := 0
		for _, s := range mc.segs {
			ops += len(s.ops)
		}
		if ops != 11 || len(mc.segs) != 2 {
			t.Fatalf("segments %+v: want the chain's 11 row-wise ops in two, before and after the column sums", mc.segs)
		}
		if !segments {
			clear(mc.segAt)
		}
		if err := mc.Run(); err != nil {
			t.Fatal(err)
		}
		for _, s := range mc.segs {
			for _, f := range s.fs[:cap(s.fs)] {
				if f != nil {
					t.Fatal("a segment keeps its loops (and so its buffers) after the run")
				}
			}
		}
		return append([]float64(nil), Values(out)...)
	}
	for _, observed := range []bool{false, true} {
		if observed {
			bn.runMean, bn.runVar, bn.statsObserved = randSlice(rng, 5), []float64{0.5, 1, 2, 3, 4}, true
		}
		got, want := run(true), run(false)
		if !equalSlices(got, want) {
			t.Errorf("statistics observed %v: the segments' result differs from the ops run whole", observed)
		}
	}
}

// TestMachineSegmentsTrain: a training machine's row-wise chains, forward
// and backward (reductions placed out of them by placeReductions), give the
// loss and gradients of the same machine with its segments off, bit for
// bit, over rows that are not a multiple of the block.
func TestMachineSegmentsTrain(t *testing.T) {
	const n, f = 2003, 6
	build := func() (*Model, *G.Node) {
		rng := rand.New(rand.NewPCG(9, 1))
		m := NewModel(9)
		x := m.Input("x", randSlice(rng, n*f), n, f)
		w := m.NewParam("w", GlorotUniform(), f, 16)
		b := m.NewParam("b", Constant(0.1), 16)
		v := m.NewParam("v", GlorotUniform(), 16, 4)
		g := m.NewParam("g", Constant(1.5), 4)
		var loss *G.Node
		err := Build(func() error {
			h := m.Dropout(ReLU(MatMulBias(x, w.Node, b.Node)), 0.4)
			h = SELU(MulRow(MatMul(G.Must(RowNormalize(h)), v.Node), g.Node))
			loss = G.Must(G.Sum(G.Must(G.HadamardProd(h, h))))
			return m.Compile(loss, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		return m, loss
	}
	run := func(segments bool) []float64 {
		m, _ := build()
		ops := 0
		for _, s := range m.trainVM.segs {
			for _, i := range s.ops {
				if _, ok := m.trainVM.steps[i].op.(reluGradOp); ok {
					ops++
				}
			}
		}
		if ops != 1 {
			t.Fatalf("the ReLU's gradient is in %d segments, want 1", ops)
		}
		if !segments {
			clear(m.trainVM.segAt)
		}
		var out []float64
		for range 2 {
			l, err := m.StepMode(true)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := m.Grads()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
			for _, g := range gs {
				out = append(out, g...)
			}
		}
		return out
	}
	if got, want := run(true), run(false); !equalSlices(got, want) {
		t.Errorf("the segments' loss and gradients differ from the ops run whole")
	}
}
