package dpnn_test

import (
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// countRelease: one noiseless DP-SGD step (q = 1, z = 0, C = 1, R = Change
// = 1) over n one-row examples declared with Start, a linear model and
// nn.CrossEntropy. The fill is the standard one (features into each
// example's row, ce.SetRows with each example's label): it writes nothing
// else. The per-row loss reads ce.Count, the scalar leaf that
// CrossEntropy.SetRows sets to the chunk's row count, whole (a scalar).
func countRelease(t *testing.T, n int, start []int, feats []float64, labels []int, mode string) ([]float64, error) {
	const f, c = 4, 2
	x, cfg, capacity, m, xin := startModel(t, n, start, nil, "row", f)
	var ce *nn.CrossEntropy
	var loss *G.Node
	mustBuild(t, func() error {
		y := recordedLinear(m, "lin", xin, f, c, true)
		var err error
		if ce, err = nn.NewCrossEntropy(m, y, "loss"); err != nil {
			return err
		}
		switch mode {
		case "none":
			loss = ce.PerRow
		case "times-count":
			// ℓ_i · (rows in the chunk)
			loss = G.Must(G.Mul(ce.PerRow, ce.Count))
		case "count-minus-n":
			// ℓ_i · (rows in the chunk − n): 0 on G, −ℓ_i on G − example 0
			k := G.NewConstant(float64(n))
			loss = G.Must(G.Mul(ce.PerRow, G.Must(G.Sub(ce.Count, k))))
		}
		return nil
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	fill := firstRowsFill(xin, ce, f, capacity, feats, labels, nil)
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

func TestCountLeaf(t *testing.T) {
	const n = 30
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) ([]float64, []int) { return signedRows(ids, v, 100) }
	all, startG, startG2 := oneRowPair(n)
	for _, mode := range []string{"none", "times-count", "count-minus-n"} {
		fG, lG := mk(all)
		fG2, lG2 := mk(all[1:])
		a, errA := countRelease(t, n, startG, fG, lG, mode)
		b, errB := countRelease(t, n, startG2, fG2, lG2, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}
