package layers

import (
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// GCNConv is a graph convolution of Kipf & Welling: Â·H·W + b with Â the
// GCN-normalised adjacency (graphs.GCNNorm) as a constant sparse input. The
// product is taken as Â·(H·W), cheaper than (Â·H)·W whenever W narrows.
type GCNConv struct {
	*Linear
	Adj *nn.Sparse
}

// NewGCNConv creates the layer's weight (Glorot) and bias on m; adj is Â
// (Reach.Conv gives the layer each path's rows of it).
func NewGCNConv(m *nn.Model, name string, adj *nn.Sparse, in, out int) *GCNConv {
	return &GCNConv{Linear: NewLinear(m, name, in, out, true, InitGlorot), Adj: adj}
}

// Forward returns Â·(h·W) + b.
func (c *GCNConv) Forward(h *G.Node) *G.Node {
	return c.AddBias(G.Must(nn.SpMM(c.Adj, nn.MatMul(h, c.W.Node))))
}

// InputFirst reports whether ForwardInput takes the features x as
// (Â·X)·W: dense features narrower than the layer. The sparse product
// then gathers rows of X instead of the wider rows of X·W, and the weight
// gradient (Â·X)ᵀ·dY needs no sparse product at all (X is not trained), so
// a step makes one narrow sparse product instead of two wide ones.
func (c *GCNConv) InputFirst(x *Features) bool { return x.Dense != nil && x.F < c.Out }

// ForwardInput returns Â·X·W + b for the model's feature input x (dense
// or sparse), with input dropout p on the training path. Where InputFirst
// it is (Â·X)·W + b, the dropout applied as the rows of X are gathered
// (nn.Model.DropoutSpMM); and for constant features (x.Const) without
// dropout, an evaluation path's, Â·X is computed here once, with the same
// kernel, into a constant input named after Â, so that every evaluation
// gives the same bits without gathering rows of X. Otherwise, and for
// sparse features, it is Â·(X·W) (Features.MatMul): that changes with W,
// so there is nothing to keep.
func (c *GCNConv) ForwardInput(m *nn.Model, x *Features, p float64) *G.Node {
	switch {
	case c.InputFirst(x) && p <= 0 && x.Const:
		return c.Affine(x.product(m, c.Adj))
	case c.InputFirst(x):
		return c.Affine(m.DropoutSpMM(c.Adj, x.Dense, p))
	}
	return c.AddBias(G.Must(nn.SpMM(c.Adj, x.MatMul(m, c.W, p))))
}

// product returns a·X for constant dense features as an input node,
// computed once per matrix with SpMM's kernel.
func (f *Features) product(m *nn.Model, a *nn.Sparse) *G.Node {
	if y := f.products[a.A]; y != nil {
		return y
	}
	v := make([]float64, a.A.Rows*f.F)
	a.A.MulDense(nn.Values(f.Dense), f.F, v)
	y := m.Input(a.Name+"·X", v, a.A.Rows, f.F)
	if f.products == nil {
		f.products = map[*graphs.CSR]*G.Node{}
	}
	f.products[a.A] = y
	return y
}
