package dpnn_test

import (
	"testing"

	spoof "github.com/dpgnn/dpgnn/dp/dpnn/internal/spoof/gorgonia"
	G "gorgonia.org/gorgonia"
)

// typeNameRelease: as rowMixerRelease, but the row-mixing op is an author
// type whose reflect name is "gorgonia.elemUnaryOp" (package named
// gorgonia, another import path); it implements no nn interface.
func typeNameRelease(t *testing.T, feats []float64, n, f int) ([]float64, error) {
	return mixerRelease(t, feats, n, f, func(xin *G.Node, _ int) (*G.Node, error) { return spoof.SumAll(xin) })
}

func TestTypeNameSpoof(t *testing.T) {
	const n, f = 30, 2
	feats, feats2 := mixerPair(n, f)
	a, err := typeNameRelease(t, feats, n, f)
	b, err2 := typeNameRelease(t, feats2, n, f)
	withinOrRefused(t, "type-name spoof", a, b, err, err2, 2)
}
