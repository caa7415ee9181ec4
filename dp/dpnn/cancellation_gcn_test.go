package dpnn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
)

// gcnRelease: one noiseless step (q = 1, z = 0, C = 1, R = Change = 1) over
// rooted subgraphs declared with Start and Adj (root row first, it gathers
// its two neighbour rows with weight 0.5 each), one layers.GCNConv
// (y = Â·(x·W) + b) and nn.CrossEntropy on the root rows. Stock pieces
// only; the fill writes each row's features, the batch adjacency and the
// roots' labels.
func gcnRelease(t *testing.T, sizes []int, feats []float64, labels []int) ([]float64, error) {
	const f, c = 2, 2
	n := len(sizes)
	start := make([]int, n+1)
	for e, s := range sizes {
		start[e+1] = start[e] + s
	}
	var src, dst []int
	var val []float64
	for e := 0; e < n; e++ {
		for r := start[e] + 1; r < start[e+1]; r++ {
			src, dst, val = append(src, start[e]), append(dst, r), append(val, 0.5)
		}
	}
	adj := graphs.FromCOO(start[n], start[n], src, dst, val)
	x, cfg, capacity, m, xin := startModel(t, n, start, adj, "rooted", f)
	as := emptySparse("Ab", capacity, capacity)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		conv := layers.NewGCNConv(m, "gcn", as, f, c)
		m.StartRecording()
		y := conv.Forward(xin)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	sgd, err := noiselessPrivate(m, ce.PerRow, x, cfg)
	if err != nil {
		return nil, err
	}
	buf, lab := make([]float64, capacity*f), make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var roots []int
		for r, u := range b.Rows {
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
		}
		for k, e := range b.Examples {
			if b.First[k+1] > b.First[k] {
				roots = append(roots, b.First[k])
				lab[b.First[k]] = labels[e]
			}
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if err := as.Set(b.Adj); err != nil {
			return err
		}
		return ce.SetRows(roots, lab)
	}
	return mustScaledRelease(t, "", sgd, cfg, fill), nil
}

// TestCancellationGCN: example 0 is a root with features (0, 0) and two
// neighbours (2^41, 0) and (−2^41 + 2^11, 0): the root aggregates 2^10, its
// logits saturate, and with the label it gets wrong its W-gradient has norm
// ≈ 1448; GhostNormSq's Gram form rounds it to 0 (before
// nn.gramBound, the example went unclipped); fails where Δ > 1. G′: example 0 deleted.
func TestCancellationGCN(t *testing.T) {
	A := math.Ldexp(1, 41)
	for _, lab0 := range []int{0, 1} {
		rest := []float64{0.3, 0.1, -0.2, 0.4, 0.5, -0.3, 0.1, 0.2, -0.4, 0.6, 0.7, -0.1, 0.2, 0.2, -0.1, 0.3, 0.4, -0.5}
		featsG := append([]float64{0, 0, A, 0, -A + math.Ldexp(1, 11), 0}, rest...)
		labels := []int{lab0, 1, 0, 1}
		a, errA := gcnRelease(t, []int{3, 3, 3, 3}, featsG, labels)
		b, errB := gcnRelease(t, []int{0, 3, 3, 3}, rest, labels)
		within(t, fmt.Sprintf("label of example 0 = %d", lab0), a, b, errA, errB, 1)
	}
}
