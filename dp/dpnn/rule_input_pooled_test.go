package dpnn_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
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
	x := pooledExamples(t, n, 2, 1, absent0)
	capacity := 2 * n
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "pooled", PoolRows: capacity}
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity), capacity, 1)
	tin := m.Input("Tb", make([]float64, capacity), capacity, 1)
	ps := nn.NewSparse("pool", &graphs.CSR{Rows: capacity, Cols: capacity, Indptr: make([]int, capacity+1)})
	var loss *G.Node
	mustBuild(t, func() error {
		wp := m.NewParam("W", nn.Constant(1), 1, 1)
		z, err := nn.SpMM(ps, xin) // pooled rows
		if err != nil {
			return err
		}
		m.StartRecording()
		y := m.Record(nn.MatMul(xin, wp.Node), wp, nn.LinearWeight{Input: z})
		m.StopRecording()
		py, err := nn.SpMM(ps, y)
		if err != nil {
			return err
		}
		loss = nn.RowSums(G.Must(G.HadamardProd(py, tin)))
		return nil
	})
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
	return noiselessRelease(m, loss, x, cfg, fill)
}

func TestRuleInputPooled(t *testing.T) {
	const w = 10.0
	for _, n := range []int{8, 20} {
		bestD := 0.0
		var bx, bt, bestA, bestB []float64
		for trial := 0; trial < 64; trial++ {
			xs, targ := make([]float64, n), make([]float64, n)
			s := uint64(trial*2654435761 + 777)
			for e := 0; e < n; e++ {
				s = s*6364136223846793005 + 1442695040888963407
				xs[e] = float64(int(s>>62&1)*2 - 1)
				targ[e] = w * float64(int(s>>61&1)*2-1)
			}
			a, errA := ruleInputPoolRelease(t, xs, targ, false)
			b, errB := ruleInputPoolRelease(t, xs, targ, true)
			if errA != nil || errB != nil {
				// refused (the construction is not accepted): the claim holds
				for _, err := range []error{errA, errB} {
					if err == nil || !strings.Contains(err.Error(), "the pooled examples' rows: per-sample rules") {
						t.Errorf("got %v, want the refusal", err)
					}
				}
				return
			}
			if d := dist(a, b); d > bestD {
				bestD, bx, bt, bestA, bestB = d, xs, targ, a, b
			}
		}
		t.Logf("n = %d: x %v, t %v: G %v, G' %v: ‖Δ clipped sum‖ = %.4f (declared 1)", n, bx, bt, bestA, bestB, bestD)
		if bestD > 1+1e-9 {
			t.Errorf("n = %d: one removed unit moved the clipped sum by %.4f > 1", n, bestD)
		}
	}
}
