package nn

import (
	"fmt"
	"hash"
	"slices"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The custom gorgonia ops of this package share what gorgonia asks of every
// op but that never differs here; a new op (a CGL step, a PPR propagation)
// embeds pure, or labelled when its name alone identifies it, and writes
// only its arithmetic (Do), its gradient (SymDiff, DiffWRT) and, if its
// output is not shaped like its first input, InferShape.

// Every custom op here implements gorgonia's UsePreallocDoer: the machine
// (machine.go) hands it last run's buffer and the op writes every entry of
// its result into it; Do is UsePreallocDo without a buffer.

// float64s returns a float64 tensor's data (aliased), without the reflection
// of Dense.Data (a sync.Map lookup and a reflect.SliceOf per call, a few
// per cent of a small model's step); false for another dtype or a scalar.
func float64s(t *tensor.Dense) ([]float64, bool) {
	if t.Dtype() != tensor.Float64 || t.IsScalar() {
		return nil, false
	}
	return t.Float64s(), true
}

// output returns the tensor an op writes its result into: prealloc when it
// is a float64 tensor of the result's size (its contents are stale: the op
// must write every entry), a new one otherwise.
func output(prealloc G.Value, shape ...int) (*tensor.Dense, []float64) {
	size := 1
	for _, s := range shape {
		size *= s
	}
	if t, ok := prealloc.(*tensor.Dense); ok && t.Size() == size {
		if d, ok := float64s(t); ok {
			if !t.Shape().Eq(tensor.Shape(shape)) {
				// a copy: shape itself must not escape (the variadic
				// slice of every call would be allocated)
				if err := t.Reshape(slices.Clone(shape)...); err != nil {
					panic(err) // same size: cannot fail
				}
			}
			return t, d
		}
	}
	d := make([]float64, size)
	return tensor.New(tensor.WithShape(slices.Clone(shape)...), tensor.WithBacking(d)), d
}

// pure is embedded by every custom op here: it calls no external library
// and overwrites no input.
type pure struct{}

func (pure) ReturnsPtr() bool     { return false }
func (pure) CallsExtern() bool    { return false }
func (pure) OverwritesInput() int { return -1 }

// matFn is the type of an op from arity matrices to one matrix.
func matFn(arity int) hm.Type {
	ts := make([]hm.Type, arity+1)
	for i := range ts {
		ts[i] = matType()
	}
	return hm.NewFnType(ts...)
}

// sameShape is the InferShape of an op whose output is shaped like its
// first input, which must be a matrix.
func sameShape(what string, in []G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: %s wants a matrix, got %v", what, in[0])
	}
	return s.Clone(), nil
}

// labelled is embedded by stateless ops on matrices that their label alone
// identifies (two nodes with the same label and inputs are the same value):
// arity matrices in, one matrix shaped like the first out.
type labelled struct {
	pure
	label string
	arity int
}

func (o labelled) Arity() int            { return o.arity }
func (o labelled) Type() hm.Type         { return matFn(o.arity) }
func (o labelled) WriteHash(h hash.Hash) { fmt.Fprint(h, o.label) }
func (o labelled) Hashcode() uint32      { return hash32(o.WriteHash) }
func (o labelled) String() string        { return o.label }
func (o labelled) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.label, in)
}

// gradient wraps the one node of a SymDiff (the gradient op applied to the
// output gradient) as SymDiff returns it.
func gradient(n *G.Node, err error) (G.Nodes, error) {
	if err != nil {
		return nil, err
	}
	return G.Nodes{n}, nil
}
