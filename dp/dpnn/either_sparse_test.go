package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// eitherSparseRelease: pooled examples of 2 rows each, PoolRows = capacity (so
// a leaf of capacity rows is "eitherRows"). ONE leaf T (capacity × 1) is
// joined with the batch rows BEFORE the pool (a = X∘T, the head's input)
// and with the pooled rows AFTER it (loss = z∘T). No fill can lay T out
// for both uses. poolLayout picks how the fill writes T: row k = example k
// (the pool's layout) or row r = the example of batch row r (the batch's).
// One noiseless step, q = 1, C = 1; returns the clipped sum.
func eitherSparseRelease(t *testing.T, targ []float64, absent0, poolLayout bool) ([]float64, error) {
	n := len(targ)
	x, cfg, capacity, m, xin := pooledHeadModel(t, n, absent0)
	ts := emptySparse("Ts", capacity, 1)
	var tin *G.Node
	ps := emptySparse("pool", capacity, capacity)
	var loss *G.Node
	mustBuild(t, func() error {
		head := layers.NewLinear(m, "head", 1, 1, false, layers.InitPyG)
		one := G.NewConstant(tensor.New(tensor.WithShape(1, 1), tensor.WithBacking([]float64{1})), G.In(m.G))
		var err error
		if tin, err = nn.SpMM(ts, one); err != nil { // T = Ts·1: a constant product, classed eitherRows with no leaf
			return err
		}
		loss, err = eitherLoss(m, head, xin, tin, ps)
		return err
	})
	xb, tb := make([]float64, capacity), make([]float64, capacity)
	fill := func(b *dpnn.Batch) error {
		fillPooledTargets(b, targ, xb, tb, poolLayout)
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		var src, dst []int
		var val []float64
		for r, v := range tb {
			if v != 0 {
				src, dst, val = append(src, r), append(dst, 0), append(val, v)
			}
		}
		if err := ts.Set(graphs.FromCOO(capacity, 1, src, dst, val)); err != nil {
			return err
		}
		return ps.Set(b.Pool)
	}
	return noiselessRelease(m, loss, x, cfg, fill)
}

func TestEitherSparseTwoLayouts(t *testing.T) {
	twoLayouts(t, eitherSparseRelease)
}
