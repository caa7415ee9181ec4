package dpnn_test

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Round 7 (aud38g): a per-sample rule on the pooled rows, through a
// sparse constant product. Pooled examples of 2 rows, PoolRows = capacity.
// y = Ts·w2 (Ts a sparse batch matrix, capacity×1; w2 recorded with
// LinearWeight{SparseInput: Ts}) is classed eitherRows (no leaf), so the
// rule-after-pool check (output poolRows) and the rule-input check (a
// sparse input need only be a batch input) pass; the loss joins y with the
// pooled rows z = P·(X·w1): the fill writes Ts in the pool's layout (row k
// = example k), while w2's rule groups rows by the batch layout.
func ruleEitherSparseRelease(t *testing.T, targ []float64, absent0 bool) ([]float64, error) {
	n := len(targ)
	x, cfg, capacity, m, xin := pooledHeadModel(t, n, absent0)
	ps := emptySparse("pool", capacity, capacity)
	ts := emptySparse("Ts", capacity, 1)
	var loss *G.Node
	mustBuild(t, func() error {
		head := layers.NewLinear(m, "head", 1, 1, false, layers.InitPyG)
		w2 := m.NewParam("w2", nn.Constant(1), 1, 1)
		m.StartRecording()
		h := head.Forward(xin)
		yw, err := nn.SpMM(ts, w2.Node)
		if err != nil {
			return err
		}
		y := m.RecordLinear(yw, w2, nil, nil, ts)
		m.StopRecording()
		z, err := nn.SpMM(ps, h)
		if err != nil {
			return err
		}
		loss = nn.RowSums(G.Must(G.HadamardProd(z, y))) // y in the pool's layout
		return nil
	})
	xb := make([]float64, capacity)
	fill := func(b *dpnn.Batch) error {
		clear(xb)
		var src, dst []int
		var val []float64
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				xb[r] = 1
			}
			src, dst, val = append(src, k), append(dst, 0), append(val, targ[e]) // pooled row k: example k
		}
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		if err := ts.Set(graphs.FromCOO(capacity, 1, src, dst, val)); err != nil {
			return err
		}
		return ps.Set(b.Pool)
	}
	return noiselessRelease(m, loss, x, cfg, fill)
}

func TestRuleEitherSparse(t *testing.T) {
	const w = 10.0
	for _, n := range []int{8, 20} {
		worst, a, b, ok := searchWorst(t, "a fill writes it in one layout only", func(trial int) ([]float64, []float64, error, error) {
			targ := signPattern(trial, n, w)
			a, errA := ruleEitherSparseRelease(t, targ, false)
			b, errB := ruleEitherSparseRelease(t, targ, true)
			return a, b, errA, errB
		})
		if !ok {
			return
		}
		checkWithin(t, fmt.Sprintf("n = %d: targets %v", n, signPattern(worst, n, w)), a, b, 1)
	}
}
