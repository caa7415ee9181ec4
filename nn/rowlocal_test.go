package nn

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
)

// TestCheckRowLocal: the whitelist accepts row-local paths (x·W + b,
// activations, log-softmax and NLL against a target, a square or pooling
// product, a pair gather joined element-wise) and refuses, naming the op,
// every path that reads batch rows outside them; a pair gather's row
// reads are then checked against the batch's groups.
func TestCheckRowLocal(t *testing.T) {
	const rows, f, c = 4, 3, 2
	for _, tc := range []struct {
		name  string
		pool  int
		path  func(m *Model, x *G.Node, w *Param) (*G.Node, error)
		want  string // part of the refusal; "" accepted
		reads int    // fixed row selections returned
	}{
		{"x·W, ReLU, log-softmax, NLL", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			t := m.Input("target", make([]float64, rows*c), rows, c)
			return NLLRows(G.Must(LogSoftmax(ReLU(MatMul(x, w.Node)))), t)
		}, "", 0},
		{"W·x (a product by batch rows on the right)", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			j := m.Input("J", make([]float64, rows*rows), rows, rows)
			return RowSums(MatMul(j, x)), nil
		}, "reads input 1", 0},
		{"column sums", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			return ColSums(x), nil
		}, "ColSums", 0},
		{"transpose (an op not on the whitelist)", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			return G.Transpose(x)
		}, "not a row-local op", 0},
		{"square product", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			a := NewSparse("A", graphs.FromCOO(rows, rows, []int{0, 1}, []int{1, 0}, nil))
			return RowSums(G.Must(SpMM(a, x))), nil
		}, "", 0},
		{"pooling product then a square product over the pool", 2, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			p := NewSparse("P", graphs.FromCOO(2, rows, []int{0, 1}, []int{0, 2}, nil))
			q := NewSparse("Q", graphs.FromCOO(2, 2, []int{0}, []int{1}, nil))
			return RowSums(G.Must(SpMM(q, G.Must(SpMM(p, x))))), nil
		}, "SpMM(Q)", 0},
		{"pooling product", 2, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			p := NewSparse("P", graphs.FromCOO(2, rows, []int{0, 1}, []int{0, 2}, nil))
			return RowSums(G.Must(SpMM(p, x))), nil
		}, "", 0},
		{"pair gather joined", 0, func(m *Model, x *G.Node, w *Param) (*G.Node, error) {
			u := G.Must(GatherRows(x, []int{0, 1}, "U"))
			v := G.Must(GatherRows(x, []int{2, 3}, "V"))
			return G.Sum(G.Must(G.HadamardProd(u, v)), 1)
		}, "", 5}, // U, V, their product, its sum, and the loss rows (each with its own row)
	} {
		m := NewModel(1)
		var out *G.Node
		err := Build(func() error {
			w := m.NewParam("W", Constant(1), f, c)
			x := m.Input("X", make([]float64, rows*f), rows, f)
			var err error
			out, err = tc.path(m, x, w)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rl, err := m.CheckRowLocal(out, rows, tc.pool)
		var reads []RowReads
		if rl != nil {
			reads = rl.Reads
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want a refusal naming %q", tc.name, err, tc.want)
		case tc.want == "" && len(reads) != tc.reads:
			t.Errorf("%s: %d row selections, want %d", tc.name, len(reads), tc.reads)
		}
		if tc.reads == 0 || err != nil {
			continue
		}
		// rows 0 and 2 form pair 0, rows 1 and 3 pair 1
		if err := CheckRowReads(reads, &RowGroups{Of: []int{0, 1, 0, 1}, Samples: 2}, nil); err != nil {
			t.Errorf("%s: pairs within examples refused: %v", tc.name, err)
		}
		err = CheckRowReads(reads, &RowGroups{Of: []int{0, 1, 1, 0}, Samples: 2}, nil)
		if err == nil || !strings.Contains(err.Error(), "GatherRows(V") {
			t.Errorf("%s: pairs across examples: got %v, want a refusal naming the gather", tc.name, err)
		}
	}
}

// TestClippingNonFinite: an example whose squared norm is NaN or +Inf gets
// clip factor exactly 0 (the old min(1, C/(√n+1e-6)) gave NaN for NaN),
// and its rows add exactly 0 to a clipped sum even where the inputs or the
// output gradients are infinite or NaN (0·Inf = NaN before), so every
// example's contribution is 0 or has norm ≤ C.
func TestClippingNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	m := NewModel(1)
	var f, sum, colsum *G.Node
	var nsq, a, d *G.Node
	err := Build(func() error {
		nsq = m.Input("n2", []float64{4, nan, inf, 0.25}, 4, 1)
		v := G.Must(G.Reshape(nsq, []int{4}))
		f = G.Must(ClipFactors(v, 1))
		a = m.Input("a", []float64{1, 2, inf, 0, nan, 1, 3, 4}, 4, 2)
		d = m.Input("d", []float64{1, 1, 2, inf, nan, 0, 1, -1}, 4, 2)
		cd := ScaleRows(d, f)
		lw := LinearWeight{Input: a}
		var err error
		if sum, err = lw.ClippedSum(cd); err != nil {
			return err
		}
		colsum, err = NormScale{Normalized: a}.ClippedSum(cd)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.NewRunner(f, sum, colsum)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	c := 1 / (2 + 1e-6)
	if got, want := Values(f), []float64{c, 0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("factors %v, want %v", got, want)
	}
	// rows 1 and 2 are clipped out; rows 0 (factor c) and 3 (factor 1) remain:
	// aᵀ·cd = c·a₀ᵀd₀ + a₃ᵀd₃
	want := []float64{c*1*1 + 3*1, c*1*1 + 3*-1, c*2*1 + 4*1, c*2*1 + 4*-1}
	for i, v := range Values(sum) {
		if !(math.Abs(v-want[i]) <= 1e-12) {
			t.Errorf("clipped sum %v, want %v", Values(sum), want)
			break
		}
	}
	wantCol := []float64{c*1*1 + 3*1, c*2*1 + 4*-1}
	for i, v := range Values(colsum) {
		if !(math.Abs(v-wantCol[i]) <= 1e-12) {
			t.Errorf("norm-scale clipped sum %v, want %v", Values(colsum), wantCol)
			break
		}
	}
}
