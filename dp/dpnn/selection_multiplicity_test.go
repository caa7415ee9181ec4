package dpnn_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
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
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	idx := make([]int, capacity)
	for r := range idx {
		idx[r] = r - r%2
	}
	var loss *nn.Node
	mustBuild(t, func() error {
		y := recordedLinear(m, "lin", xin, f, 1, true)
		g, err := nn.GatherRows(y, idx, "even")
		if err != nil {
			return err
		}
		loss = nn.RowSums(g)
		return nil
	})
	buf := make([]float64, capacity*f)
	return noiselessRelease(m, loss, x, cfg, func(b *dpnn.Batch) error {
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
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) []float64 {
		var feats []float64
		for _, e := range ids {
			for j := 0; j < f; j++ {
				feats = append(feats, float64(1-2*(e%2))*v[j])
			}
		}
		return feats
	}
	all := make([]int, n)
	for e := range all {
		all[e] = e
	}
	a, errA := multRelease(t, mk(all), n)
	b, errB := multRelease(t, mk(all[1:]), n-1)
	if errA != nil || errB != nil {
		// refused (the loss rows read their own example only): the claim
		for _, err := range []error{errA, errB} {
			if err == nil || !strings.Contains(err.Error(), "per-row loss") {
				t.Errorf("got %v, want the refusal of loss rows reading another example", err)
			}
		}
		return
	}
	d := dist(a, b)
	t.Logf("accepted: ‖Δ clipped sum‖ = %.4f (declared R·Change·C = 1)", d)
	if d > 1+1e-9 {
		t.Errorf("one deleted example moved the clipped sum by %.4f > 1", d)
	}
}

// The same model on the plain path checked as one-row samples
// (SGDConfig.OneRow, run.Module's DP-SGD): q = 1, z = 0, C = 1.
func plainMultRelease(t *testing.T, feats []float64, n int) ([]float64, error) {
	const f = 4
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, n*f), n, f)
	idx := make([]int, n)
	for r := range idx {
		idx[r] = r - r%2
	}
	var loss *nn.Node
	mustBuild(t, func() error {
		y := recordedLinear(m, "lin", xin, f, 1, true)
		g, err := nn.GatherRows(y, idx, "even")
		if err != nil {
			return err
		}
		loss = nn.RowSums(g)
		return nil
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
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) []float64 {
		var feats []float64
		for _, e := range ids {
			for j := 0; j < f; j++ {
				feats = append(feats, float64(1-2*(e%2))*v[j])
			}
		}
		return feats
	}
	all := make([]int, n)
	for e := range all {
		all[e] = e
	}
	a, errA := plainMultRelease(t, mk(all), n)
	b, errB := plainMultRelease(t, mk(all[1:]), n-1)
	if errA != nil || errB != nil {
		// refused (the loss rows read their own example only): the claim
		for _, err := range []error{errA, errB} {
			if err == nil || !strings.Contains(err.Error(), "per-row loss") {
				t.Errorf("got %v, want the refusal of loss rows reading another example", err)
			}
		}
		return
	}
	d := dist(a, b)
	t.Logf("plain OneRow path accepted: ‖Δ clipped sum‖ = %.4f (declared C = 1)", d)
	if d > 1+1e-9 {
		t.Errorf("one deleted sample moved the clipped sum by %.4f > 1", d)
	}
}
