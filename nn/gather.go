package nn

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gatherOp selects rows of a matrix by a constant index list. Its gradient
// scatters (adds) the output gradient back to the selected rows, so repeated
// indices accumulate correctly.
type gatherOp struct {
	pure
	idx  []int
	name string
	n    int // rows of the input
}

// GatherRows returns the rows idx of x (shape (len(idx), cols)). idx is
// copied; name labels the node in graph views (e.g. "train").
func GatherRows(x *G.Node, idx []int, name string) (*G.Node, error) {
	s := x.Shape()
	if len(s) != 2 {
		return nil, fmt.Errorf("nn: GatherRows wants a matrix, got %v", s)
	}
	for _, i := range idx {
		if i < 0 || i >= s[0] {
			return nil, fmt.Errorf("nn: GatherRows index %d out of range [0, %d)", i, s[0])
		}
	}
	return G.ApplyOp(&gatherOp{idx: append([]int(nil), idx...), name: name, n: s[0]}, x)
}

func (op *gatherOp) Arity() int         { return 1 }
func (op *gatherOp) Type() hm.Type      { return matFn(1) }
func (op *gatherOp) DiffWRT(int) []bool { return []bool{true} }
func (op *gatherOp) Hashcode() uint32   { return hash32(op.WriteHash) }
func (op *gatherOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "GatherRows(%s,%d,%p)", op.name, len(op.idx), op)
}
func (op *gatherOp) String() string {
	return fmt.Sprintf("GatherRows(%s, %d rows)", op.name, len(op.idx))
}
func (op *gatherOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	return tensor.Shape{len(op.idx), s[1]}, nil
}

func (op *gatherOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *gatherOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "GatherRows")
	if err != nil {
		return nil, err
	}
	_, k := shape2(x)
	t, out := output(prealloc, len(op.idx), k)
	for r, i := range op.idx {
		copy(out[r*k:(r+1)*k], xd[i*k:(i+1)*k])
	}
	return t, nil
}

func (op *gatherOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(&scatterOp{g: op}, grad))
}

// scatterOp is the adjoint of gatherOp: out[idx[r]] += in[r].
type scatterOp struct {
	pure
	g *gatherOp
}

func (op *scatterOp) Arity() int            { return 1 }
func (op *scatterOp) Type() hm.Type         { return matFn(1) }
func (op *scatterOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *scatterOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ScatterAddRows(%p)", op.g) }
func (op *scatterOp) String() string        { return fmt.Sprintf("ScatterAddRows(%s)", op.g.name) }
func (op *scatterOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	return tensor.Shape{op.g.n, s[1]}, nil
}

func (op *scatterOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *scatterOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "ScatterAddRows")
	if err != nil {
		return nil, err
	}
	_, k := shape2(x)
	t, out := output(prealloc, op.g.n, k)
	clear(out)
	for r, i := range op.g.idx {
		o := out[i*k : (i+1)*k]
		for c, v := range xd[r*k : (r+1)*k] {
			o[c] += v
		}
	}
	return t, nil
}

var _ G.SDOp = (*gatherOp)(nil)
