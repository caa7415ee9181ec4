package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
)

// TestDropoutSpMM: over float32 features the fused product gives the bits
// of SpMM over Dropout, its output and the gradient behind it, over three
// training steps (three masks) and in evaluation, and leaves the model's
// stream where Dropout leaves it, also after the input is given another
// value; over other features it is those two ops.
func TestDropoutSpMM(t *testing.T) {
	const n, k, rows = 3001, 36, 1500
	rng := rand.New(rand.NewPCG(9, 10))
	a := &graphs.CSR{Rows: rows, Cols: n, Indptr: []int{0}}
	for range rows {
		for range rng.IntN(9) {
			a.Indices = append(a.Indices, rng.IntN(n))
			a.Data = append(a.Data, rng.NormFloat64())
		}
		a.Indptr = append(a.Indptr, len(a.Indices))
	}
	wide := randSlice(rng, n*k) // float64 values
	narrow := make([]float64, n*k)
	for i := range narrow {
		narrow[i] = float64(float32(wide[i]))
	}
	for _, c := range []struct {
		name     string
		x, later []float64
		p        float64
		fused    bool
	}{
		{"float32 values", narrow, nil, 0.5, true},
		{"float32 values, p = 0.3", narrow, nil, 0.3, true},
		{"float64 values", wide, nil, 0.5, false},
		{"float32 values, then others set", narrow, wide, 0.3, true},
	} {
		type result struct {
			y, grad []float64
			next    uint64
		}
		run := func(fused bool) []result {
			m := NewModel(13)
			w := m.NewParam("w", Constant(0.5), k, 3)
			x := m.Input("x", c.x, n, k)
			var y *G.Node
			err := Build(func() error {
				s := NewSparse("A", a)
				if fused {
					y = m.DropoutSpMM(s, x, c.p)
					if _, ok := y.Op().(*dropSpMMOp); ok != c.fused {
						t.Fatalf("%s: fused %v, want %v", c.name, ok, c.fused)
					}
				} else {
					y = G.Must(SpMM(s, m.Dropout(x, c.p)))
				}
				m.Keep(y)
				return m.Compile(G.Must(G.Sum(G.Must(G.Square(MatMul(y, w.Node))))), nil)
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.later != nil {
				if err := SetValue(x, c.later); err != nil {
					t.Fatal(err)
				}
			}
			var out []result
			for _, training := range []bool{true, true, true, false} {
				if _, err := m.StepMode(training); err != nil {
					t.Fatal(err)
				}
				g, err := w.Grad()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, result{append([]float64(nil), Values(y)...), append([]float64(nil), g...), 0})
			}
			out[len(out)-1].next = m.rng.Uint64()
			return out
		}
		want, got := run(false), run(true)
		for s := range want {
			for what, p := range map[string][2][]float64{"output": {got[s].y, want[s].y}, "gradient": {got[s].grad, want[s].grad}} {
				for e := range p[1] {
					if math.Float64bits(p[0][e]) != math.Float64bits(p[1][e]) {
						t.Fatalf("%s, step %d: %s entry %d = %v, want %v", c.name, s, what, e, p[0][e], p[1][e])
					}
				}
			}
		}
		if got[3].next != want[3].next {
			t.Errorf("%s: the model's stream moved differently", c.name)
		}
		if slices.Equal(got[0].y, got[1].y) || slices.Equal(got[0].y, got[3].y) {
			t.Errorf("%s: the masks did not change the product", c.name)
		}
	}
}
