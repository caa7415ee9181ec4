package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// randomAdjacency is a rows×cols matrix (rows ≥ 3) with entries of
// probability p and random non-zero weights, some entries stored as
// explicit zeros (which are not neighbours): rows 0 and rows−1 are empty
// and row 1 holds only an explicit zero (isolated rows, both ways).
func randomAdjacency(r *rand.Rand, rows, cols int, p float64) *graphs.CSR {
	src, dst, val := []int{1}, []int{0}, []float64{0}
	for i := 2; i < rows-1; i++ {
		for j := 0; j < cols; j++ {
			if r.Float64() < p {
				v := 0.5 + 2*r.Float64()
				if r.IntN(6) == 0 {
					v = 0
				}
				src, dst, val = append(src, i), append(dst, j), append(val, v)
			}
		}
	}
	return graphs.FromCOO(rows, cols, src, dst, val)
}

// neighboursOf lists the j with a[i,j] ≠ 0.
func neighboursOf(a *graphs.CSR, i int) []int {
	var out []int
	for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
		if a.Value(k) != 0 {
			out = append(out, a.Indices[k])
		}
	}
	return out
}

// aggregateRef is the definition: sum, mean or max over the non-zero
// entries of each row, 0 for none.
func aggregateRef(a *graphs.CSR, x []float64, k int, mode Aggr) []float64 {
	out := make([]float64, a.Rows*k)
	for i := 0; i < a.Rows; i++ {
		nb := neighboursOf(a, i)
		if len(nb) == 0 {
			continue
		}
		o := out[i*k : (i+1)*k]
		for c := range o {
			switch mode {
			case Max:
				o[c] = math.Inf(-1)
				for _, j := range nb {
					o[c] = math.Max(o[c], x[j*k+c])
				}
			default:
				for _, j := range nb {
					o[c] += x[j*k+c]
				}
				if mode == Mean {
					o[c] /= float64(len(nb))
				}
			}
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64()
	}
	return out
}

// TestAggregateValues: every mode equals its definition over the non-zero
// entries of each row — stored weights are not weights, stored zeros are
// not neighbours, and isolated rows give 0 — on square and rectangular
// adjacencies.
func TestAggregateValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][2]int{{15, 15}, {9, 20}} {
		a := randomAdjacency(r, shape[0], shape[1], 0.3)
		nb, err := NewNeighbours("A", a)
		if err != nil {
			t.Fatal(err)
		}
		const k = 4
		x := randSlice(r, a.Cols*k)
		for _, mode := range []Aggr{Sum, Mean, Max} {
			m := nn.NewModel(1)
			xn := m.Input("x", x, a.Cols, k)
			var y *G.Node
			err := nn.Build(func() error {
				var err error
				if y, err = Aggregate(m, nb, xn, mode); err != nil {
					return err
				}
				return m.Compile(nil, []*G.Node{y})
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Evaluate(); err != nil {
				t.Fatal(err)
			}
			got, want := nn.Values(y), aggregateRef(a, x, k, mode)
			for p := range want {
				if math.Abs(got[p]-want[p]) > 1e-14 {
					t.Errorf("%v %s: out[%d][%d] = %v, want %v", shape, mode, p/k, p%k, got[p], want[p])
				}
			}
			for _, i := range []int{0, 1, a.Rows - 1} {
				for c := 0; c < k; c++ {
					if got[i*k+c] != 0 {
						t.Errorf("%v %s: row %d has no neighbour but aggregates to %v", shape, mode, i, got[i*k+c])
					}
				}
			}
		}
	}
}

// TestAggregateGradCheck: the gradient through each mode agrees with
// finite differences (nn.Model.GradCheck), isolated rows and stored zeros
// included, inside a small model x → Aggregate → ·W → cross-entropy.
func TestAggregateGradCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := randomAdjacency(r, 12, 10, 0.3)
	nb, err := NewNeighbours("A", a)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Aggr{Sum, Mean, Max} {
		m := nn.NewModel(5)
		err := nn.Build(func() error {
			x := m.NewParam("x", nn.Uniform(1), a.Cols, 4)
			w := m.NewParam("w", nn.Uniform(1), 4, 3)
			y, err := Aggregate(m, nb, x.Node, mode)
			if err != nil {
				return err
			}
			ce, err := nn.NewCrossEntropy(m, nn.MatMul(y, w.Node), "loss")
			if err != nil {
				return err
			}
			rows, labels := make([]int, a.Rows), make([]int, a.Rows)
			for i := range rows {
				rows[i], labels[i] = i, r.IntN(3)
			}
			if err := ce.SetRows(rows, labels); err != nil {
				return err
			}
			return m.Compile(ce.Mean, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.GradCheck(1e-5, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res {
			if c.MaxRel > 1e-6 || c.Checked == 0 {
				t.Errorf("%s: %s: relative error %.3g at %d (%d checked)", mode, c.Param, c.MaxRel, c.WorstIdx, c.Checked)
			}
		}
		// the rows of x that no row gathers get no gradient
		g, err := m.Params[0].Grad()
		if err != nil {
			t.Fatal(err)
		}
		gathered := make([]bool, a.Cols)
		for i := 0; i < a.Rows; i++ {
			for _, j := range neighboursOf(a, i) {
				gathered[j] = true
			}
		}
		for j, ok := range gathered {
			for c := 0; c < 4 && !ok; c++ {
				if g[j*4+c] != 0 {
					t.Errorf("%s: x row %d is gathered by no row but has gradient %v", mode, j, g[j*4+c])
				}
			}
		}
	}
}

func TestAggregateErrors(t *testing.T) {
	a := &graphs.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 1, 2}, Indices: []int{0, 2}}
	if _, err := NewNeighbours("A", &graphs.CSR{Rows: 1, Cols: 1, Indptr: []int{0, 1}, Indices: []int{4}}); err == nil {
		t.Error("NewNeighbours accepted an out-of-range column")
	}
	nb, err := NewNeighbours("A", a)
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewModel(1)
	x := m.Input("x", make([]float64, 4), 2, 2)
	if _, err := Aggregate(m, nb, x, Sum); err == nil {
		t.Error("Aggregate accepted a 2-row input for a 3-column adjacency")
	}
	x3 := m.Input("x3", make([]float64, 6), 3, 2)
	if _, err := Aggregate(m, nb, x3, Aggr(7)); err == nil {
		t.Error("Aggregate accepted an unknown mode")
	}
	for _, s := range []string{"sum", "mean", "max"} {
		a, err := ParseAggr(s)
		if err != nil || a.String() != s {
			t.Errorf("ParseAggr(%q) = %v, %v", s, a, err)
		}
	}
	if _, err := ParseAggr("min"); err == nil {
		t.Error(`ParseAggr("min") succeeded`)
	}
}
