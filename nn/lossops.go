package nn

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The ops of a loss and of DP-SGD's bookkeeping: an element-wise sum, the
// per-row negative log-likelihood, and the sum of a vector. Gorgonia's
// generic ops for them (HadamardProd, Neg, Sum, Add and the Reshape,
// SizeOf and Repeat of Sum's gradient) allocate several objects each per
// run and went through its generic engine: a dozen of them were about a
// fifth of a DP-SGD step of DP-MLP. These compute the same operations in
// the same order, so the same bits (TestLossOpsMatchGorgonia).

// addOp is a + b element-wise for two values of one shape.
type addOp struct{ pure }

// Add returns a + b (same shapes): the sum of a layer's output and its
// DP-SGD probe, of per-parameter squared norms.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("nn: Add of shapes %v and %v", a.Shape(), b.Shape())
	}
	return G.ApplyOp(addOp{}, a, b)
}

func (addOp) Arity() int { return 2 }
func (addOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (addOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("nn: Add wants a shape, got %v", in[0])
	}
	return s.Clone(), nil
}
func (addOp) WriteHash(h hash.Hash)                 { fmt.Fprint(h, "Add") }
func (o addOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (addOp) String() string                        { return "+" }
func (addOp) DiffWRT(int) []bool                    { return []bool{true, true} }
func (o addOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (addOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	a, ad, b, bd, err := densePair(vals, "Add")
	if err != nil {
		return nil, err
	}
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("nn: Add of shapes %v and %v", a.Shape(), b.Shape())
	}
	t, out := output(prealloc, a.Shape()...)
	parallel.Rows(len(out), len(out), func(lo, hi int) { vec.Add(out[lo:hi], ad[lo:hi], bd[lo:hi]) })
	return t, nil
}

func (addOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}

// nllRowsOp is the per-row negative log-likelihood of log-probabilities
// logp (N, C) against targets t (N, C): −Σ_j logp_ij·t_ij, the products
// summed left to right, then negated (HadamardProd, RowSums and Neg in
// one pass). It is differentiable in logp only.
type nllRowsOp struct{ pure }

// NLLRows returns the (N) vector of −Σ_j logp_ij·target_ij.
func NLLRows(logp, target *G.Node) (*G.Node, error) {
	if !logp.Shape().Eq(target.Shape()) || len(logp.Shape()) != 2 {
		return nil, fmt.Errorf("nn: NLLRows of shapes %v and %v", logp.Shape(), target.Shape())
	}
	return G.ApplyOp(nllRowsOp{}, logp, target)
}

func (nllRowsOp) Arity() int    { return 2 }
func (nllRowsOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), vecType()) }
func (nllRowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: NLLRows wants a matrix, got %v", in[0])
	}
	return tensor.Shape{s[0]}, nil
}
func (nllRowsOp) WriteHash(h hash.Hash)                 { fmt.Fprint(h, "NLLRows") }
func (o nllRowsOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (nllRowsOp) String() string                        { return "NLLRows" }
func (nllRowsOp) DiffWRT(int) []bool                    { return []bool{true, false} }
func (o nllRowsOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (nllRowsOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	p, pd, _, td, err := densePair(vals, "NLLRows")
	if err != nil {
		return nil, err
	}
	n, c := shape2(p)
	if len(td) != len(pd) {
		return nil, fmt.Errorf("nn: NLLRows of %d log-probabilities and %d targets", len(pd), len(td))
	}
	t, out := output(prealloc, n)
	for i := range out {
		s := 0.0
		for j, v := range pd[i*c : (i+1)*c] {
			s += v * td[i*c+j]
		}
		out[i] = -s
	}
	return t, nil
}

func (nllRowsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(nllGradOp{}, inputs[1], grad)
	return G.Nodes{d, nil}, err
}

// nllGradOp is NLLRows' gradient in logp: t_ij·(−g_i) for the output
// gradient g (N) — what Neg, RowSpread and HadamardProd with the target
// computed in turn.
type nllGradOp struct{ pure }

func (nllGradOp) Arity() int    { return 2 }
func (nllGradOp) Type() hm.Type { return hm.NewFnType(matType(), vecType(), matType()) }
func (nllGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape("NLLRowsGrad", in)
}
func (nllGradOp) WriteHash(h hash.Hash)                 { fmt.Fprint(h, "NLLRowsGrad") }
func (o nllGradOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (nllGradOp) String() string                        { return "NLLRowsGrad" }
func (nllGradOp) DiffWRT(int) []bool                    { return []bool{false, false} }
func (o nllGradOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (nllGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	tt, td, _, g, err := densePair(vals, "NLLRowsGrad")
	if err != nil {
		return nil, err
	}
	n, c := shape2(tt)
	if len(g) != n {
		return nil, fmt.Errorf("nn: NLLRowsGrad of %d rows and a gradient of %d", n, len(g))
	}
	t, out := output(prealloc, n, c)
	for i, gi := range g {
		ng := -gi
		for j, v := range td[i*c : (i+1)*c] {
			out[i*c+j] = v * ng
		}
	}
	return t, nil
}

func (nllGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("nn: NLLRowsGrad is not differentiable")
}

// sumOp is the sum of a vector's entries, left to right (gorgonia's Sum of
// a vector), as a scalar. Its value is the op's own: a node's runs
// overwrite one scalar instead of allocating one each.
type sumOp struct {
	pure
	out *G.F64
}

// SumAll returns the scalar sum of the vector x.
func SumAll(x *G.Node) (*G.Node, error) {
	if len(x.Shape()) != 1 {
		return nil, fmt.Errorf("nn: SumAll wants a vector, got %v", x.Shape())
	}
	return G.ApplyOp(sumOp{out: new(G.F64)}, x)
}

func (sumOp) Arity() int    { return 1 }
func (sumOp) Type() hm.Type { return hm.NewFnType(vecType(), hm.TypeVariable('a')) }
func (sumOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (sumOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "SumAll") }
func (o sumOp) Hashcode() uint32    { return hash32(o.WriteHash) }
func (sumOp) String() string        { return "Σ" }
func (sumOp) DiffWRT(int) []bool    { return []bool{true} }
func (o sumOp) Do(vals ...G.Value) (G.Value, error) {
	_, xd, err := denseF64(vals[0], "SumAll")
	if err != nil {
		return nil, err
	}
	s := 0.0
	for _, v := range xd {
		s += v
	}
	*o.out = G.F64(s)
	return o.out, nil
}

func (sumOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(fillOp{n: inputs[0].Shape()[0]}, grad))
}

// fillOp is SumAll's gradient: the (n) vector every entry of which is the
// scalar output gradient.
type fillOp struct {
	pure
	n int
}

func (fillOp) Arity() int    { return 1 }
func (fillOp) Type() hm.Type { return hm.NewFnType(hm.TypeVariable('a'), vecType()) }
func (o fillOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n}, nil
}
func (o fillOp) WriteHash(h hash.Hash)               { fmt.Fprint(h, "Fill", o.n) }
func (o fillOp) Hashcode() uint32                    { return hash32(o.WriteHash) }
func (o fillOp) String() string                      { return fmt.Sprintf("Fill(%d)", o.n) }
func (fillOp) DiffWRT(int) []bool                    { return []bool{false} }
func (o fillOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o fillOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	g, err := scalarF64(vals[0])
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, o.n)
	for i := range out {
		out[i] = g
	}
	return t, nil
}

func (fillOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("nn: Fill is not differentiable")
}

// scalarF64 returns a float64 scalar value (a gorgonia scalar or a
// one-entry tensor).
func scalarF64(v G.Value) (float64, error) {
	switch x := v.(type) {
	case *G.F64:
		return float64(*x), nil
	case *tensor.Dense:
		if x.Dtype() == tensor.Float64 && x.Size() == 1 {
			return x.Float64s()[0], nil
		}
	}
	return 0, fmt.Errorf("nn: wants a float64 scalar, got %T %v", v, v)
}
