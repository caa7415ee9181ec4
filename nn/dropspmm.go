package nn

import (
	"fmt"
	"hash"
	"unsafe"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DropoutSpMM returns A·Dropout(x, p) for a constant sparse A and an input
// x (a graph's feature matrix, as Model.Input holds it), with the bits of
// SpMM(s, m.Dropout(x, p)). When every value of x is a float32
// (vec.Float32Exact: features read from a float32 file, or generated with
// --float32) it is one op over a float32 copy of x: x's mask is registered
// and drawn as Dropout's (the model's stream advances alike), and the
// product gathers the copy's rows under the mask
// (graphs.CSR.MulDenseBits32) instead of writing the masked x and
// gathering its float64 rows, which halves the bytes of every gathered
// row and saves a pass writing and reading all of x at every training
// step. The copy is taken when the graph is built: x must be constant
// (layers.Features.Const), never written afterwards, in place or by
// SetValue on the same buffer (the op could not tell, and would read the
// old values); a value on a new buffer is masked and gathered as the two
// ops would. On a DP-SGD training path, where x is a batch input the fill
// rewrites, nn.CheckRowLocal drops the copy (dropSpMMOp.uncache). Otherwise it is
// SpMM(s, m.Dropout(x, p)) as it stands: a masked gather from float64
// rows was slower than the two ops (docs/performance.md, Kernels). x is
// not differentiated (it is not trained).
func (m *Model) DropoutSpMM(s *Sparse, x *G.Node, p float64) *G.Node {
	if p <= 0 {
		return G.Must(SpMM(s, x))
	}
	var xd []float64
	if v, ok := x.Value().(*tensor.Dense); ok {
		xd, _ = float64s(v)
	}
	x32 := vec.Float32Exact(xd)
	if len(xd) == 0 || x32 == nil {
		return G.Must(SpMM(s, m.Dropout(x, p)))
	}
	op := &dropSpMMOp{s: s, x64: xd, x32: x32}
	op.d = m.register(&dropout{p: p, n: len(xd)})
	op.mask = vec.NewBitMask(op.d.bits, 1/(1-p))
	return G.Must(G.ApplyOp(op, x))
}

// dropSpMMOp is DropoutSpMM's op: A·(x masked by d), or A·x when the mask
// is off, from x32, the float32 copy of x's value x64 (while x has it).
type dropSpMMOp struct {
	pure
	s      *Sparse
	d      *dropout
	x64    []float64
	x32    []float32
	mask   *vec.BitMask // d's bits
	masked []float64    // x masked, when x has another value than x64
}

// uncache drops the float32 copy: every run then masks x's current value
// (the two ops' arithmetic). A DP-SGD training path's batch input is
// rewritten by every fill, often in place, and the copy of its value at
// the build would be read by batch position (the ninth outside audit of
// issue 38: Δ n·C for a declared C).
func (op *dropSpMMOp) uncache() { op.x64, op.x32 = nil, nil }

func (op *dropSpMMOp) Arity() int    { return 1 }
func (op *dropSpMMOp) Type() hm.Type { return matFn(1) }

func (op *dropSpMMOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return (&spmmOp{s: op.s}).InferShape(in...)
}

func (op *dropSpMMOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *dropSpMMOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], op.String())
	if err != nil {
		return nil, err
	}
	_, k := shape2(x)
	a := op.s.A
	if len(xd) != a.Cols*k || len(xd) != op.d.n {
		return nil, fmt.Errorf("nn: %s of %v: the matrix is %d×%d and the mask has %d entries", op, x.Shape(), a.Rows, a.Cols, op.d.n)
	}
	op.s.Calls++
	t, out := output(prealloc, a.Rows, k)
	switch {
	case op.d.ones:
		a.MulDense(xd, k, out)
	case len(xd) == len(op.x64) && unsafe.SliceData(xd) == unsafe.SliceData(op.x64):
		a.MulDenseBits32(op.x32, k, op.mask.Bits, op.mask.Keep(), out)
	default:
		// x was given another value after the graph was built (a query
		// with perturbed features): the two ops' arithmetic over it
		op.masked = resize(op.masked, len(xd))
		vec.MulBits(op.masked, xd, op.d.bits, 0, op.mask.Keep())
		a.MulDense(op.masked, k, out)
	}
	return t, nil
}

func (op *dropSpMMOp) WriteHash(h hash.Hash) {
	// the matrix and the mask are the op's parameters: never merged
	fmt.Fprintf(h, "SpMM(%p,%s)·Dropout%d(%p)", op.s, op.s.Name, op.d.id, op.d)
}

func (op *dropSpMMOp) Hashcode() uint32 { return hash32(op.WriteHash) }

func (op *dropSpMMOp) String() string {
	return fmt.Sprintf("SpMM(%s, Dropout%d(p=%v))", op.s.Name, op.d.id, op.d.p)
}

func (op *dropSpMMOp) DiffWRT(int) []bool { return []bool{false} }

func (op *dropSpMMOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("nn: %s is not differentiated with respect to its input (a constant)", op)
}

var _ G.SDOp = (*dropSpMMOp)(nil)
