package dpnn_test

import (
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
)

// The eleventh outside audit of issue 38: an example with no rows (which
// NewExamples accepts: DPAR's ids without rows) took no row but counted as
// a chunk's example, so a chunk could hold more examples than the batch
// has rows, and the step panicked in the per-sample norms. On G (example 0
// with its row) the step ran; on G′ (example 0 emptied) it crashed — the
// crash told G′ from G. Chunks now hold at most as many examples as rows.
func TestStepWithEmptyExamples(t *testing.T) {
	const n, capacity, f = 4, 2, 2
	step := func(empty0 bool) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		start := []int{0, 1, 2, 3, 4}
		if empty0 {
			start = []int{0, 0, 1, 2, 3}
		}
		x := startExamples(t, start, "row")
		cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
		var ce *nn.CrossEntropy
		mustBuild(t, func() error {
			var err error
			ce, err = nn.NewCrossEntropy(m, recordedLinear(m, "lin", xin, f, 2, false), "loss")
			return err
		})
		lab := make([]int, capacity)
		_, err = noiselessRelease(m, ce.PerRow, x, cfg, func(b *dpnn.Batch) error {
			buf := nn.Values(xin)
			var rows []int
			for k := range b.Examples { // an example without rows writes none
				for r := b.First[k]; r < b.First[k+1]; r++ {
					buf[r*f], buf[r*f+1] = 1, 1
					rows = append(rows, r)
				}
			}
			return ce.SetRows(rows, lab)
		})
		return err
	}
	for _, empty0 := range []bool{false, true} {
		if err := step(empty0); err != nil {
			t.Errorf("example 0 without rows %v: the step failed: %v", empty0, err)
		}
	}
}
