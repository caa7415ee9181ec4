package nn

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
)

// A Frozen path evaluates the model as it was at Start: training steps and
// parameter updates between Start and Wait (BatchNorm statistics and
// dropout masks change with them) leave its result equal to evaluating the
// model at that moment; Keep's copy restores that model; and a kept copy is
// not overwritten by later Starts, nor is a run after Release. With fused set, the BatchNorm has an
// affine part, which the frozen path takes in one evaluation-only op
// (BatchStandardizer.Affine) and the training model as three.
func TestFrozenEvaluatesTheCopy(t *testing.T) {
	for _, fused := range []bool{false, true} {
		t.Run(map[bool]string{false: "standardise", true: "affine"}[fused], func(t *testing.T) { testFrozen(t, fused) })
	}
}

func testFrozen(t *testing.T, fused bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, f, c = 12, 5, 3
	x := make([]float64, n*f)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	m := NewModel(3)
	var logits, frozen *G.Node
	var fr *Frozen
	var ce *CrossEntropy
	var gamma, beta *Param
	err := Build(func() error {
		w := m.NewParam("w", GlorotUniform(), f, c)
		bn := m.NewBatchStandardizer(1e-5, 0.1)
		if fused {
			gamma, beta = m.NewParam("gamma", Constant(1), c), m.NewParam("beta", Constant(0), c)
		}
		path := func(in *G.Node) *G.Node {
			h := m.Dropout(G.Must(G.Mul(in, w.Node)), 0.3)
			if !fused {
				return bn.Apply(h)
			}
			if y := bn.Affine(h, gamma.Node, beta.Node); y != nil {
				return y
			}
			return AddRow(MulRow(bn.Apply(h), gamma.Node), beta.Node)
		}
		train := path(m.Input("x", x, n, f))
		logits = path(m.Input("x.all", x, n, f))
		var err error
		if fr, _, err = m.NewFrozen(func() ([]*G.Node, error) {
			frozen = path(m.Input("x.frozen", x, n, f))
			return []*G.Node{frozen}, nil
		}); err != nil {
			return err
		}
		if ce, err = NewCrossEntropy(m, train, "loss"); err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{logits})
	})
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]int, n)
	rows := make([]int, n)
	for i := range labels {
		labels[i], rows[i] = i%c, i
	}
	if err := ce.SetRows(rows, labels); err != nil {
		t.Fatal(err)
	}
	opt := NewAdam(0.1, 0)
	step := func() {
		if _, err := m.Step(); err != nil {
			t.Fatal(err)
		}
		g, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		opt.Step(m.ParamValues(), g)
	}
	eval := func() []float64 {
		if err := m.Evaluate(); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(Values(logits))
	}
	var kept *State
	var keptWant []float64
	for epoch := 0; epoch < 4; epoch++ {
		if epoch == 2 { // a released path keeps its output and runs again
			before := slices.Clone(Values(frozen))
			if fr.Release() == 0 {
				t.Fatal("Release dropped no buffer")
			}
			if !slices.Equal(Values(frozen), before) {
				t.Fatal("Release changed the output's values")
			}
		}
		step()
		want := eval()
		fr.Start()
		step() // the parameters and running statistics move on meanwhile
		step()
		if err := fr.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := Values(frozen); !slices.Equal(got, want) {
			t.Fatalf("epoch %d: frozen path %v, want the evaluation at Start %v", epoch, got, want)
		}
		if epoch == 1 {
			kept, keptWant = fr.Keep(), want
		}
	}
	if now := eval(); slices.Equal(now, keptWant) {
		t.Fatal("the model did not change after the kept epoch: the test cannot tell copies apart")
	}
	m.Restore(kept)
	if got := eval(); !slices.Equal(got, keptWant) {
		t.Fatalf("restored kept copy evaluates to %v, want %v", got, keptWant)
	}
	if fused && (slices.Equal(gamma.Value(), []float64{1, 1, 1}) || slices.Equal(beta.Value(), []float64{0, 0, 0})) {
		t.Fatal("γ or β did not train: the test cannot tell the affine part's operands apart")
	}
}
