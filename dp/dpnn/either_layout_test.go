package dpnn_test

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// eitherRelease: pooled examples of 2 rows each, PoolRows = capacity (so
// a leaf of capacity rows is "eitherRows"). ONE leaf T (capacity × 1) is
// joined with the batch rows BEFORE the pool (a = X∘T, the head's input)
// and with the pooled rows AFTER it (loss = z∘T). No fill can lay T out
// for both uses. poolLayout picks how the fill writes T: row k = example k
// (the pool's layout) or row r = the example of batch row r (the batch's).
// One noiseless step, q = 1, C = 1; returns the clipped sum.
func eitherRelease(t *testing.T, targ []float64, absent0, poolLayout bool) ([]float64, error) {
	n := len(targ)
	x, cfg, capacity, m, xin := pooledHeadModel(t, n, absent0)
	tin := m.Input("Tb", make([]float64, capacity), capacity, 1)
	ps := emptySparse("pool", capacity, capacity)
	var loss *G.Node
	mustBuild(t, func() error {
		var err error
		loss, err = eitherLoss(m, layers.NewLinear(m, "head", 1, 1, false, layers.InitPyG), xin, tin, ps)
		return err
	})
	xb, tb := make([]float64, capacity), make([]float64, capacity)
	fill := func(b *dpnn.Batch) error {
		fillPooledTargets(b, targ, xb, tb, poolLayout)
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		if err := nn.SetValue(tin, tb); err != nil {
			return err
		}
		return ps.Set(b.Pool)
	}
	return noiselessRelease(m, loss, x, cfg, fill)
}

// eitherLoss is the construction's loss: T joined with the batch rows
// before the pool (the head's input a = X∘T) and with the pooled rows
// after it (loss = z∘T, z = P·head(a)).
func eitherLoss(m *nn.Model, head *layers.Linear, xin, tin *G.Node, ps *nn.Sparse) (*G.Node, error) {
	a := G.Must(G.HadamardProd(xin, tin)) // T in the batch's layout
	m.StartRecording()
	y := head.Forward(a)
	m.StopRecording()
	z, err := nn.SpMM(ps, y)
	if err != nil {
		return nil, err
	}
	return nn.RowSums(G.Must(G.HadamardProd(z, tin))), nil // T in the pool's layout
}

// twoLayouts is the test of a two-layout construction: for n = 8, 20 and
// T in either layout, the sign-pattern search over release; refused with
// "a fill writes it in one layout only", or Δ ≤ 1.
func twoLayouts(t *testing.T, release func(t *testing.T, targ []float64, absent0, poolLayout bool) ([]float64, error)) {
	const w = 10.0
	for _, n := range []int{8, 20} {
		for _, poolLayout := range []bool{false, true} {
			// search sign patterns for a large gap (deterministic)
			worst, a, b, ok := searchWorst(t, "a fill writes it in one layout only", func(trial int) ([]float64, []float64, error, error) {
				targ := signPattern(trial, n, w)
				a, errA := release(t, targ, false, poolLayout)
				b, errB := release(t, targ, true, poolLayout)
				return a, b, errA, errB
			})
			if !ok {
				return
			}
			checkWithin(t, fmt.Sprintf("n = %d, T in the %s layout: targets %v", n, map[bool]string{false: "batch", true: "pool"}[poolLayout], signPattern(worst, n, w)), a, b, 1)
		}
	}
}

func TestEitherRowsTwoLayouts(t *testing.T) {
	twoLayouts(t, eitherRelease)
}
