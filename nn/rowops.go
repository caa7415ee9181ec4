package nn

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Fused versions of the element-wise and broadcasting steps every layer
// takes (activation, bias, scale, concatenation). Gorgonia composes them
// from generic ops that allocate an intermediate per step and broadcast by
// materialising a repeated tensor; these run one loop each and allocate
// only their output, which is most of a small model's training time.

const (
	seluAlpha  = vec.SELUAlpha
	seluLambda = vec.SELULambda
)

// seluOp is SELU(x) = λ·x for x > 0 and λ·α·(eᵡ − 1) otherwise, with
// vec's vectorised eˣ (within 2 ulp of math.Exp).
type seluOp struct{ labelled }

var seluFwd = seluOp{labelled{label: "SELU", arity: 1}}

// SELU is the scaled exponential linear unit of Klambauer et al. 2017,
// λ·(max(x,0) + α·(exp(min(x,0)) − 1)), as one op.
func SELU(x *G.Node) *G.Node { return G.Must(G.ApplyOp(seluFwd, x)) }

func (seluOp) DiffWRT(int) []bool { return []bool{true} }

func (op seluOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op seluOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (seluOp) rowInputs() []bool { return []bool{true} }

func (seluOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], "SELU")
	if err != nil {
		return nil, 0, nil, err
	}
	_, d := shape2(x)
	t, out := output(prealloc, x.Shape()...)
	return t, 8 * len(out), func(lo, hi int) { vec.SELU(out[lo*d:hi*d], xd[lo*d:hi*d]) }, nil
}

func (seluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(seluGradOp{labelled{label: "SELUGrad", arity: 2}}, inputs[0], grad))
}

// seluGradOp is dx = dy·λ for x > 0 and dy·λ·α·eᵡ otherwise.
type seluGradOp struct{ labelled }

func (op seluGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op seluGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (seluGradOp) rowInputs() []bool { return []bool{true, true} }

func (seluGradOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, _, dy, err := densePair(vals, "SELUGrad")
	if err != nil {
		return nil, 0, nil, err
	}
	_, d := shape2(x)
	t, out := output(prealloc, x.Shape()...)
	return t, 8 * len(out), func(lo, hi int) { vec.SELUGrad(out[lo*d:hi*d], xd[lo*d:hi*d], dy[lo*d:hi*d]) }, nil
}

// reluOp is x for x ≥ 0 and 0 otherwise (NaN stays NaN), as gorgonia's
// Rectify computes it (x·[x ≥ 0]) but in one parallel loop instead of a
// comparison, a mask and a product; its gradient passes dy where x ≥ 0.
type reluOp struct{ labelled }

var reluFwd = reluOp{labelled{label: "ReLU", arity: 1}}

// ReLU is the rectified linear unit max(x, 0) as one op.
func ReLU(x *G.Node) *G.Node { return G.Must(G.ApplyOp(reluFwd, x)) }

func (reluOp) DiffWRT(int) []bool { return []bool{true} }

func (op reluOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op reluOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (reluOp) rowInputs() []bool { return []bool{true} }

func (reluOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], "ReLU")
	if err != nil {
		return nil, 0, nil, err
	}
	_, d := shape2(x)
	t, out := output(prealloc, x.Shape()...)
	return t, len(out), func(lo, hi int) { vec.ReLU(out[lo*d:hi*d], xd[lo*d:hi*d]) }, nil
}

func (reluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(reluGradOp{labelled{label: "ReLUGrad", arity: 2}}, inputs[0], grad))
}

// reluGradOp is dx = dy where x ≥ 0 and 0 elsewhere.
type reluGradOp struct{ labelled }

func (op reluGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op reluGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (reluGradOp) rowInputs() []bool { return []bool{true, true} }

func (reluGradOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, _, dy, err := densePair(vals, "ReLUGrad")
	if err != nil {
		return nil, 0, nil, err
	}
	_, d := shape2(x)
	t, out := output(prealloc, x.Shape()...)
	return t, len(out), func(lo, hi int) { vec.ReLUGrad(out[lo*d:hi*d], xd[lo*d:hi*d], dy[lo*d:hi*d]) }, nil
}

// rowVecOp combines every row of an (N, d) matrix with a (d) vector:
// x + b (add) or x ∘ b (mul).
type rowVecOp struct {
	pure
	mul bool
}

func (o rowVecOp) label() string {
	if o.mul {
		return "MulRow"
	}
	return "AddRow"
}

// AddRow returns x + b with the vector b added to every row of x (a bias).
func AddRow(x, b *G.Node) *G.Node { return G.Must(G.ApplyOp(rowVecOp{}, x, b)) }

// MulRow returns x ∘ b with every row of x multiplied element-wise by the
// vector b (a per-feature scale).
func MulRow(x, b *G.Node) *G.Node { return G.Must(G.ApplyOp(rowVecOp{mul: true}, x, b)) }

func (rowVecOp) Arity() int { return 2 }
func (rowVecOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 2, Of: a})
}
func (o rowVecOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := sameShape(o.label(), in)
	if err != nil {
		return nil, err
	}
	if b, ok := in[1].(tensor.Shape); !ok || b.TotalSize() != s[1] {
		return nil, fmt.Errorf("nn: %s of %v wants a vector of %d, got %v", o.label(), s, s[1], in[1])
	}
	return s, nil
}
func (o rowVecOp) WriteHash(h hash.Hash) { fmt.Fprint(h, o.label()) }
func (o rowVecOp) Hashcode() uint32      { return hash32(o.WriteHash) }
func (o rowVecOp) String() string        { return o.label() }
func (rowVecOp) DiffWRT(int) []bool      { return []bool{true, true} }

