package dpnn_test

import (
	"testing"

	spoof "github.com/dpgnn/dpgnn/dp/dpnn/internal/spoof/gorgonia"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// typeNameRelease: as rowMixerRelease, but the row-mixing op is an author
// type whose reflect name is "gorgonia.elemUnaryOp" (package named
// gorgonia, another import path); it implements no nn interface.
func typeNameRelease(t *testing.T, feats []float64, n, f int) ([]float64, error) {
	x, cfg, capacity, m, xin := oneRowModel(t, n, f, 1)
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
	fill := exampleRowsFill(xin, ce, feats, f, capacity)
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
