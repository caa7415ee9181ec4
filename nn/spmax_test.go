package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSpMaxForward compares SpMax with a direct maximum over each row's
// non-zero entries: rows without any (empty, or only explicit zeros) give
// 0, negative values are kept (the maximum of negatives is negative, not
// clamped at 0), and ties go to the first stored entry.
func TestSpMaxForward(t *testing.T) {
	// row 0: {1, 2}; row 1: empty; row 2: {0, 1, 3} with an explicit 0 at
	// column 1 (not a neighbour); row 3: only an explicit zero; row 4: {2, 3}
	a := &graphs.CSR{Rows: 5, Cols: 4,
		Indptr:  []int{0, 2, 2, 5, 6, 8},
		Indices: []int{1, 2, 0, 1, 3, 0, 2, 3},
		Data:    []float64{1, 2, 1, 0, 1, 0, 0.5, 3}}
	x := []float64{
		-1, 5, // x0
		9, 9, // x1 (excluded from row 2 by the explicit zero)
		-3, 7, // x2
		-2, 7, // x3 (ties x2 in column 1)
	}
	want := []float64{
		9, 9, // max(x1, x2)
		0, 0, // empty
		-1, 7, // max(x0, x3), not x1
		0, 0, // only an explicit zero
		-2, 7, // max(x2, x3): tie in column 1
	}
	// the gradient of Σ out goes to each entry's first maximiser:
	// x0 col 0 (row 2), x1 cols 0–1 (row 0), x2 col 1 (row 4, the tie),
	// x3 col 1 (row 2) and col 0 (row 4)
	wantGrad := []float64{1, 0, 1, 1, 0, 1, 1, 1}
	m := NewModel(1)
	xp := m.NewParam("x", Constant(0), 4, 2)
	copy(xp.Value(), x)
	var y *G.Node
	err := Build(func() error {
		y = G.Must(SpMax(NewSparse("A", a), xp.Node))
		return m.Compile(G.Must(SumAll(RowSums(y))), []*G.Node{y})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.StepMode(false); err != nil {
		t.Fatal(err)
	}
	got := Values(y)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("out[%d][%d] = %v, want %v", i/2, i%2, got[i], want[i])
		}
	}
	g, err := xp.Grad()
	if err != nil {
		t.Fatal(err)
	}
	for i := range wantGrad {
		if g[i] != wantGrad[i] {
			t.Errorf("∂Σout/∂x[%d][%d] = %v, want %v", i/2, i%2, g[i], wantGrad[i])
		}
	}
}

// TestSpMaxGradCheck: the symbolic gradient of a loss through SpMax
// agrees with finite differences (random continuous inputs: no ties), on a
// random matrix with empty rows and rows sharing their argmax rows, and a
// deliberately wrong gradient (to the first neighbour instead of the
// argmax) fails the same check.
func TestSpMaxGradCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randCSR(rng, 12, 9, 0.25)
	empty := 0
	for i := 0; i < a.Rows; i++ {
		if a.Indptr[i+1] == a.Indptr[i] {
			empty++
		}
	}
	build := func(broken bool) *Model {
		m := NewModel(2)
		err := Build(func() error {
			x := m.NewParam("x", Uniform(1), 9, 4)
			w := m.NewParam("w", Uniform(1), 4, 3)
			var agg *G.Node
			if broken {
				agg = G.Must(G.ApplyOp(brokenSpMax{&spMaxOp{s: NewSparse("A", a)}}, x.Node))
			} else {
				agg = G.Must(SpMax(NewSparse("A", a), x.Node))
			}
			logits := G.Must(G.Mul(agg, w.Node))
			ce, err := NewCrossEntropy(m, logits, "loss")
			if err != nil {
				return err
			}
			labels := make([]int, 12)
			rows := make([]int, 12)
			for i := range labels {
				labels[i], rows[i] = i%3, i
			}
			if err := ce.SetRows(rows, labels); err != nil {
				return err
			}
			return m.Compile(ce.Mean, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	res, err := build(false).GradCheck(1e-5, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.MaxRel > 1e-6 || r.Checked == 0 {
			t.Errorf("%s: relative error %.3g at %d (%d checked)", r.Param, r.MaxRel, r.WorstIdx, r.Checked)
		}
	}
	res, err = build(true).GradCheck(1e-5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MaxRel < 1e-2 {
		t.Errorf("a gradient to the wrong neighbour passed the check: worst relative error %.3g", res[0].MaxRel)
	}
	if empty == 0 {
		t.Fatal("the random matrix has no empty row: the case is not covered")
	}
}

// brokenSpMax sends each output entry's gradient to the row's first
// non-zero neighbour instead of its argmax.
type brokenSpMax struct{ *spMaxOp }

func (op brokenSpMax) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(brokenSpMaxGrad{&spMaxGradOp{s: op.s}}, inputs[0], output, grad))
}

type brokenSpMaxGrad struct{ *spMaxGradOp }

func (op brokenSpMaxGrad) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	// the first neighbour's own value as the "maximum": the real op then
	// picks it
	x := vals[0].(*tensor.Dense)
	xd := x.Float64s()
	k := x.Shape()[1]
	y := vals[1].(*tensor.Dense).Clone().(*tensor.Dense)
	yd := y.Float64s()
	a := op.s.A
	for i := 0; i < a.Rows; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			if a.Value(p) != 0 {
				copy(yd[i*k:(i+1)*k], xd[a.Indices[p]*k:(a.Indices[p]+1)*k])
				break
			}
		}
	}
	return op.spMaxGradOp.UsePreallocDo(prealloc, vals[0], y, vals[2])
}

func (op brokenSpMaxGrad) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// TestSpMaxShapeErrors: a mismatched input is refused when the graph is
// built, not at run time.
func TestSpMaxShapeErrors(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", make([]float64, 6), 3, 2)
	a := &graphs.CSR{Rows: 2, Cols: 4, Indptr: []int{0, 0, 0}}
	if _, err := SpMax(NewSparse("A", a), x); err == nil {
		t.Error("SpMax accepted a 3-row input for a 4-column matrix")
	}
	if _, err := SpMax(nil, x); err == nil {
		t.Error("SpMax accepted a nil matrix")
	}
}
