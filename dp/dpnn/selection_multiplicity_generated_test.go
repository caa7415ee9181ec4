package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// The selection-multiplicity model (row r reads row r − r%2) over generated
// examples of one row each: the fill loads the chunk's examples in order
// and tags each row; on G′ example 0 draws no row (skip0), so the later
// ones move up one row.
func genMultRelease(t *testing.T, n int, feats []float64, skip0 bool) ([]float64, error) {
	const f = 4
	x, cfg, capacity, m, xin := generatedModel(t, n, "generated", f)
	buf := make([]float64, capacity*f)
	return buildRelease(t, m, x, cfg, func() (*G.Node, error) { return evenRowsLoss(m, xin, f, capacity) }, func(b *dpnn.Batch) error {
		clear(buf)
		r := 0
		for k, e := range b.Examples {
			if e == 0 && skip0 {
				continue
			}
			copy(buf[r*f:(r+1)*f], feats[e*f:(e+1)*f])
			b.Tags.Of[r] = k
			r++
		}
		return nn.SetValue(xin, buf)
	})
}

func TestGeneratedSelectionMultiplicity(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	feats, _ := signedRows(exampleIDs(n), v, 1)
	a, errA := genMultRelease(t, n, feats, false)
	b, errB := genMultRelease(t, n, feats, true)
	refusedWithOrWithin(t, "generated", "per-row loss", a, b, errA, errB, 1)
}
