package dpnn_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// aliasRelease: n one-row examples declared by Start (example 0 without
// rows when removed0), R = 1, Change = 1, C = 1, q = 1, one noiseless step
// (the eighth outside audit of issue 38). K is a gorgonia constant read
// whole (nn.AddRow's vector operand, allowed for a constant op) whose
// memory is batch row 0 of the batch input X, so every row's layer input
// was x_r + (batch row 0) — Δ 37.8·C for 1·C at n = 30. mode says how K
// shares X's memory: "backing", a constant on X's backing array; "value",
// G.Slice of a constant made from X's value; "setvalue", as "backing" with
// the fill loading its own buffer through nn.SetValue. The fill writes only
// X, each row with the data of the example laid out there.
func aliasRelease(t *testing.T, feats []float64, n, f int, removed0 bool, mode string) ([]float64, error) {
	start := startRows(n, 1, removed0)
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
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		k := G.NewConstant(tensor.New(tensor.WithShape(f), tensor.WithBacking(backing[:f])), G.WithName("K"), G.In(m.G))
		if mode == "value" {
			var err error
			if k, err = G.Slice(G.NewConstant(xin.Value(), G.WithName("Kall"), G.In(m.G)), G.S(0)); err != nil {
				return err
			}
		}
		a := nn.AddRow(xin, k)
		m.StartRecording()
		y := lin.Forward(a)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	lab := make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		buf := nn.Values(xin) // write in place (after Reset zeroed it)
		if mode == "setvalue" {
			buf = backing // the fill's own buffer, loaded with SetValue
			clear(buf)
		}
		var rows []int
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				copy(buf[r*f:(r+1)*f], feats[e*f:(e+1)*f])
				rows = append(rows, r)
			}
		}
		if mode == "setvalue" {
			if err := nn.SetValue(xin, buf); err != nil {
				return err
			}
		}
		return ce.SetRows(rows, lab)
	}
	return noiselessRelease(m, ce.PerRow, x, cfg, fill)
}

// TestConstantAliasesBatch: a constant sharing the batch input's memory is
// refused (or, were it accepted, stays within C) in all three ways of
// sharing it.
func TestConstantAliasesBatch(t *testing.T) {
	const f = 2
	for _, mode := range []string{"backing", "value", "setvalue"} {
		for _, n := range []int{10, 30} {
			feats := make([]float64, n*f)
			for e := 0; e < n; e++ {
				feats[e*f], feats[e*f+1] = 0.01, -0.01
			}
			feats[0] = 100 // example 0
			a, err := aliasRelease(t, feats, n, f, false, mode)
			b, err2 := aliasRelease(t, feats, n, f, true, mode)
			if err != nil || err2 != nil {
				for _, e := range []error{err, err2} {
					if e == nil || !strings.Contains(e.Error(), "shares memory with the batch input") {
						t.Errorf("%s n=%d: got %v, want the refusal of shared memory", mode, n, e)
					}
				}
				continue
			}
			if d := dist(a, b); d > 1+1e-9 {
				t.Errorf("%s n=%d: removing example 0 moved the clipped sum by %.4f > C = 1", mode, n, d)
			}
		}
	}
}
