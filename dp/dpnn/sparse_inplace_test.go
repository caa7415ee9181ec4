package dpnn_test

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Round 7 (aud38g): Sparse.Set checks (finite values, canonical rows) run
// at Set only and Set keeps the caller's CSR (no copy); nn.Sparse's doc
// allows writing A's arrays in place (only a Fixed matrix promises not
// to). A fill that Sets a feature matrix and then writes its values (or
// indices) in place bypasses both checks. mode "nan": example 0's value
// written as NaN in place; "dup": example 0's row of d entries rewritten
// in place as d duplicates of one column (the fifth audit's √d).
func sparseInplaceRelease(t *testing.T, n int, start []int, vals []float64, mode string) ([]float64, error) {
	const f = 8
	x, err := dpnn.NewExamples(n, start, nil, 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	s := emptySparse("S", capacity, f)
	var loss *G.Node
	mustBuild(t, func() error {
		w := m.NewParam("w", nn.Constant(1), f, 1)
		m.StartRecording()
		yw, err := nn.SpMM(s, w.Node)
		if err != nil {
			return err
		}
		y := m.RecordLinear(yw, w, nil, nil, s)
		m.StopRecording()
		loss = nn.RowSums(y)
		return nil
	})
	fill := func(b *dpnn.Batch) error {
		var src, dst []int
		var val []float64
		special := -1
		for k := range b.Examples {
			if b.First[k+1] == b.First[k] {
				continue
			}
			r := b.First[k]
			u := b.Rows[r]
			if b.Examples[k] == 0 {
				special = len(src)
			}
			for j := 0; j < f; j++ { // row r: vals[u] in every column
				src, dst, val = append(src, r), append(dst, j), append(val, vals[u])
			}
		}
		a := graphs.FromCOO(capacity, f, src, dst, val)
		if err := s.Set(a); err != nil {
			return err
		}
		if special >= 0 { // example 0's entries, written in place after Set
			switch mode {
			case "nan":
				a.Data[special] = math.NaN()
			case "dup":
				for j := 0; j < f; j++ {
					a.Indices[special+j] = 0
				}
			}
		}
		return nil
	}
	return noiselessRelease(m, loss, x, cfg, fill)
}

func TestSparseInPlace(t *testing.T) {
	const n = 10
	for _, mode := range []string{"none", "nan", "dup"} {
		all, startG, startG2 := make([]float64, n), make([]int, n+1), make([]int, n+1)
		for e := 0; e < n; e++ {
			all[e], startG[e+1] = 0.05, e+1 // ‖g‖ = 0.05·√8 < C: unclipped
			if e > 0 {
				startG2[e+1] = e
			}
		}
		if mode == "dup" {
			all[0] = 0.3 // computed norm √8·0.3 ≈ 0.85 < C: unclipped; true norm 8·0.3 = 2.4
		}
		a, errA := sparseInplaceRelease(t, n, startG, all, mode)
		b, errB := sparseInplaceRelease(t, n, startG2, all[1:], mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}
