package nn

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NormalSource draws standard normal variates (dp.Source implements it).
type NormalSource interface{ Normal() float64 }

// normalFiller is a NormalSource that can fill a whole vector at once (in
// parallel, for dp.Source).
type normalFiller interface{ FillNormal(dst []float64) }

// Noise is the state of a Gaussian noise node: its standard deviation (the
// noise multiplier times the sensitivity) and its source. Std may be
// changed between runs (0 disables the noise, e.g. for all but the last
// chunk of an oversized DP-SGD batch). Last holds the noise vector drawn by
// the most recent run (for traces and tests).
type Noise struct {
	Name string
	Std  float64
	Src  NormalSource
	Last []float64
	// Draws counts the runs that added noise.
	Draws int
	// OnDraw, if set, is called after every run that added noise (a
	// release: the method records it in its privacy ledger).
	OnDraw func()
}

// gaussianNoiseOp returns x + N(0, Std²) elementwise, fresh noise each run.
// Its gradient is the identity.
type gaussianNoiseOp struct {
	pure
	n *Noise
}

// AddNoise returns the node x + N(0, n.Std²·I): the noise node that makes a
// release private (NAP aggregates, DP-SGD gradient sums).
func AddNoise(x *G.Node, n *Noise) (*G.Node, error) { return G.ApplyOp(gaussianNoiseOp{n: n}, x) }

func (op gaussianNoiseOp) Arity() int       { return 1 }
func (op gaussianNoiseOp) Type() hm.Type    { a := hm.TypeVariable('a'); return hm.NewFnType(a, a) }
func (op gaussianNoiseOp) Hashcode() uint32 { return hash32(op.WriteHash) }
func (op gaussianNoiseOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "GaussianNoise(%s,%p)", op.n.Name, op.n)
}
func (op gaussianNoiseOp) String() string {
	return fmt.Sprintf("GaussianNoise(%s, std=%.4g)", op.n.Name, op.n.Std)
}
func (op gaussianNoiseOp) DiffWRT(int) []bool { return []bool{true} }
func (op gaussianNoiseOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op gaussianNoiseOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op gaussianNoiseOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "GaussianNoise")
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, x.Shape()...)
	if cap(op.n.Last) < len(xd) {
		op.n.Last = make([]float64, len(xd))
	}
	op.n.Last = op.n.Last[:len(xd)]
	if op.n.Std > 0 {
		if op.n.Src == nil {
			return nil, fmt.Errorf("nn: noise node %s has no source", op.n.Name)
		}
		if f, ok := op.n.Src.(normalFiller); ok {
			f.FillNormal(op.n.Last)
		} else {
			for i := range op.n.Last {
				op.n.Last[i] = op.n.Src.Normal()
			}
		}
		for i, z := range op.n.Last {
			e := op.n.Std * z
			op.n.Last[i] = e
			out[i] = xd[i] + e
		}
		op.n.Draws++
		if op.n.OnDraw != nil {
			op.n.OnDraw()
		}
	} else {
		clear(op.n.Last)
		copy(out, xd)
	}
	return t, nil
}
func (op gaussianNoiseOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad}, nil
}
