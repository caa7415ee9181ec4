package trainers

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// TestSSI is the worked example: s+ = 0.6, s− = −0.2 give
// SSI = 1/(0.4 + 0.8) = 0.8333….
func TestSSI(t *testing.T) {
	// Node 0 = (1, 0); node 1 at cosine 0.6 from it, node 2 at −0.2
	// (norm 2, to check the normalisation); node 3 is zero.
	emb := []float64{1, 0, 1.2, 1.6, -0.4, 2 * math.Sqrt(0.96), 0, 0}
	edges := graphs.FromCOO(4, 4, []int{0, 0}, []int{1, 2}, []float64{1, -1})
	got, err := SSI(emb, 2, edges)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-0.8333333333333333) > 1e-14 {
		t.Errorf("SSI = %.17g, want 0.8333333333333333", got)
	}
	// Means over several edges, each stored entry once; a zero vector has
	// cosine 0: s+ = (0.6 + 0)/2 = 0.3, s− = (−0.2 − 0.2)/2 = −0.2.
	edges = graphs.FromCOO(4, 4, []int{0, 3, 0, 2}, []int{1, 0, 2, 0}, []float64{1, 1, -1, -1})
	got, _ = SSI(emb, 2, edges)
	if want := 1 / (0.7 + 0.8); math.Abs(got-want) > 1e-14 {
		t.Errorf("SSI = %v, want %v", got, want)
	}
	// Random-like embeddings (all cosines 0) give 1/2; perfect ones +Inf.
	orth := []float64{1, 0, 0, 1, 1, 0, 0, 1}
	two := graphs.FromCOO(4, 4, []int{0, 2}, []int{1, 3}, []float64{1, -1})
	if got, _ := SSI(orth, 2, two); got != 0.5 {
		t.Errorf("orthogonal SSI = %v, want 0.5", got)
	}
	perfect := []float64{1, 0, 2, 0, 0, 1, 0, -3}
	if got, _ := SSI(perfect, 2, two); !math.IsInf(got, 1) {
		t.Errorf("perfect SSI = %v, want +Inf", got)
	}
	for _, tc := range []struct {
		emb   []float64
		k     int
		edges *graphs.CSR
		msg   string
	}{
		{emb, 0, edges, "dimension 0"},
		{emb[:7], 2, edges, "not a multiple"},
		{emb, 2, nil, "no edges"},
		{emb, 2, graphs.FromCOO(3, 3, nil, nil, nil), "edges are 3×3, want 4×4"},
		{emb, 2, graphs.FromCOO(4, 4, []int{0}, []int{1}, nil), "1 positive and 0 negative"},
		{emb, 2, graphs.FromCOO(4, 4, []int{0}, []int{1}, []float64{0}), "sign 0"},
		{[]float64{1, 0, math.NaN(), 0, 0, 0, 0, 0}, 2, edges, "node 1, entry 0 is NaN"},
	} {
		if _, err := SSI(tc.emb, tc.k, tc.edges); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("error %v, want one containing %q", err, tc.msg)
		}
	}
}

// TestMacroF1 uses scikit-learn's f1_score documentation example:
// y_true = [0,1,2,0,1,2], y_pred = [0,2,1,0,0,1] give macro 0.26666…,
// micro 0.33333… and per-class [0.8, 0, 0].
func TestMacroF1(t *testing.T) {
	labels := []int{0, 1, 2, 0, 1, 2}
	pred := []int{0, 2, 1, 0, 0, 1}
	idx := []int{0, 1, 2, 3, 4, 5}
	if got := MacroF1(pred, labels, idx); math.Abs(got-0.26666666666666666) > 1e-15 {
		t.Errorf("macro-F1 = %v, want 0.2667", got)
	}
	if got := MicroF1(pred, labels, idx); math.Abs(got-1.0/3) > 1e-15 {
		t.Errorf("micro-F1 = %v, want 0.3333", got)
	}
	for c, want := range []float64{0.8, 0, 0} {
		if got := BinaryF1(pred, labels, idx, c); math.Abs(got-want) > 1e-15 {
			t.Errorf("F1 of class %d = %v, want %v", c, got, want)
		}
	}
	// Sign prediction (1 = positive edge, 0 = negative): TP 3, FP 1, FN 1
	// for class 1 → 0.75; class 0: TP 1, FP 1, FN 1 → 0.5; macro 0.625.
	sl := []int{1, 1, 1, 1, 0, 0}
	sp := []int{1, 1, 1, 0, 1, 0}
	if got := BinaryF1(sp, sl, idx, 1); math.Abs(got-0.75) > 1e-15 {
		t.Errorf("binary F1 = %v, want 0.75", got)
	}
	if got := MacroF1(sp, sl, idx); math.Abs(got-0.625) > 1e-15 {
		t.Errorf("macro F1 = %v, want 0.625", got)
	}
	// A class only predicted counts (F1 0); an absent class gives 0.
	if got := MacroF1([]int{1, 1}, []int{1, 1}, []int{0, 1}); got != 1 {
		t.Errorf("all correct: %v", got)
	}
	if got := MacroF1([]int{1, 2}, []int{1, 1}, []int{0, 1}); math.Abs(got-(2.0/3)/2) > 1e-15 {
		t.Errorf("one class only predicted: %v, want 1/3", got)
	}
	if got := BinaryF1([]int{0}, []int{0}, []int{0}, 1); got != 0 {
		t.Errorf("absent class F1 = %v, want 0", got)
	}
	if !math.IsNaN(MacroF1(pred, labels, nil)) || !math.IsNaN(BinaryF1(pred, labels, nil, 1)) {
		t.Error("empty index list: want NaN")
	}
}
