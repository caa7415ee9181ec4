package nn

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// spMaxOp computes, for a constant sparse A (rows×cols) and a dense x
// (cols, k), out[i][c] = max over the stored entries (i, j) of A with a
// non-zero value of x[j][c], and 0 for a row with no such entry (the
// maximum of an empty set is taken to be 0, as PyG's scatter max does).
// A's values are otherwise ignored: they select, they do not weigh.
//
// Gradient. Where the maximum is attained by one j (almost everywhere for
// continuous inputs) out[i][c] = x[j][c] in a neighbourhood of x, so
// ∂out[i][c]/∂x[j][c] = 1 for that j and 0 for the others: the gradient op
// (spMaxGradOp, whose inputs are x, out and dY) adds dY[i][c] to
// dX[j][c] for the first stored j of row i with x[j][c] = out[i][c]. At a
// tie that is a subgradient, the first entry attaining the maximum (the
// smallest column id for the sorted rows every CSR of graphs has). An
// empty row passes no gradient, nor does a NaN maximum. The forward pass
// keeps no argmax: an evaluation path pays for none, and the gradient
// reads only its inputs.
type spMaxOp struct {
	pure
	s *Sparse
}

// SpMax returns the node out[i] = max_{j: A[i,j] ≠ 0} x[j] (column-wise; 0
// for a row of A without a non-zero entry) for a constant sparse A
// (rows×cols) and a dense x of shape (cols, k): the max aggregation over
// in-neighbours when row i of A lists the nodes i gathers from. Its
// gradient flows to the argmax of every output entry (see spMaxOp).
func SpMax(s *Sparse, x *G.Node) (*G.Node, error) {
	if s == nil || s.A == nil {
		return nil, fmt.Errorf("nn: SpMax needs a sparse matrix")
	}
	return G.ApplyOp(&spMaxOp{s: s}, x)
}

func (op *spMaxOp) Arity() int            { return 1 }
func (op *spMaxOp) Type() hm.Type         { return matFn(1) }
func (op *spMaxOp) DiffWRT(int) []bool    { return []bool{true} }
func (op *spMaxOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *spMaxOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "SpMax(%p,%s)", op.s, op.s.Name) }
func (op *spMaxOp) String() string        { return fmt.Sprintf("SpMax(%s)", op.s.Name) }

func (op *spMaxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: SpMax wants a matrix input, got %v", in[0])
	}
	if s[0] != op.s.A.Cols {
		return nil, fmt.Errorf("nn: SpMax %s: sparse matrix is %d×%d but input has %d rows", op.s.Name, op.s.A.Rows, op.s.A.Cols, s[0])
	}
	return tensor.Shape{op.s.A.Rows, s[1]}, nil
}

func (op *spMaxOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *spMaxOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "SpMax")
	if err != nil {
		return nil, err
	}
	a := op.s.A
	_, k := shape2(x)
	t, out := output(prealloc, a.Rows, k)
	parallel.Rows(a.Rows, (a.NNZ()+a.Rows)*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[i*k : (i+1)*k]
			first := true
			for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
				if a.Value(p) == 0 {
					continue
				}
				j := a.Indices[p]
				xj := xd[j*k : (j+1)*k]
				if first {
					copy(o, xj)
					first = false
					continue
				}
				for c, v := range xj[:len(o)] {
					o[c] = max(o[c], v) // branch-free: the comparisons are unpredictable
				}
			}
			if first {
				clear(o)
			}
		}
	})
	return t, nil
}

func (op *spMaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(&spMaxGradOp{s: op.s}, inputs[0], output, grad))
}

// spMaxGradOp is spMaxOp's gradient: from x, out and dY, dX[j][c] +=
// dY[i][c] for the first non-zero entry (i, j) with x[j][c] = out[i][c].
type spMaxGradOp struct {
	pure
	s *Sparse
}

func (op *spMaxGradOp) Arity() int            { return 3 }
func (op *spMaxGradOp) Type() hm.Type         { return matFn(3) }
func (op *spMaxGradOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *spMaxGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "SpMaxGrad(%p,%s)", op.s, op.s.Name) }
func (op *spMaxGradOp) String() string        { return fmt.Sprintf("SpMaxGrad(%s)", op.s.Name) }
func (op *spMaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape("SpMaxGrad", in)
}

func (op *spMaxGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *spMaxGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "SpMaxGrad")
	if err != nil {
		return nil, err
	}
	_, yd, err := denseF64(vals[1], "SpMaxGrad")
	if err != nil {
		return nil, err
	}
	_, dyd, err := denseF64(vals[2], "SpMaxGrad")
	if err != nil {
		return nil, err
	}
	a := op.s.A
	n, k := shape2(x)
	if len(yd) != a.Rows*k || len(dyd) != a.Rows*k {
		return nil, fmt.Errorf("nn: SpMaxGrad %s: output or its gradient is not %d×%d", op.s.Name, a.Rows, k)
	}
	t, out := output(prealloc, n, k)
	clear(out)
	// Several rows may share an argmax row (a scatter-add), so the loop is
	// split over columns, which no two parts share. Within a row, left[c]
	// is dY[i][c] until the first maximiser of column c takes it, then 0:
	// arithmetic instead of branches, whose outcomes are unpredictable.
	parallel.Parts(k, 8, (a.NNZ()+a.Rows)*k, func(lo, hi int) {
		left := make([]float64, hi-lo)
		for i := 0; i < a.Rows; i++ {
			y := yd[i*k+lo : i*k+hi]
			copy(left, dyd[i*k+lo:i*k+hi])
			for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
				if a.Value(p) == 0 {
					continue
				}
				j := a.Indices[p]
				xj, oj := xd[j*k+lo:j*k+hi], out[j*k+lo:j*k+hi]
				for c, v := range xj[:len(left)] {
					hit := 0.0
					if v == y[c] {
						hit = 1
					}
					g := hit * left[c]
					oj[c] += g
					left[c] -= g
				}
			}
		}
	})
	return t, nil
}

var _ G.SDOp = (*spMaxOp)(nil)
