package nn

import (
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestOpTimes: between StartOpTimes and StopOpTimes a training step's ops
// and chains are timed, each once per step under its label and output
// shape (ops alike, such as the loss's ⊙ and its gradient's, share a
// row); outside, nothing is recorded.
func TestOpTimes(t *testing.T) {
	const n, f = 2003, 6
	rng := rand.New(rand.NewPCG(9, 2))
	m := NewModel(9)
	x := m.Input("x", randSlice(rng, n*f), n, f)
	w := m.NewParam("w", GlorotUniform(), f, 16)
	b := m.NewParam("b", Constant(0.1), 16)
	v := m.NewParam("v", GlorotUniform(), 16, 4)
	err := Build(func() error {
		h := MatMul(ReLU(MatMulBias(x, w.Node, b.Node)), v.Node)
		return m.Compile(G.Must(G.Sum(G.Must(G.HadamardProd(h, h)))), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.StepMode(true); err != nil { // not timed
		t.Fatal(err)
	}
	StartOpTimes()
	const steps = 3
	for range steps {
		if _, err := m.StepMode(true); err != nil {
			t.Fatal(err)
		}
	}
	table := StopOpTimes()
	if _, err := m.StepMode(true); err != nil { // not timed
		t.Fatal(err)
	}
	var chain, product bool
	for i, r := range table {
		if r.Calls == 0 || r.Calls%steps != 0 || r.Total <= 0 { // ops alike share a row
			t.Errorf("%q: %d calls in %v, want a multiple of %d", r.Op, r.Calls, r.Total, steps)
		}
		if i > 0 && r.Total > table[i-1].Total {
			t.Errorf("%q after a shorter total", r.Op)
		}
		chain = chain || strings.HasPrefix(r.Op, "chain A × B + b … A × B (3 ops) 2003×4")
		product = product || r.Op == "Aᵀ × B 6×16"
	}
	if !chain || !product {
		t.Errorf("no forward chain or weight gradient among %v", table)
	}
	if again := StopOpTimes(); len(again) != 0 {
		t.Errorf("a second stop returns %v", again)
	}
}
