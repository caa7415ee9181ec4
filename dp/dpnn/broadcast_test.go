package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CheckRowLocal directly (no per-sample rule needed) on broadcast and
// rank-3 constants by batch position.
func TestBroadcastCheck(t *testing.T) {
	const capacity, f, c = 30, 4, 2
	col := make([]float64, capacity)
	for i := range col {
		col[i] = float64(1 - 2*(i%2))
	}
	for _, mode := range []string{"param-bcast", "constop-bcast", "rank3-op-reshape", "scalar-leaf"} {
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
		var loss *nn.Node
		err := nn.Build(func() error {
			y := recordedLinear(m, "lin", xin, f, c, true)
			one := G.NewScalar(m.G, G.Float64, G.WithName("one"), G.WithValue(1.0))
			var err error
			switch mode {
			case "param-bcast":
				p := m.NewParam("pcol", nn.Constant(1), capacity, 1)
				if y, err = G.BroadcastHadamardProd(y, p.Node, nil, []byte{1}); err != nil {
					return err
				}
			case "constop-bcast":
				k := G.Must(G.Mul(G.NewConstant(tensor.New(tensor.WithShape(capacity, 1), tensor.WithBacking(col))), one))
				if y, err = G.BroadcastHadamardProd(y, k, nil, []byte{1}); err != nil {
					return err
				}
			case "rank3-op-reshape":
				off := make([]float64, capacity*c)
				k := G.Must(G.Mul(G.NewConstant(tensor.New(tensor.WithShape(capacity, c, 1), tensor.WithBacking(off))), one))
				if y, err = nn.Add(y, G.Must(G.Reshape(k, tensor.Shape{capacity, c}))); err != nil {
					return err
				}
			case "scalar-leaf":
				y = G.Must(G.Mul(y, one))
			}
			ce, err := nn.NewCrossEntropy(m, y, "loss")
			loss = ce.PerRow
			return err
		})
		if err != nil {
			t.Logf("%-18s build: %v", mode, err)
			continue
		}
		rl, err := m.CheckRowLocal(loss, capacity, 0)
		if err != nil {
			t.Logf("%-18s refused: %v", mode, err)
			continue
		}
		d, s := rl.Inputs()
		t.Logf("%-18s ACCEPTED (reset inputs: %d dense, %d sparse)", mode, d, s)
	}
}
