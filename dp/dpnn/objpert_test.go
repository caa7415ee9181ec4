package dpnn

import (
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/nn"
)

func assertRel(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if got != want && math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.12g, want %.12g (rel tol %g)", name, got, want, tol)
	}
}

func assertAbs(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (abs tol %g)", name, got, want, tol)
	}
}

func TestObjectivePerturbationTerms(t *testing.T) {
	for _, lp := range []float64{0, 0.3} {
		const d, c, n1 = 3, 2, 5
		m := nn.NewModel(1)
		theta := m.NewParam("Θ", nn.Uniform(1), d, c)
		b := []float64{1, -2, 0.5, 3, -1, 4}
		term, err := ObjectivePerturbation(m, theta.Node, b, lp, n1)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(term, nil); err != nil {
			t.Fatal(err)
		}
		got, err := m.StepMode(false)
		if err != nil {
			t.Fatal(err)
		}
		th := theta.Value()
		var want float64
		for k := range b {
			want += b[k]*th[k]/n1 + lp/2*th[k]*th[k]
		}
		assertRel(t, "value", got, want, 1e-12)
		grads, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		for k := range b {
			assertAbs(t, "gradient", grads[0][k], b[k]/n1+lp*th[k], 1e-12)
		}
		if !slices.Contains(m.Tags(term), TagObjectivePerturbation) {
			t.Errorf("Λ'=%v: term not tagged %s: %v", lp, TagObjectivePerturbation, m.Tags(term))
		}
		var tagged int
		for _, n := range m.G.AllNodes() {
			if slices.Contains(m.Tags(n), TagObjectivePerturbation) {
				tagged++
			}
		}
		if tagged < 3 {
			t.Errorf("Λ'=%v: only %d nodes tagged", lp, tagged)
		}
	}
	m := nn.NewModel(1)
	v := m.NewParam("v", nn.Constant(0), 3)
	if _, err := ObjectivePerturbation(m, v.Node, make([]float64, 3), 0, 1); err == nil {
		t.Error("vector parameter accepted")
	}
	w := m.NewParam("w", nn.Constant(0), 3, 2)
	if _, err := ObjectivePerturbation(m, w.Node, make([]float64, 5), 0, 1); err == nil {
		t.Error("wrong B size accepted")
	}
	if _, err := ObjectivePerturbation(m, w.Node, make([]float64, 6), -1, 1); err == nil {
		t.Error("negative Λ' accepted")
	}
}
