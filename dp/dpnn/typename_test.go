package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	spoof "github.com/dpgnn/dpgnn/dp/dpnn/internal/spoof/gorgonia"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// typeNameRelease: as rowMixerRelease, but the row-mixing op is an author
// type whose reflect name is "gorgonia.elemUnaryOp" (package named
// gorgonia, another import path); it implements no nn interface.
func typeNameRelease(t *testing.T, feats []float64, n, f int) ([]float64, error) {
	x, err := dpnn.OneRow(n, 1, 2, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 2, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		var a *G.Node
		var err error
		if a, err = spoof.SumAll(xin); err != nil {
			return err
		}
		m.StartRecording()
		y := lin.Forward(a)
		m.StopRecording()
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		for k, e := range b.Examples {
			copy(buf[b.First[k]*f:(b.First[k]+1)*f], feats[e*f:(e+1)*f])
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		return ce.SetRows(b.First[:len(b.Examples)], lab)
	}
	return noiselessRelease(m, ce.PerRow, x, cfg, fill)
}

func TestTypeNameSpoof(t *testing.T) {
	const n, f = 30, 2
	feats := make([]float64, n*f)
	for e := 0; e < n; e++ {
		feats[e*f], feats[e*f+1] = 0.01, -0.01
	}
	feats2 := append([]float64(nil), feats...)
	feats[0], feats2[0] = 100, -100
	a, err := typeNameRelease(t, feats, n, f)
	b, err2 := typeNameRelease(t, feats2, n, f)
	withinOrRefused(t, "type-name spoof", a, b, err, err2, 2)
}
