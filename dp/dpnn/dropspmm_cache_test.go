package dpnn_test

// The ninth outside audit of issue 38: nn.Model.DropoutSpMM keeps a float32 COPY
// of its input's value taken at construction (dropSpMMOp.x32) and, in
// training mode, multiplies that copy instead of the input's current value
// whenever the input still has the same backing array (it is written in
// place, or set again from the same buffer). On a DP-SGD path over declared
// Examples the input is a batch leaf: RowLocal.Reset empties the leaf, and
// the fill writes each row with the data of the example laid out there,
// but the op never reads either: it reads the construction-time value,
// row by row, by batch POSITION (a batch input copy that Reset does not
// reach). Here the construction value is ±w by row parity (no data at all),
// the fill is honest (every example has the same features, its label is
// the example's parity), and removing example 0 shifts every other example
// to a row of the other parity: each one's label now meets the other ±w.
// Before the fix: Δ 9.999·C at n = 10, 29.997·C at n = 30 (in place or
// set from the same buffer) and 3.6·C through GCNConv; now CheckRowLocal
// drops the op's copy on a training path (nn's dropSpMMOp.uncache) and
// GCNConv gathers under the mask from a copy only for constant features.

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// dropCacheRelease: n one-row examples declared by Start with the identity
// adjacency (example 0 without rows when removed0), R = 1, Change = 1,
// C = 1, q = 1, one noiseless step. The path is
// lin(DropoutSpMM(A, Xb, p)) with A the batch adjacency (Set from b.Adj by
// the fill) and Xb a batch leaf whose construction value is init(r) at row
// r. mode: "inplace" writes Xb through nn.Values; "setsame" calls
// nn.SetValue with the construction buffer; "setnew" with a fresh buffer
// each time (the control: the op then reads the current value).
func dropCacheRelease(t *testing.T, n int, init func(r, c int) float64, removed0 bool, mode string) ([]float64, error) {
	const f = 2
	start := startRows(n, 1, removed0)
	x, err := dpnn.NewExamples(n, start, identityAdj(start[n]), 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	backing := make([]float64, capacity*f)
	for r := 0; r < capacity; r++ {
		for c := 0; c < f; c++ {
			backing[r*f+c] = init(r, c)
		}
	}
	xin := m.Input("Xb", backing, capacity, f)
	adj := emptySparse("A", capacity, capacity)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		m.StartRecording()
		h := m.DropoutSpMM(adj, xin, 0x1p-32) // p = 2^-32: practically never drops
		y := lin.Forward(h)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	sgd, err := dpnn.Private(m, ce.PerRow, []*G.Node{}, x, cfg, 0, nil, dp.NewSource(1))
	if err != nil {
		return nil, err
	}
	lab := make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		var buf []float64
		switch mode {
		case "inplace":
			buf = nn.Values(xin) // Reset zeroed it in place
		case "setsame":
			buf = backing
			clear(buf)
		default:
			buf = make([]float64, capacity*f)
		}
		rows := parityRows(b, lab) // its label: the example's parity
		for _, r := range rows {
			buf[r*f], buf[r*f+1] = 1, 1 // every example's features are the same
		}
		if mode != "inplace" {
			if err := nn.SetValue(xin, buf); err != nil {
				return err
			}
		}
		if err := adj.Set(b.Adj); err != nil {
			return err
		}
		return ce.SetRows(rows, lab)
	}
	return scaledRelease(sgd, cfg, fill)
}

// parityRows labels every batch row of each example with the example's
// parity and returns those rows, in order.
func parityRows(b *dpnn.Batch, lab []int) []int {
	var rows []int
	for k, e := range b.Examples {
		for r := b.First[k]; r < b.First[k+1]; r++ {
			lab[r] = e % 2
			rows = append(rows, r)
		}
	}
	return rows
}

func TestDropoutSpMMReadsTheFilledBatch(t *testing.T) {
	parity := func(r, c int) float64 { // ±50 by row parity: float32-exact, no data
		if r%2 == 1 {
			return -50
		}
		return 50
	}
	for _, mode := range []string{"inplace", "setsame", "setnew"} {
		for _, n := range []int{10, 30} {
			a, err := dropCacheRelease(t, n, parity, false, mode)
			b, err2 := dropCacheRelease(t, n, parity, true, mode)
			withinOrRefused(t, fmt.Sprintf("mode=%s n=%d", mode, n), a, b, err, err2, 1)
		}
	}
}
