package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
)

// adjRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over n one-row examples declared with Start; on G′ example 0 has no
// rows (every later example moves up one batch row). Returns the clipped
// sum (division by q·N undone) or the construction's refusal.
//
// mode "adj-features": the examples declare a self-loop adjacency (Adj,
// block-diagonal: accepted by NewExamples); the first layer is a
// featureless GCN layer, layers.Linear.ForwardSparse over the batch
// adjacency (Â·W, W of capacity rows), the fill gives it b.Adj exactly as
// the framework built it.
//
// mode "offpath-rule": lin.W's rule (RecordLinear) reads ax = SpMM(Â, X),
// a square product over the batch rows that is not on the loss path; the
// fill writes Â as the graph's adjacency among the batch's nodes (a star
// on example 0, self-loops), which joins examples. On the loss path such
// a product is refused at every step (CheckBlocks); off it, it is not.
func adjRelease(t *testing.T, n int, start []int, feats []float64, labels []int, mode string) ([]float64, error) {
	const f, c = 4, 2
	rowsG := start[n]
	var adj *graphs.CSR
	if mode == "adj-features" {
		adj = identityAdj(rowsG)
	}
	x, cfg, capacity, m, xin := startModel(t, n, start, adj, "row", f)
	aS := emptySparse("Ab", capacity, capacity)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		m.StartRecording()
		var y *nn.Node
		switch mode {
		case "adj-features":
			lin := layers.NewLinear(m, "lin", capacity, c, true, layers.InitPyG)
			y = lin.ForwardSparse(aS)
		case "offpath-rule":
			lin := layers.NewLinear(m, "lin", f, c, true, layers.InitPyG)
			ax, err := nn.SpMM(aS, xin)
			if err != nil {
				return err
			}
			y = m.RecordLinear(lin.Affine(xin), lin.W, lin.B, ax, nil)
		case "onpath-control":
			// the same product on the loss path (the honest GCN form)
			lin := layers.NewLinear(m, "lin", f, c, true, layers.InitPyG)
			ax, err := nn.SpMM(aS, xin)
			if err != nil {
				return err
			}
			y = lin.Forward(ax)
		}
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var firsts []int
		hub := -1
		for k, e := range b.Examples {
			if b.First[k+1] == b.First[k] {
				continue
			}
			r := b.First[k]
			u := b.Rows[r]
			copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			lab[r] = labels[u]
			firsts = append(firsts, r)
			if e == 0 {
				hub = r
			}
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		switch mode {
		case "adj-features":
			if err := aS.Set(b.Adj); err != nil {
				return err
			}
		case "offpath-rule", "onpath-control":
			var src, dst []int
			for _, r := range firsts {
				src, dst = append(src, r), append(dst, r)
				if hub >= 0 && r != hub {
					src, dst = append(src, r), append(dst, hub)
				}
			}
			if err := aS.Set(graphs.FromCOO(capacity, capacity, src, dst, nil)); err != nil {
				return err
			}
		}
		return ce.SetRows(firsts, lab)
	}
	return noiselessRelease(m, ce.PerRow, x, cfg, fill)
}

func TestAdjacency(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	for _, mode := range []string{"adj-features", "offpath-rule", "onpath-control"} {
		mk := func(ids []int) ([]float64, []int) {
			var feats []float64
			var labels []int
			for _, e := range ids {
				s := float64(1 - 2*(e%2))
				if mode != "adj-features" {
					s = 1
					if e == 0 {
						s = -10
					}
				}
				for j := 0; j < f; j++ {
					feats = append(feats, s*v[j])
				}
				l := e % 2
				if mode != "adj-features" {
					l = 1 // every example the same label: the moves add up
				}
				labels = append(labels, l)
			}
			return feats, labels
		}
		all, startG, startG2 := oneRowPair(n)
		fG, lG := mk(all)
		fG2, lG2 := mk(all[1:])
		a, errA := adjRelease(t, n, startG, fG, lG, mode)
		b, errB := adjRelease(t, n, startG2, fG2, lG2, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}
