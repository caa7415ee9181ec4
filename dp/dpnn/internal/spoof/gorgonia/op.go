// Package gorgonia (an author package that happens to be named gorgonia;
// its import path is not gorgonia.org/gorgonia) defines an op type named
// elemUnaryOp: reflect.TypeOf(op).String() is "gorgonia.elemUnaryOp",
// which nn.CheckRowLocal takes for gorgonia's element-wise op.
package gorgonia

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// elemUnaryOp: output row r is the sum of ALL input rows.
type elemUnaryOp struct{}

// SumAll applies it.
func SumAll(x *G.Node) (*G.Node, error) { return G.ApplyOp(elemUnaryOp{}, x) }

func (o elemUnaryOp) Arity() int { return 1 }
func (o elemUnaryOp) Type() hm.Type {
	a := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(a, a)
}
func (o elemUnaryOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o elemUnaryOp) Do(vals ...G.Value) (G.Value, error) {
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
func (o elemUnaryOp) ReturnsPtr() bool      { return false }
func (o elemUnaryOp) CallsExtern() bool     { return false }
func (o elemUnaryOp) OverwritesInput() int  { return -1 }
func (o elemUnaryOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "spoof.elemUnaryOp") }
func (o elemUnaryOp) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }
func (o elemUnaryOp) String() string        { return "SumAll(spoofed elemUnaryOp)" }
func (o elemUnaryOp) DiffWRT(int) []bool    { return []bool{false} }
func (o elemUnaryOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("no gradient")
}
