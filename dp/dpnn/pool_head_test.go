package dpnn_test

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// poolHeadRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R =
// Change = 1) over n pooled examples of 2 rows each (PooledExamples,
// weights 1, ids a public universe; absent0: id 0 holds no example — G −
// v), with the pool's output rows equal to the batch rows (PoolRows =
// capacity, a shape BuildSGD supports: "a square product then has the
// pool's shape too"). The training path: z = Π·X (the pooling product,
// no parameter before it), a parameterised head y = z·W AFTER the pool
// (layers.Linear: RecordLinear, rule input z of pooled rows, probe of
// capacity rows = eitherRows), per-row loss y ∘ T (T a leaf of pool rows:
// example k's target at pool row k). Returns the clipped sum.
func poolHeadRelease(t *testing.T, n int, targ []float64, absent0 bool) ([]float64, error) {
	x, cfg, capacity, m, xin := pooledHeadModel(t, n, absent0)
	tin := m.Input("Tb", make([]float64, capacity), capacity, 1)
	ps := emptySparse("pool", capacity, capacity)
	var loss *G.Node
	mustBuild(t, func() error {
		head := layers.NewLinear(m, "head", 1, 1, false, layers.InitPyG)
		z, err := nn.SpMM(ps, xin)
		if err != nil {
			return err
		}
		m.StartRecording()
		y := head.Forward(z)
		m.StopRecording()
		loss = nn.RowSums(G.Must(G.HadamardProd(y, tin)))
		return nil
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	xb, tb := make([]float64, capacity), make([]float64, capacity)
	fill := func(b *dpnn.Batch) error {
		fillPooledTargets(b, targ, xb, tb, true) // every row's feature 1 (z_k = 2), example k's target at pooled row k
		if err := nn.SetValue(xin, xb); err != nil {
			return err
		}
		if err := nn.SetValue(tin, tb); err != nil {
			return err
		}
		return ps.Set(b.Pool)
	}
	rel, err := scaledRelease(sgd, cfg, fill)
	if err != nil {
		return nil, err
	}
	t.Logf("absent0=%v: groups.Of %v, per-group norm² %v", absent0, sgd.Groups.Of, nn.Values(sgd.NormSq))
	return rel, nil
}

// TestPoolHead: the ghost norm groups the head's δ rows (the pooled
// rows, row k = example k) by the batch-row groups (row k = whichever
// example is laid out at batch row k). With 2-row examples, pooled rows
// 2i and 2i+1 (examples 2i, 2i+1) are clipped as one "sample". Targets
// T_{2i} = −i·w, T_{2i+1} = i·w: on G every pair cancels (clipped sum 0);
// removing example 0 shifts the pairing to (2i+1, 2i+2), each summing to
// −w and clipped to C: Δ = (n/2 − 2)·C.
func TestPoolHead(t *testing.T) {
	for _, n := range []int{8, 20} {
		const w = 100.0
		targ := make([]float64, n)
		for i := 0; 2*i+1 < n; i++ {
			targ[2*i], targ[2*i+1] = -float64(i)*w, float64(i)*w
		}
		a, errA := poolHeadRelease(t, n, targ, false)
		b, errB := poolHeadRelease(t, n, targ, true)
		withinOrRefused(t, fmt.Sprintf("n = %d", n), a, b, errA, errB, 1)
	}
}
