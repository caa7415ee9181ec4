package layers

import (
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

// NewGCNConv creates the layer's weight (Glorot) and bias on m; adj is Â.
func NewGCNConv(m *nn.Model, name string, adj *nn.Sparse, in, out int) *GCNConv {
	return &GCNConv{Linear: NewLinear(m, name, in, out, true, InitGlorot), Adj: adj}
}

// Forward returns Â·(h·W) + b.
func (c *GCNConv) Forward(h *G.Node) *G.Node {
	return c.AddBias(G.Must(nn.SpMM(c.Adj, nn.MatMul(h, c.W.Node))))
}

// ForwardInput returns Â·X·W + b for the model's feature input x (dense
// or sparse), with input dropout p on the training path. Dense features
// narrower than the layer are taken as (Â·X)·W: the sparse product gathers
// rows of X instead of the wider rows of X·W, and the weight gradient
// (Â·X)ᵀ·dY needs no sparse product at all (X is not trained), so a step
// makes one narrow sparse product instead of two wide ones, the dropout
// applied as the rows are gathered (nn.Model.DropoutSpMM). Otherwise,
// and for sparse features, it is Â·(X·W) (Features.MatMul).
func (c *GCNConv) ForwardInput(m *nn.Model, x *Features, p float64) *G.Node {
	if x.Dense != nil && x.F < c.Out {
		return c.Affine(m.DropoutSpMM(c.Adj, x.Dense, p))
	}
	return c.AddBias(G.Must(nn.SpMM(c.Adj, x.MatMul(m, c.W, p))))
}

// FixedInput is the part of ForwardInput's evaluation (no dropout) that
// never changes, for features whose values do not change between runs:
// where ForwardInput takes (Â·X)·W, Â·X is computed here once, with the
// same kernel, into a constant input named name, so that Affine(ax)
// (the layer over it, (Â·X)·W + b) gives the bits of ForwardInput's evaluation without gathering rows of X. ok
// is false otherwise: Â·(X·W) changes with W, so there is nothing to keep.
func (c *GCNConv) FixedInput(m *nn.Model, x *Features, name string) (ax *G.Node, ok bool) {
	if x.Dense == nil || x.F >= c.Out {
		return nil, false
	}
	v := make([]float64, c.Adj.A.Rows*x.F)
	c.Adj.A.MulDense(nn.Values(x.Dense), x.F, v)
	return m.Input(name, v, c.Adj.A.Rows, x.F), true
}
