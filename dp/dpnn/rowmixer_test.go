package dpnn_test

import (
	"fmt"
	"hash"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sumAllOp is an author-written gorgonia op (not one of nn's op types):
// output row r is the sum of ALL input rows (it reads every example's
// row). It implements nn.RowMixer (an exported interface) and reports an
// empty rows x rows matrix, so CheckRowLocal classes it as a checked square
// product and CheckBlocks passes at every step (no entries).
type sumAllOp struct{ s *nn.Sparse }

func (o sumAllOp) MixedRows() *nn.Sparse { return o.s }
func (o sumAllOp) Arity() int            { return 1 }
func (o sumAllOp) Type() hm.Type {
	a := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(a, a)
}
func (o sumAllOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o sumAllOp) Do(vals ...G.Value) (G.Value, error) {
	x := vals[0].(*tensor.Dense)
	s := x.Shape()
	rows, cols := s[0], s[1]
	in := x.Data().([]float64)
	col := make([]float64, cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			col[c] += in[r*cols+c]
		}
	}
	out := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		copy(out[r*cols:(r+1)*cols], col)
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(out)), nil
}
func (o sumAllOp) ReturnsPtr() bool      { return false }
func (o sumAllOp) CallsExtern() bool     { return false }
func (o sumAllOp) OverwritesInput() int  { return -1 }
func (o sumAllOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "sumAll(%p)", o.s) }
func (o sumAllOp) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }
func (o sumAllOp) String() string        { return "SumAll(author op)" }
func (o sumAllOp) DiffWRT(int) []bool    { return []bool{false} }
func (o sumAllOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("sumAll: no gradient")
}

// mixerRelease: one noiseless step over n one-row examples (R = 1,
// Change = 2, C = 1, q = 1), y = lin(mix(X)) recorded, the rule input
// being the mixed rows a = mix(X); per-row cross-entropy loss.
func mixerRelease(t *testing.T, feats []float64, n, f int, mix func(xin *G.Node, capacity int) (*G.Node, error)) ([]float64, error) {
	x, cfg, capacity, m, xin := oneRowModel(t, n, f, 1)
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
		a, err := mix(xin, capacity)
		if err != nil {
			return err
		}
		m.StartRecording()
		y := lin.Forward(a)
		m.StopRecording()
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	fill := exampleRowsFill(xin, ce, feats, f, capacity)
	return noiselessRelease(m, ce.PerRow, x, cfg, fill)
}

// mixerPair is G's and G′'s features: every row (0.01, −0.01) but example
// 0's first feature, 100 on G and −100 on G′ (example 0 modified: Change =
// 2, bound 2C).
func mixerPair(n, f int) (feats, feats2 []float64) {
	feats = make([]float64, n*f)
	for e := 0; e < n; e++ {
		feats[e*f], feats[e*f+1] = 0.01, -0.01
	}
	feats2 = append([]float64(nil), feats...)
	feats[0], feats2[0] = 100, -100
	return feats, feats2
}

// rowMixerRelease: mixerRelease with sumAllOp over an empty capacity ×
// capacity matrix.
func rowMixerRelease(t *testing.T, feats []float64, n, f int) ([]float64, error) {
	return mixerRelease(t, feats, n, f, func(xin *G.Node, capacity int) (*G.Node, error) {
		return G.ApplyOp(sumAllOp{emptySparse("mix", capacity, capacity)}, xin)
	})
}

func TestAuthorRowMixer(t *testing.T) {
	const n, f = 30, 2
	feats, feats2 := mixerPair(n, f) // example 0 modified (Change = 2: bound 2C)
	a, err := rowMixerRelease(t, feats, n, f)
	b, err2 := rowMixerRelease(t, feats2, n, f)
	if err != nil || err2 != nil {
		if strings.Contains(fmt.Sprint(err, err2), "refuse") || err != nil {
			t.Logf("refused: %v / %v", err, err2)
			return
		}
	}
	d := dist(a, b)
	t.Logf("G %v\nG' %v\n‖Δ clipped sum‖ = %.4f (declared 2)", a, b, d)
	if d > 2+1e-9 {
		t.Errorf("BREAK: one modified example moved the clipped sum by %.4f > 2·C = 2", d)
	}
}
