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
// ∂out[i][c]/∂x[j][c] = 1 for that j and 0 for the others; the op records
// that j (the argmax) in its forward pass and its gradient op adds dY[i][c]
// to dX[argmax][c]. Ties go to the entry stored first in row i (the
// smallest column id for the sorted rows every CSR of graphs has): a
// subgradient, the choice of PyTorch's scatter max. An empty row passes no
// gradient. The argmax is kept from the op's last forward run: the gradient
// op must run after it in the same pass, as it does in every machine (the
// backward pass follows its forward pass).
type spMaxOp struct {
	pure
	s *Sparse
	// arg[i*k+c] is the row of x that gave out[i][c] in the last forward
	// run, −1 where row i is empty.
	arg []int32
	k   int
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
	if s.A.Cols >= 1<<31 {
		return nil, fmt.Errorf("nn: SpMax %s: %d columns exceed the argmax's int32 range", s.Name, s.A.Cols)
	}
	return G.ApplyOp(&spMaxOp{s: s}, x)
}

func (op *spMaxOp) Arity() int         { return 1 }
func (op *spMaxOp) Type() hm.Type      { return matFn(1) }
func (op *spMaxOp) DiffWRT(int) []bool { return []bool{true} }
func (op *spMaxOp) Hashcode() uint32   { return hash32(op.WriteHash) }

// WriteHash names the op by its own identity: it holds its argmax, so two
// nodes must never merge.
func (op *spMaxOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "SpMax(%p,%s)", op, op.s.Name) }
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
	if len(op.arg) != a.Rows*k {
		op.arg = make([]int32, a.Rows*k)
	}
	op.k = k
	t, out := output(prealloc, a.Rows, k)
	arg := op.arg
	parallel.Rows(a.Rows, (a.NNZ()+a.Rows)*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o, g := out[i*k:(i+1)*k], arg[i*k:(i+1)*k]
			first := true
			for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
				if a.Value(p) == 0 {
					continue
				}
				j := a.Indices[p]
				xj := xd[j*k : (j+1)*k]
				if first {
					copy(o, xj)
					for c := range g {
						g[c] = int32(j)
					}
					first = false
					continue
				}
				for c, v := range xj {
					if v > o[c] {
						o[c], g[c] = v, int32(j)
					}
				}
			}
			if first {
				clear(o)
				for c := range g {
					g[c] = -1
				}
			}
		}
	})
	return t, nil
}

func (op *spMaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(&spMaxGradOp{fwd: op}, grad))
}

// spMaxGradOp is spMaxOp's gradient: dX[arg[i][c]][c] += dY[i][c].
type spMaxGradOp struct {
	pure
	fwd *spMaxOp
}

func (op *spMaxGradOp) Arity() int            { return 1 }
func (op *spMaxGradOp) Type() hm.Type         { return matFn(1) }
func (op *spMaxGradOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *spMaxGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "SpMaxGrad(%p)", op.fwd) }
func (op *spMaxGradOp) String() string        { return fmt.Sprintf("SpMaxGrad(%s)", op.fwd.s.Name) }
func (op *spMaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	return tensor.Shape{op.fwd.s.A.Cols, s[1]}, nil
}

func (op *spMaxGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *spMaxGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	dy, dyd, err := denseF64(vals[0], "SpMaxGrad")
	if err != nil {
		return nil, err
	}
	rows, k := shape2(dy)
	f := op.fwd
	if f.k != k || len(f.arg) != rows*k {
		return nil, fmt.Errorf("nn: SpMaxGrad %s: gradient is %d×%d but the forward pass ran on %d entries of width %d", f.s.Name, rows, k, len(f.arg), f.k)
	}
	t, out := output(prealloc, f.s.A.Cols, k)
	clear(out)
	// Sequential: several rows may share an argmax row (a scatter-add).
	for p, j := range f.arg {
		if j >= 0 {
			out[int(j)*k+p%k] += dyd[p]
		}
	}
	return t, nil
}

var _ G.SDOp = (*spMaxOp)(nil)