func (o rowVecOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o rowVecOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(o.rows(prealloc, vals))
}

func (rowVecOp) rowInputs() []bool { return []bool{true, false} }

func (o rowVecOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, _, bd, err := densePair(vals, o.label())
	if err != nil {
		return nil, 0, nil, err
	}
	n, d := shape2(x)
	if len(bd) != d {
		return nil, 0, nil, fmt.Errorf("nn: %s of (%d, %d) got a vector of %d", o.label(), n, d, len(bd))
	}
	t, out := output(prealloc, n, d)
	return t, len(xd), func(lo, hi int) {
		if o.mul {
			vec.MulRows(out[lo*d:hi*d], xd[lo*d:hi*d], bd)
		} else {
			vec.AddRows(out[lo*d:hi*d], xd[lo*d:hi*d], bd)
		}
	}, nil
}

// SymDiff: for x + b, dx = dy and db = Σ_rows dy; for x ∘ b, dx = dy ∘ b and
// db = Σ_rows dy ∘ x.
func (o rowVecOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if !o.mul {
		return G.Nodes{grad, ColSums(grad)}, nil
	}
	dx := MulRow(grad, inputs[1])
	prod, err := G.HadamardProd(grad, inputs[0])
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, ColSums(prod)}, nil
}

// scaleRowsOp multiplies row i of an (N, d) matrix by f_i of an (N) vector.
type scaleRowsOp struct{ pure }

// ScaleRows returns x with row i multiplied by f[i] (DP-SGD's per-sample
// clip factors applied to the output gradients); a row with f[i] = 0 is
// exactly 0 even where x is infinite or NaN (selected, not multiplied:
// 0·Inf is NaN), so a clipped-out example contributes nothing.
func ScaleRows(x, f *G.Node) *G.Node { return G.Must(G.ApplyOp(scaleRowsOp{}, x, f)) }

