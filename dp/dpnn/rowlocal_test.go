package dpnn_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// mixedRelease builds DP-SGD over one-row examples (R = 1, Change 2) at
// z = 0 (no noise: the clipped sum itself, divided by q·N) with a training
// path y = Linear(X) followed by mix(y), and returns the released gradient
// times q·N, or the construction's or the step's error. (From the outside
// audit of issue 38's item 1.)
func mixedRelease(t *testing.T, mode string, feats []float64, labels []int, n, f, c int) ([]float64, error) {
	x, err := dpnn.OneRow(n, 1, 2, "one row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 2, BatchSize: n, Epochs: 1, Clip: 1, What: "one row"}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	gx := layers.DenseFeatures(feats, n, f)
	var xb *layers.FeatureBatch
	var ce *nn.CrossEntropy
	var out *G.Node
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, c, true, layers.InitPyG)
		var err error
		if xb, err = layers.NewFeatureBatch(m, gx, capacity, "Xb"); err != nil {
			return err
		}
		m.StartRecording()
		y := xb.Linear(m, lin, 0)
		switch mode {
		case "none":
			out = y
		case "dense":
			buf := make([]float64, capacity*capacity)
			for i := range buf {
				buf[i] = 1 / float64(capacity)
			}
			out = nn.MatMul(m.Input("J", buf, capacity, capacity), y)
		case "gather":
			perm := make([]int, capacity)
			for i := range perm {
				perm[i] = (i + 1) % capacity
			}
			out, err = nn.GatherRows(y, perm, "shift")
		case "chain":
			// S1: (capacity+1)×capacity, row i reads all rows; S2: capacity×(capacity+1) identity-like
			var s1, d1, s2, d2 []int
			for i := 0; i < capacity+1; i++ {
				for j := 0; j < capacity; j++ {
					s1, d1 = append(s1, i), append(d1, j)
				}
			}
			for i := 0; i < capacity; i++ {
				s2, d2 = append(s2, i), append(d2, i)
			}
			A1 := nn.NewSparse("S1", graphs.FromCOO(capacity+1, capacity, s1, d1, nil)).Fixed()
			A2 := nn.NewSparse("S2", graphs.FromCOO(capacity, capacity+1, s2, d2, nil)).Fixed()
			h, err2 := nn.SpMM(A1, y)
			if err2 != nil {
				return err2
			}
			out, err = nn.SpMM(A2, h)
		case "square": // control: must be refused
			var s1, d1 []int
			for i := 0; i < capacity; i++ {
				for j := 0; j < capacity; j++ {
					s1, d1 = append(s1, i), append(d1, j)
				}
			}
			A := nn.NewSparse("A", graphs.FromCOO(capacity, capacity, s1, d1, nil)).Fixed()
			out, err = nn.SpMM(A, y)
		}
		m.StopRecording()
		if err != nil {
			return err
		}
		ce, err = nn.NewCrossEntropy(m, out, "loss")
		return err
	})
	lab := make([]int, capacity)
	fill := func(b *dpnn.Batch) error {
		if err := xb.Fill(b.Rows); err != nil {
			return err
		}
		for k, e := range b.Examples {
			lab[b.First[k]] = labels[e]
		}
		return ce.SetRows(b.First[:len(b.Examples)], lab)
	}
	return noiselessRelease(m, ce.PerRow, x, cfg, fill)
}

// TestRowLocalRefusesMixing: over one-row examples, a training path whose
// ops mix batch rows outside a checked product (a dense product by a
// constant batch×batch matrix, a fixed row gather, two chained non-square
// SpMMs) used to be accepted, and one changed example then moved the
// clipped sum by 58 where R·Change·C = 2 is declared. Each is now refused
// naming the op; the row-local path is accepted and keeps the declared
// bound.
func TestRowLocalRefusesMixing(t *testing.T) {
	const n, f, c = 30, 5, 2
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, f)
	for j := range v {
		v[j] = 10 * rng.NormFloat64()
	}
	feats := make([]float64, n*f)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < f; j++ {
			feats[i*f+j] = v[j]
		}
		labels[i] = i % 2
	}
	for j := 0; j < f; j++ { // example 0: a large feature vector
		feats[j] = 1e4 * v[j]
	}
	feats2 := append([]float64(nil), feats...)
	for j := 0; j < f; j++ { // D': example 0 changed (its features negated)
		feats2[j] = -feats2[j]
	}
	for _, tc := range []struct {
		mode   string
		refuse string // a part of the error; "" = accepted
	}{
		{"none", ""},
		{"square", "SpMM(A)"},
		{"dense", "A × B"},
		{"gather", "GatherRows(shift"},
		{"chain", "SpMM(S1)"},
	} {
		a, err := mixedRelease(t, tc.mode, feats, labels, n, f, c)
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("%s: got error %v, want a refusal naming %q", tc.mode, err, tc.refuse)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		b, err := mixedRelease(t, tc.mode, feats2, labels, n, f, c)
		if err != nil {
			t.Fatalf("%s on D': %v", tc.mode, err)
		}
		d := 0.0
		for i := range a {
			d += (a[i] - b[i]) * (a[i] - b[i])
		}
		if d = math.Sqrt(d); d > 2+1e-9 || d < 0.5 {
			t.Errorf("%s: ‖clipped sum(D) − clipped sum(D′)‖ = %g, want within the declared R·Change·C = 2 (and the change visible)", tc.mode, d)
		}
	}
}
