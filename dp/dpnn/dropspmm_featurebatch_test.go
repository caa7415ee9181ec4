package dpnn_test

// The ninth outside audit of issue 38, stock-layer form of the DropoutSpMM
// cache break (dropspmm_cache_test.go): layers.NewFeatureBatch (dense
// features) + layers.GCNConv.ForwardInput with input dropout p > 0 and
// dense features narrower than the layer (InputFirst), which is
// nn.Model.DropoutSpMM. FeatureBatch.Fill refills the batch through
// nn.SetValue from the SAME buffer every time, so the op keeps multiplying
// the float32 copy of the value the batch held when the layer was built.
// Here the author ran one warm-up Fill (the first capacity examples'
// rows, e.g. to check the forward pass) before building the layer: every
// DP-SGD step then reads those examples' features by batch position, paired
// with the labels of whatever examples are laid out there. The step's fill
// is the stock FeatureBatch.Fill of the laid-out rows (honest).
// Before the fix: Δ 9.999·C at n = 10, 29.997·C at n = 30 (in place or
// set from the same buffer) and 3.6·C through GCNConv; now CheckRowLocal
// drops the op's copy on a training path (nn's dropSpMMOp.uncache) and
// GCNConv gathers under the mask from a copy only for constant features.

import (
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// gcnWarmRelease: n one-row examples (example e: features (v_e, v_e) with
// v_e = +50 for even e, −50 for odd, label e mod 2), declared by Start with
// the identity adjacency; example 0 has no rows (its removal) when
// removed0. R = 1, Change = 1, C = 1, rate q, one noiseless step.
func gcnWarmRelease(t *testing.T, n int, q float64, removed0, warm bool, seed uint64) ([]float64, error) {
	const f, hid = 2, 4
	start := startRows(n, 1, removed0)
	var feats []float64
	var ids []int // universe row -> example
	for e := 0; e < n; e++ {
		if e == 0 && removed0 {
			continue
		}
		v := 50.0
		if e%2 == 1 {
			v = -50
		}
		feats = append(feats, v, v)
		ids = append(ids, e)
	}
	x, err := dpnn.NewExamples(n, start, identityAdj(start[n]), 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, SampleRate: q, Epochs: 1, Clip: 1, What: "row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	universe := layers.DenseFeatures(feats, len(ids), f)
	batch, err := layers.NewFeatureBatch(m, universe, capacity, "Xb")
	if err != nil {
		t.Fatal(err)
	}
	if warm { // the author's warm-up fill before building the layers
		rows := make([]int, min(capacity, len(ids)))
		for i := range rows {
			rows[i] = i
		}
		if err := batch.Fill(rows); err != nil {
			t.Fatal(err)
		}
	}
	adj := emptySparse("Â", capacity, capacity)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		conv := layers.NewGCNConv(m, "conv", adj, f, hid)
		head := layers.NewLinear(m, "head", hid, 2, true, layers.InitPyG)
		m.StartRecording()
		h := nn.ReLU(conv.ForwardInput(m, &batch.Features, 0x1p-32))
		y := head.Forward(h)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	sgd, err := dpnn.Private(m, ce.PerRow, []*G.Node{}, x, cfg, 0, nil, dp.NewSource(seed))
	if err != nil {
		return nil, err
	}
	lab := make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		rows := parityRows(b, lab)
		if err := batch.Fill(b.Rows); err != nil { // the stock fill: row i <- universe row b.Rows[i]
			return err
		}
		if err := adj.Set(b.Adj); err != nil {
			return err
		}
		return ce.SetRows(rows, lab)
	}
	return scaledRelease(sgd, cfg, fill)
}

func TestGCNConvInputDropoutReadsTheFilledBatch(t *testing.T) {
	for _, warm := range []bool{false, true} {
		for _, q := range []float64{1, 0.5} {
			for _, n := range []int{10, 40} {
				worst, seedAt := 0.0, uint64(0)
				for seed := uint64(1); seed <= 8; seed++ { // the same seed on both sides: the same Poisson draw of ids
					a, err := gcnWarmRelease(t, n, q, false, warm, seed)
					b, err2 := gcnWarmRelease(t, n, q, true, warm, seed)
					if err != nil || err2 != nil {
						t.Fatalf("warm=%v q=%v n=%d refused: %v / %v", warm, q, n, err, err2)
					}
					if d := dist(a, b); d > worst {
						worst, seedAt = d, seed
					}
				}
				t.Logf("warm=%v q=%v n=%d: max over seeds ‖Δ clipped sum‖ = %.4f at seed %d (declared 1)", warm, q, n, worst, seedAt)
				if worst > 1+1e-9 {
					t.Errorf("BREAK warm=%v q=%v n=%d: removing example 0 moved the clipped sum by %.4f > C = 1 (seed %d)", warm, q, n, worst, seedAt)
				}
			}
		}
	}
}
