package dpnn_test

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// ruleInputPoolRelease: pooled examples of 2 rows, PoolRows = capacity.
// The parameter W is before the pool (y = X·W, its probe of capacity rows:
// "eitherRows"), but its built-in LinearWeight rule names as Input the
// POOLED value Z = Π·X (row k = pooled example k). CheckRowLocal lets a
// poolRows rule input through against an eitherRows probe; the rule then
// pairs δ's batch rows (grouped by the batch layout) with Z's pooled rows.
func ruleInputPoolRelease(t *testing.T, xs, targ []float64, absent0 bool) ([]float64, error) {
	n := len(targ)
	x, cfg, capacity, m, xin := pooledHeadModel(t, n, absent0)
	tin := m.Input("Tb", make([]float64, capacity), capacity, 1)
	ps := emptySparse("pool", capacity, capacity)
	build := func() (*G.Node, error) {
		wp := m.NewParam("W", nn.Constant(1), 1, 1)
		z, err := nn.SpMM(ps, xin) // pooled rows
		if err != nil {
			return nil, err
		}
		m.StartRecording()
		y := m.Record(nn.MatMul(xin, wp.Node), wp, nn.LinearWeight{Input: z})
		m.StopRecording()
		py, err := nn.SpMM(ps, y)
		if err != nil {
			return nil, err
		}
		return nn.RowSums(G.Must(G.HadamardProd(py, tin))), nil
	}
	xb, tb := make([]float64, capacity), make([]float64, capacity)
	fill := func(b *dpnn.Batch) error {
		clear(xb)
		clear(tb)
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				xb[r] = xs[e] // batch row r: its example's feature
			}
			tb[k] = targ[e] // pooled row k: example k's target
		}
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		if err := nn.SetValue(tin, tb); err != nil {
			return err
		}
		return ps.Set(b.Pool)
	}
	return buildRelease(t, m, x, cfg, build, fill)
}

func TestRuleInputPooled(t *testing.T) {
	const w = 10.0
	pattern := func(trial, n int) (xs, targ []float64) {
		xs, targ = make([]float64, n), make([]float64, n)
		s := uint64(trial*2654435761 + 777)
		for e := 0; e < n; e++ {
			s = s*6364136223846793005 + 1442695040888963407
			xs[e] = float64(int(s>>62&1)*2 - 1)
			targ[e] = w * float64(int(s>>61&1)*2-1)
		}
		return xs, targ
	}
	for _, n := range []int{8, 20} {
		worst, a, b, ok := searchWorst(t, "the pooled examples' rows: per-sample rules", func(trial int) ([]float64, []float64, error, error) {
			xs, targ := pattern(trial, n)
			a, errA := ruleInputPoolRelease(t, xs, targ, false)
			b, errB := ruleInputPoolRelease(t, xs, targ, true)
			return a, b, errA, errB
		})
		if !ok {
			return
		}
		bx, bt := pattern(worst, n)
		checkWithin(t, fmt.Sprintf("n = %d: x %v, t %v", n, bx, bt), a, b, 1)
	}
}
