package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Round 7 (aud38g): a constant product S·K, S a sparse batch matrix (one
// column: each example's row holds the feature 1, the example's own
// data), K a 1×1 value computed from CrossEntropy's Count leaf (which
// SetRows sets to the chunk's example count). CheckRowLocal's !anyRows
// RowMixer branch reclasses the product by its rows and drops the leaf
// taint (c = byRows(...)), so Count reaches every batch row. Loss row r =
// ℓ_r · (S·K)_r = ℓ_r · (Count − n + ½): +½ on G, −½ on G − example 0.
func constProductRelease(t *testing.T, n int, start []int, feats []float64, labels []int, mode string) ([]float64, error) {
	const f, c = 4, 2
	x, cfg, capacity, m, xin := startModel(t, n, start, nil, "row", f)
	s := emptySparse("S", capacity, 1)
	var ce *nn.CrossEntropy
	var loss *G.Node
	mustBuild(t, func() error {
		var err error
		ce, loss, err = countProductLoss(m, xin, s, f, c, capacity, float64(n)-0.5, mode)
		return err
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	fill := firstRowsFill(xin, ce, f, capacity, feats, labels, func(firsts []int) error {
		return s.Set(indicatorColumn(capacity, firsts))
	})
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

// countProductLoss is the construction: y = lin(Xb) (recorded), ce its
// cross-entropy, and with mode "sparse-times-count" the per-row loss
// ℓ_r·(S·K)_r, K = (Count − shift)·1 (1×1, from the leaf Count), S the
// sparse indicator column (capacity × 1); with "none" ℓ_r.
func countProductLoss(m *nn.Model, xin *G.Node, s *nn.Sparse, f, c, capacity int, shift float64, mode string) (*nn.CrossEntropy, *G.Node, error) {
	y := recordedLinear(m, "lin", xin, f, c, true)
	ce, err := nn.NewCrossEntropy(m, y, "loss")
	if err != nil {
		return nil, nil, err
	}
	switch mode {
	case "none":
		return ce, ce.PerRow, nil
	case "sparse-times-count":
		one := G.NewConstant(tensor.New(tensor.WithShape(1, 1), tensor.WithBacking([]float64{1})))
		sh := G.Must(G.Sub(ce.Count, G.NewConstant(shift))) // Count − n + ½
		k := G.Must(G.Mul(sh, one))                         // 1×1, from the leaf Count
		u, err := nn.SpMM(s, k)                             // capacity×1: row r = S_r·K
		if err != nil {
			return nil, nil, err
		}
		uv := G.Must(G.Reshape(u, tensor.Shape{capacity}))
		return ce, G.Must(G.HadamardProd(ce.PerRow, uv)), nil
	}
	return ce, nil, nil
}

// indicatorColumn is S: a 1 at (r, 0) for each of rows (the example's
// indicator feature), capacity × 1.
func indicatorColumn(capacity int, rows []int) *graphs.CSR {
	var src, dst []int
	var val []float64
	for _, r := range rows {
		src, dst, val = append(src, r), append(dst, 0), append(val, 1)
	}
	return graphs.FromCOO(capacity, 1, src, dst, val)
}

func TestConstProductDropsLeafTaint(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) ([]float64, []int) { return signedRows(ids, v, 100) }
	all, startG, startG2 := oneRowPair(n)
	for _, mode := range []string{"none", "sparse-times-count"} {
		fG, lG := mk(all)
		fG2, lG2 := mk(all[1:])
		a, errA := constProductRelease(t, n, startG, fG, lG, mode)
		b, errB := constProductRelease(t, n, startG2, fG2, lG2, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}

// The same construction on the plain path checked as one-row samples
// (SGDConfig.OneRow: run.Module's DP-SGD), q = 1, z = 0, C = 1, a fixed
// capacity of n rows; samples = n on G and n − 1 on G − sample 0.
func plainConstProductRelease(t *testing.T, feats []float64, labels []int, samples, n int) ([]float64, error) {
	const f, c = 4, 2
	capacity := n
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	s := emptySparse("S", capacity, 1)
	var ce *nn.CrossEntropy
	var loss *G.Node
	mustBuild(t, func() error {
		var err error
		ce, loss, err = countProductLoss(m, xin, s, f, c, capacity, float64(n)-0.5, "sparse-times-count")
		return err
	})
	sgd, err := dpnn.BuildSGD(m, loss, dpnn.SGDConfig{Clip: 1, Multiplier: 0, Rate: 1, Samples: samples, Capacity: capacity, OneRow: true}, dp.NewSource(1), nil)
	if err != nil {
		return nil, err
	}
	buf, lab := make([]float64, capacity*f), make([]int, capacity)
	rel, err := sgd.Release(func(ids []int) error {
		clear(buf)
		var rows []int
		for r, u := range ids {
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			lab[r] = labels[u]
			rows = append(rows, r)
		}
		sgd.Groups.Singletons(len(ids))
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if err := s.Set(indicatorColumn(capacity, rows)); err != nil {
			return err
		}
		return ce.SetRows(rows, lab)
	})
	if err != nil {
		return nil, err
	}
	for i := range rel {
		rel[i] *= float64(samples)
	}
	return rel, nil
}

func TestConstProductDropsLeafTaintPlain(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) ([]float64, []int) { return signedRows(ids, v, 100) }
	all := exampleIDs(n)
	fG, lG := mk(all)
	fG2, lG2 := mk(all[1:])
	a, errA := plainConstProductRelease(t, fG, lG, n, n)
	b, errB := plainConstProductRelease(t, fG2, lG2, n-1, n)
	withinOrRefused(t, "plain OneRow path", a, b, errA, errB, 1)
}

func genConstProductRelease(t *testing.T, n int, feats []float64, labels []int, mode string) ([]float64, error) {
	const f, c = 4, 2
	x, cfg, capacity, m, xin := generatedModel(t, n, "row", f)
	s := emptySparse("S", capacity, 1)
	var ce *nn.CrossEntropy
	var loss *G.Node
	mustBuild(t, func() error {
		var err error
		ce, loss, err = countProductLoss(m, xin, s, f, c, capacity, 29.5, mode) // n of G: G′ has 29 examples
		return err
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var firsts []int
		for k, u := range b.Examples {
			r := k
			b.Tags.Of[r] = k
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			lab[r] = labels[u]
			firsts = append(firsts, r)
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if err := s.Set(indicatorColumn(capacity, firsts)); err != nil {
			return err
		}
		return ce.SetRows(firsts, lab)
	}
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

// The same construction over GENERATED examples (Examples.Generated, the
// ASGL shape): the fill tags row k with batch example k.
func TestConstProductDropsLeafTaintGenerated(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	feats, labels := make([]float64, n*f), make([]int, n)
	for e := 0; e < n; e++ {
		for j := 0; j < f; j++ {
			feats[e*f+j] = 100 * float64(1-2*(e%2)) * v[j]
		}
		labels[e] = e % 2
	}
	// G − example 0: the same ids 1 … n−1, relabelled 0 … n−2
	a, errA := genConstProductRelease(t, n, feats, labels, "sparse-times-count")
	b, errB := genConstProductRelease(t, n-1, feats[f:], labels[1:], "sparse-times-count")
	withinOrRefused(t, "generated examples", a, b, errA, errB, 1)
}