func (scaleRowsOp) Arity() int { return 2 }
func (scaleRowsOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 2, Of: a})
}
func (scaleRowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := sameShape("ScaleRows", in)
	if err != nil {
		return nil, err
	}
	if f, ok := in[1].(tensor.Shape); !ok || f.TotalSize() != s[0] {
		return nil, fmt.Errorf("nn: ScaleRows of %v wants a vector of %d, got %v", s, s[0], in[1])
	}
	return s, nil
}
func (scaleRowsOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ScaleRows") }
func (o scaleRowsOp) Hashcode() uint32    { return hash32(o.WriteHash) }
func (scaleRowsOp) String() string        { return "ScaleRows" }
func (scaleRowsOp) DiffWRT(int) []bool    { return []bool{true, true} }

func (op scaleRowsOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (scaleRowsOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, _, fd, err := densePair(vals, "ScaleRows")
	if err != nil {
		return nil, err
	}
	n, d := shape2(x)
	if len(fd) != n {
		return nil, fmt.Errorf("nn: ScaleRows of (%d, %d) got %d factors", n, d, len(fd))
	}
	t, out := output(prealloc, n, d)
	vec.ScaleRows(out, xd, fd, d)
	for i, f := range fd {
		if f == 0 {
			clear(out[i*d : (i+1)*d])
		}
	}
	return t, nil
}

// SymDiff: dx = dy with row i scaled by f_i; df_i = Σ_j dy_ij·x_ij.
func (scaleRowsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	prod, err := G.HadamardProd(grad, inputs[0])
	if err != nil {
		return nil, err
	}
	return G.Nodes{ScaleRows(grad, inputs[1]), RowSums(prod)}, nil
}

// concatColsOp places its (N, d_k) inputs side by side: (N, Σ d_k).
type concatColsOp struct{ labelled }

// ConcatCols concatenates matrices with the same number of rows along the
// columns (what G.Concat(1, ...) computes, in one pass over the rows).
func ConcatCols(xs ...*G.Node) *G.Node {
	if len(xs) == 1 {
		return xs[0]
	}
	return G.Must(G.ApplyOp(concatColsOp{labelled{label: "ConcatCols", arity: len(xs)}}, xs...))
}

func (o concatColsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := sameShape(o.label, in)
	if err != nil {
		return nil, err
	}
	for _, d := range in[1:] {
		t, ok := d.(tensor.Shape)
		if !ok || len(t) != 2 || t[0] != s[0] {
			return nil, fmt.Errorf("nn: ConcatCols of %v and %v: row counts differ", s, d)
		}
		s[1] += t[1]
	}
	return s, nil
}

func (o concatColsOp) DiffWRT(k int) []bool {
	d := make([]bool, k)
	for i := range d {
		d[i] = true
	}
	return d
}

func (o concatColsOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o concatColsOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(o.rows(prealloc, vals))
}

func (o concatColsOp) rowInputs() []bool {
	all := make([]bool, o.arity)
	for k := range all {
		all[k] = true
	}
	return all
}

func (o concatColsOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	n, width := 0, 0
	data := make([][]float64, len(vals))
	cols := make([]int, len(vals))
	for k, v := range vals {
		x, xd, err := denseF64(v, o.label)
		if err != nil {
			return nil, 0, nil, err
		}
		r, c := shape2(x)
		if k > 0 && r != n {
			return nil, 0, nil, fmt.Errorf("nn: ConcatCols: input %d has %d rows, want %d", k, r, n)
		}
		n, data[k], cols[k] = r, xd, c
		width += c
	}
	t, out := output(prealloc, n, width)
	return t, n * width, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			off := i * width
			for k, xd := range data {
				c := cols[k]
				off += copy(out[off:off+c], xd[i*c:(i+1)*c])
			}
		}
	}, nil
}

// SymDiff hands each input its own block of columns of the output gradient.
func (o concatColsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	out := make(G.Nodes, len(inputs))
	lo := 0
	for k, x := range inputs {
		hi := lo + x.Shape()[1]
		n, err := G.ApplyOp(colsOp{labelled{label: fmt.Sprintf("Cols[%d:%d]", lo, hi), arity: 1}, lo, hi}, grad)
		if err != nil {
			return nil, err
		}
		out[k], lo = n, hi
	}
	return out, nil
}

// colsOp takes columns lo..hi−1 of a matrix (the gradient of ConcatCols).
type colsOp struct {
	labelled
	lo, hi int
}

func (o colsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := sameShape(o.label, in)
	if err != nil {
		return nil, err
	}
	if o.hi > s[1] {
		return nil, fmt.Errorf("nn: %s of %v: not enough columns", o.label, s)
	}
	s[1] = o.hi - o.lo
	return s, nil
}

func (o colsOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o colsOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(o.rows(prealloc, vals))
}

func (colsOp) rowInputs() []bool { return []bool{true} }

func (o colsOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], o.label)
	if err != nil {
		return nil, 0, nil, err
	}
	n, d := shape2(x)
	w := o.hi - o.lo
	t, out := output(prealloc, n, w)
	return t, n * w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(out[i*w:(i+1)*w], xd[i*d+o.lo:i*d+o.hi])
		}
	}, nil
}

var (
	_ G.SDOp = seluFwd
	_ G.SDOp = rowVecOp{}
	_ G.SDOp = concatColsOp{}
	_ G.SDOp = scaleRowsOp{}
)

// rowSumOp is the vector of row sums of an (N, k) matrix, each summed left
// to right (gorgonia's Sum along axis 1 allocates its result every step).
type rowSumOp struct{ pure }

// RowSums returns the (N) vector of x's row sums.
func RowSums(x *G.Node) *G.Node { return G.Must(G.ApplyOp(rowSumOp{}, x)) }

func (rowSumOp) Arity() int { return 1 }
func (rowSumOp) Type() hm.Type {
	return hm.NewFnType(matType(), vecType())
}
func (rowSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: RowSums wants a matrix, got %v", in[0])
	}
	return tensor.Shape{s[0]}, nil
}
func (rowSumOp) WriteHash(h hash.Hash)                 { fmt.Fprint(h, "RowSums") }
func (o rowSumOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (rowSumOp) String() string                        { return "RowSums" }
func (rowSumOp) DiffWRT(int) []bool                    { return []bool{true} }
func (o rowSumOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (rowSumOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "RowSums")
	if err != nil {
		return nil, err
	}
	n, k := shape2(x)
	t, out := output(prealloc, n)
	for i := range out {
		s := 0.0
		for _, v := range xd[i*k : (i+1)*k] {
			s += v
		}
		out[i] = s
	}
	return t, nil
}

func (rowSumOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(rowSpreadOp{cols: inputs[0].Shape()[1]}, grad))
}

