package dpnn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The outside audit of issue 38 built training paths that the row-local
// check accepted and whose clipped sum moved by far more than R·Change·C
// when one example changed: a value laid out by batch position rather than
// by example (a constant weight or offset per row: Δ 29 for a declared 1),
// a per-sample rule reading another example's row (Δ 59 for 2), an
// evaluation BatchNorm twin on the path (Δ 0.086 for 0.02) and a NaN from a
// clipped-out sparse feature. These tests rebuild each: every one is now
// refused or stays within its bound.

// ruleRelease is one noiseless step over n one-row examples (R = 1,
// Change = 2) of y = x·W + b recorded by hand with RecordLinear, the
// rule's input being x itself or, with bad, GatherRows(x) reading batch
// row 0 in every row (not an ancestor of the loss).
func ruleRelease(t *testing.T, feats []float64, n, f int, bad bool) ([]float64, error) {
	x, cfg, capacity, m, xin := oneRowModel(t, n, f, 1)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		m.StartRecording()
		a := xin
		if bad {
			var err error
			if a, err = nn.GatherRows(xin, make([]int, capacity), "row0"); err != nil {
				return err
			}
		}
		y := m.RecordLinear(lin.Affine(xin), lin.W, lin.B, a, nil)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	sgd, err := noiselessPrivate(m, ce.PerRow, x, cfg)
	if err != nil {
		return nil, err
	}
	fill := exampleRowsFill(xin, ce, feats, f, capacity)
	return mustScaledRelease(t, "", sgd, cfg, fill), nil
}

// TestRuleInputsChecked: a per-sample rule whose input reads another
// example's row (the audit: Δ 59 for a declared 2) is refused, naming the
// rule; the same rule on its own rows stays within 2C.
func TestRuleInputsChecked(t *testing.T) {
	const n, f = 30, 3
	feats := make([]float64, n*f)
	for e := 0; e < n; e++ {
		feats[e*f], feats[e*f+1], feats[e*f+2] = 1, 0.5, -0.25
	}
	feats2 := append([]float64(nil), feats...)
	feats[0], feats2[0] = 100, -100 // example 0 modified
	a, err := ruleRelease(t, feats, n, f, false)
	b, err2 := ruleRelease(t, feats2, n, f, false)
	if err != nil || err2 != nil {
		t.Fatalf("the rule on its own rows: refused: %v / %v", err, err2)
	}
	if d := dist(a, b); d > 2+1e-9 {
		t.Errorf("one modified example moved the clipped sum by %.4f > 2", d)
	}
	if _, err := ruleRelease(t, feats, n, f, true); err == nil || !strings.Contains(err.Error(), "linear-weight rule of lin.W") {
		t.Errorf("a rule reading batch row 0 in every row: got %v, want a refusal naming the rule", err)
	}
}

// TestFrozenBatchNormTwinRefused: an evaluation BatchNorm twin (which
// normalises with the batch's statistics until running ones are loaded)
// on a DP-SGD training path is refused, like BatchNorm itself.
func TestFrozenBatchNormTwinRefused(t *testing.T) {
	const n, f = 30, 2
	x, cfg, _, m, xin := oneRowModel(t, n, f, 0.01)
	var ce *nn.CrossEntropy
	_, _, err := m.NewFrozen(func() ([]*G.Node, error) {
		bs := m.NewBatchStandardizer(1e-5, 0.1)
		vec := func(name string, v float64) *G.Node {
			d := make([]float64, f)
			for i := range d {
				d[i] = v
			}
			return G.NewVector(m.G, G.Float64, G.WithShape(f), G.WithName(name), G.WithValue(tensor.New(tensor.WithShape(f), tensor.WithBacking(d))))
		}
		h := bs.Affine(xin, vec("gamma", 1), vec("beta", 0))
		y := recordedLinear(m, "lin", h, f, 2, true)
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return []*G.Node{h}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
	if err == nil || !strings.Contains(err.Error(), "AffineEval") {
		t.Errorf("a BatchNorm evaluation twin on the training path: got %v, want a refusal naming it", err)
	}
}

// TestNonFiniteSparseBatchRefused: a sparse batch input set with an Inf or
// NaN feature is refused by Sparse.Set (a clipped-out example's factor 0
// times Inf put NaN into the released sum), so the step fails instead of
// releasing NaN.
func TestNonFiniteSparseBatchRefused(t *testing.T) {
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		s := nn.NewSparse("Xb", &graphs.CSR{Rows: 2, Cols: 2, Indptr: make([]int, 3)})
		err := s.Set(graphs.FromCOO(2, 2, []int{0, 1}, []int{0, 1}, []float64{1, bad}))
		if err == nil || !strings.Contains(err.Error(), "non-finite") {
			t.Errorf("Set with %v: got %v, want a refusal", bad, err)
		}
	}
}

// TestPlainOneRowChecked: run.Module's DP-SGD (DP-MLP, the GAP, ProGAP and
// CARIBOU modules) builds on the plain path with one row per sample; with
// OneRow its training path is checked as one-row Examples are: a row
// selection that makes every row read batch row 0 (accepted before) is
// refused, and RowStandardize (row-local) is accepted.
func TestPlainOneRowChecked(t *testing.T) {
	const rows, f = 8, 3
	for _, tc := range []struct {
		mode, refusal string
	}{{"rowstd", ""}, {"gather", "joins row 0"}} {
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, rows*f), rows, f)
		var ce *nn.CrossEntropy
		mustBuild(t, func() error {
			lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
			h := xin
			var err error
			switch tc.mode {
			case "rowstd":
				h = m.RowStandardize(xin, 1e-5)
			case "gather":
				if h, err = nn.GatherRows(xin, make([]int, rows), "row0"); err != nil {
					return err
				}
			}
			m.StartRecording()
			y := lin.Forward(h)
			m.StopRecording()
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		_, err := dpnn.BuildSGD(m, ce.PerRow, dpnn.SGDConfig{Clip: 1, Multiplier: 1, Rate: 0.5, Samples: 10, Capacity: rows, OneRow: true}, dp.NewSource(1), nil)
		if tc.refusal == "" && err != nil || tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)) {
			t.Errorf("%s: got %v, want refusal %q", tc.mode, err, tc.refusal)
		}
	}
}
