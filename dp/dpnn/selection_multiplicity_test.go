package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// multRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over one-row examples (dpnn.OneRow) given by feats, of a linear
// model y = x·W + b (one output) whose per-row loss is RowSums of a fixed
// row selection of y: row r reads y's row r − r%2 (even rows read twice,
// odd rows never). Every row of the selection reads one batch row, so it
// passes CheckRowReads against one-row examples; but an example's gradient
// is 2·∇ at an even position and 0 at an odd one.
func multRelease(t *testing.T, feats []float64, n int) ([]float64, error) {
	const f = 4
	x, err := dpnn.OneRow(n, 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.ConfigFor(x, n, 1, 1)
	capacity, m, xin := batchModel(x, cfg, f)
	buf := make([]float64, capacity*f)
	return buildRelease(t, m, x, cfg, func() (*G.Node, error) { return evenRowsLoss(m, xin, f, capacity) }, func(b *dpnn.Batch) error {
		clear(buf)
		for k := range b.Examples {
			r, u := b.First[k], b.Rows[b.First[k]]
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
		}
		return nn.SetValue(xin, buf)
	})
}

// G: 30 one-row examples, example e's features (−1)^e·(3, −2, 5, 1);
// G′: G without example 0 (the other 29, in order).
func TestSelectionMultiplicity(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) []float64 { feats, _ := signedRows(ids, v, 1); return feats }
	all := exampleIDs(n)
	a, errA := multRelease(t, mk(all), n)
	b, errB := multRelease(t, mk(all[1:]), n-1)
	refusedWithOrWithin(t, "one-row", "per-row loss", a, b, errA, errB, 1)
}

// The same model on the plain path checked as one-row samples
// (SGDConfig.OneRow, run.Module's DP-SGD): q = 1, z = 0, C = 1.
func plainMultRelease(t *testing.T, feats []float64, n int) ([]float64, error) {
	const f = 4
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, n*f), n, f)
	var loss *nn.Node
	mustBuild(t, func() error {
		var err error
		loss, err = evenRowsLoss(m, xin, f, n)
		return err
	})
	sgd, err := dpnn.BuildSGD(m, loss, dpnn.SGDConfig{Clip: 1, Multiplier: 0, Rate: 1, Samples: n, Capacity: n, OneRow: true}, dp.NewSource(1), nil)
	if err != nil {
		return nil, err
	}
	buf := make([]float64, n*f)
	rel, err := sgd.Release(func(samples []int) error {
		clear(buf)
		for r, u := range samples {
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
		}
		sgd.Groups.Singletons(len(samples))
		return nn.SetValue(xin, buf)
	})
	if err != nil {
		return nil, err
	}
	for i := range rel {
		rel[i] *= float64(n)
	}
	return rel, nil
}

func TestSelectionMultiplicityPlain(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) []float64 { feats, _ := signedRows(ids, v, 1); return feats }
	all := exampleIDs(n)
	a, errA := plainMultRelease(t, mk(all), n)
	b, errB := plainMultRelease(t, mk(all[1:]), n-1)
	refusedWithOrWithin(t, "plain OneRow path", "per-row loss", a, b, errA, errB, 1)
}
