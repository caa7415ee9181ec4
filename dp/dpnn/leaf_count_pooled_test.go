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

func pooledCountRelease(t *testing.T, n, f int, feats []float64, labels []int, absent0 bool, mode string) ([]float64, error) {
	const c = 2
	x := pooledExamples(t, n, 2, 0.5, absent0)
	pool := n
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "pooled", PoolRows: pool}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	ps := nn.NewSparse("pool", &graphs.CSR{Rows: pool, Cols: capacity, Indptr: make([]int, pool+1)})
	signs := make([]float64, pool)
	for i := range signs {
		signs[i] = float64(1 - 2*(i%2))
	}
	var ce *nn.CrossEntropy
	var perRow *G.Node
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, c, true, layers.InitPyG)
		m.StartRecording()
		h := lin.Forward(xin)
		m.StopRecording()
		z, err := nn.SpMM(ps, h)
		if err != nil {
			return err
		}
		if mode == "pooled-scalerows" {
			z = nn.ScaleRows(z, G.NewConstant(tensor.New(tensor.WithShape(pool), tensor.WithBacking(signs)), G.WithName("possign")))
		}
		if ce, err = nn.NewCrossEntropy(m, z, "loss"); err != nil {
			return err
		}
		pr := ce.PerRow
		if mode == "pooled-count-minus-n" {
			pr = G.Must(G.Mul(ce.PerRow, G.Must(G.Sub(ce.Count, G.NewConstant(float64(n))))))
		}
		zeros := G.NewConstant(tensor.New(tensor.WithShape(capacity-pool), tensor.WithBacking(make([]float64, capacity-pool))), G.WithName("loss.pad"))
		perRow = G.Must(G.Concat(0, pr, zeros))
		return nil
	})
	sgd, err := noiselessPrivate(m, perRow, x, cfg)
	if err != nil {
		return nil, err
	}
	lab, buf := make([]int, pool), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var outRows []int
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				u := b.Rows[r]
				copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			}
			if b.First[k+1] > b.First[k] {
				lab[k] = labels[e]
				outRows = append(outRows, k)
			}
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if err := ps.Set(b.Pool); err != nil {
			return err
		}
		return ce.SetRows(outRows, lab)
	}
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

func TestPooledCount(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	for _, mode := range []string{"pooled-none", "pooled-count-minus-n"} {
		mk := func(absent0 bool) ([]float64, []int) {
			var feats []float64
			labels := make([]int, n)
			for e := 0; e < n; e++ {
				labels[e] = e % 2
				if e == 0 && absent0 {
					continue
				}
				for r := 0; r < 2; r++ {
					for j := 0; j < f; j++ {
						feats = append(feats, 100*float64(1-2*(e%2))*v[j]*float64(1+r))
					}
				}
			}
			return feats, labels
		}
		fG, lG := mk(false)
		fG2, lG2 := mk(true)
		a, errA := pooledCountRelease(t, n, f, fG, lG, false, mode)
		b, errB := pooledCountRelease(t, n, f, fG2, lG2, true, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}
