package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// aliasRelease2 (variant): K = G.Slice(G.NewConstant(xin.Value()), row 0). As aliasRelease: n one-row examples declared by Start (example 0 without
// rows when removed0), R = 1, Change = 1, C = 1, q = 1, one noiseless step.
// K is a gorgonia CONSTANT vector whose backing is the first f entries of
// the batch input X's own backing slice (batch row 0). It is read whole
// (nn.AddRow's vector operand: allowed for a constant op), so every row's
// layer input is x_r + (batch row 0). The fill writes only X, each row with
// the data of the example laid out there, in place (the documented
// assumption holds: no batch data into a leaf of another shape).
func aliasRelease2(t *testing.T, feats []float64, n, f int, removed0 bool) ([]float64, error) {
	start := make([]int, n+1)
	for e := 0; e < n; e++ {
		rows := 1
		if e == 0 && removed0 {
			rows = 0
		}
		start[e+1] = start[e] + rows
	}
	x, err := dpnn.NewExamples(n, start, nil, 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	backing := make([]float64, capacity*f)
	xin := m.Input("Xb", backing, capacity, f)
	var ce *nn.CrossEntropy
	err = nn.Build(func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		kall := G.NewConstant(xin.Value(), G.WithName("Kall"), G.In(m.G)) // "a value computed once from a leaf"
		k, err := G.Slice(kall, G.S(0))                                   // its row 0, as a vector
		if err != nil {
			return err
		}
		a := nn.AddRow(xin, k)
		m.StartRecording()
		y := lin.Forward(a)
		m.StopRecording()
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
	if err != nil {
		return nil, err
	}
	lab := make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		buf := nn.Values(xin) // write in place (after Reset zeroed it)
		var rows []int
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				copy(buf[r*f:(r+1)*f], feats[e*f:(e+1)*f])
				rows = append(rows, r)
			}
		}
		return ce.SetRows(rows, lab)
	}
	rel, err := sgd.ReleaseExamples(fill)
	if err != nil {
		return nil, err
	}
	for i := range rel {
		rel[i] *= cfg.Rate() * float64(n)
	}
	return rel, nil
}

func TestConstantOfLeafValue(t *testing.T) {
	const f = 2
	for _, n := range []int{10, 30} {
		feats := make([]float64, n*f)
		for e := 0; e < n; e++ {
			feats[e*f], feats[e*f+1] = 0.01, -0.01
		}
		feats[0] = 100 // example 0
		a, err := aliasRelease2(t, feats, n, f, false)
		b, err2 := aliasRelease2(t, feats, n, f, true)
		if err != nil || err2 != nil {
			t.Logf("n=%d refused: %v / %v", n, err, err2)
			continue
		}
		d := dist(a, b)
		t.Logf("n=%d: G %v\nG' %v\n‖Δ clipped sum‖ = %.4f (declared 1)", n, a, b, d)
		if d > 1+1e-9 {
			t.Errorf("BREAK n=%d: removing example 0 moved the clipped sum by %.4f > C = 1", n, d)
		}
	}
}