// rowSpreadOp is RowSums' gradient: the (N, cols) matrix whose row i is
// dy[i] in every column.
type rowSpreadOp struct {
	pure
	cols int
}

func (rowSpreadOp) Arity() int { return 1 }
func (rowSpreadOp) Type() hm.Type {
	return hm.NewFnType(vecType(), matType())
}
func (o rowSpreadOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 1 {
		return nil, fmt.Errorf("nn: RowSpread wants a vector, got %v", in[0])
	}
	return tensor.Shape{s[0], o.cols}, nil
}
func (o rowSpreadOp) WriteHash(h hash.Hash)               { fmt.Fprint(h, "RowSpread", o.cols) }
func (o rowSpreadOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (o rowSpreadOp) String() string                      { return fmt.Sprintf("RowSpread(%d)", o.cols) }
func (rowSpreadOp) DiffWRT(int) []bool                    { return []bool{true} }
func (o rowSpreadOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o rowSpreadOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	_, dy, err := denseF64(vals[0], "RowSpread")
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, len(dy), o.cols)
	for i, v := range dy {
		r := out[i*o.cols : (i+1)*o.cols]
		for j := range r {
			r[j] = v
		}
	}
	return t, nil
}

func (rowSpreadOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(rowSumOp{}, grad))
}

// colSumOp is the vector of column sums of an (N, d) matrix: row 0, then
// rows 1, 2, … added in turn, the order of gorgonia's Sum along axis 0
// (which allocates its result and goes through a generic reduction every
// step), so the result is bit-identical to it.
type colSumOp struct{ pure }

// ColSums returns the (d) vector of x's column sums (a bias's gradient).
func ColSums(x *G.Node) *G.Node { return G.Must(G.ApplyOp(colSumOp{}, x)) }

func (colSumOp) Arity() int { return 1 }
func (colSumOp) Type() hm.Type {
	return hm.NewFnType(matType(), vecType())
}
func (colSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: ColSums wants a matrix, got %v", in[0])
	}
	return tensor.Shape{s[1]}, nil
}
func (colSumOp) WriteHash(h hash.Hash)                 { fmt.Fprint(h, "ColSums") }
func (o colSumOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (colSumOp) String() string                        { return "ColSums" }
func (colSumOp) DiffWRT(int) []bool                    { return []bool{true} }
func (o colSumOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (colSumOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "ColSums")
	if err != nil {
		return nil, err
	}
	n, d := shape2(x)
	t, out := output(prealloc, d)
	if n == 0 {
		clear(out)
		return t, nil
	}
	colSums(out, xd, n, d)
	return t, nil
}

// colSums writes the column sums of x (n×d) into out: row 0, then each row
// added in turn (vec.ColAdd). One core streams x: with the columns split
// over the two cores (each summing its columns over the rows in order, the
// same bits), each core read half of every row, and the sums ran at half
// the speed or less (10⁶×64: 59–63 ms against 29–32; 10⁵×32: 5.7 against
// 1.4–2.0).
func colSums(out, x []float64, n, d int) {
	copy(out, x[:d])
	vec.ColAdd(out, x[d:], n-1, d)
}

func (o colSumOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(colSpreadOp{rows: inputs[0].Shape()[0]}, grad))
}

// colSpreadOp is ColSums' gradient: the (rows, d) matrix whose every row
// is dy.
type colSpreadOp struct {
	pure
	rows int
}

func (colSpreadOp) Arity() int { return 1 }
func (colSpreadOp) Type() hm.Type {
	return hm.NewFnType(vecType(), matType())
}
func (o colSpreadOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 1 {
		return nil, fmt.Errorf("nn: ColSpread wants a vector, got %v", in[0])
	}
	return tensor.Shape{o.rows, s[0]}, nil
}
func (o colSpreadOp) WriteHash(h hash.Hash)               { fmt.Fprint(h, "ColSpread", o.rows) }
func (o colSpreadOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (o colSpreadOp) String() string                      { return fmt.Sprintf("ColSpread(%d)", o.rows) }
func (colSpreadOp) DiffWRT(int) []bool                    { return []bool{true} }
func (o colSpreadOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o colSpreadOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	_, dy, err := denseF64(vals[0], "ColSpread")
	if err != nil {
		return nil, err
	}
	d := len(dy)
	t, out := output(prealloc, o.rows, d)
	for i := 0; i < o.rows; i++ {
		copy(out[i*d:(i+1)*d], dy)
	}
	return t, nil
}

func (colSpreadOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(colSumOp{}, grad))
}
