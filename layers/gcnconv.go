package layers

import (
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// GCNConv is a graph convolution of Kipf & Welling: Â·H·W + b with Â the
// GCN-normalised adjacency (graphs.GCNNorm) as a constant sparse input. The
// product is taken as Â·(H·W), cheaper than (Â·H)·W whenever W narrows.
//
// DP-SGD. On a model's recorded path the layer records the per-sample
// rules of W and b, so it can be trained with dpnn.BuildSGD: the
// per-example gradient of W is Σ_{rows r of example e} (Â·H)ᵣᵀδᵣ (δ the
// loss gradient at the layer's output), and that of b is Σ_{r∈e} δᵣ.
// For Â·(H·W) the rule of W is nn.LinearWeight over H with its probe on
// Z = H·W, whose gradient is Âᵀδ; for (Â·H)·W (InputFirst) it is
// nn.LinearWeight over Â·H with its probe on the output.
//
// Precondition, not checked by the layer: Â must keep examples apart.
// Every entry Â_{rj} ≠ 0 joins two rows of the same example (or two
// padding rows), i.e. Â is block-diagonal over the batch's row groups,
// and Â is square over the batch rows. Then example e's rows of the output
// read only e's rows of H. If the rest of the path keeps examples apart as
// well (nn.PerSampleRule's condition (a): ∂L_e/∂yᵣ = δᵣ for r in e, 0
// otherwise), then
//
//	∂L_e/∂W = Σ_j H_jᵀ Σ_{r∈e} Â_{rj} δᵣ = Σ_{j∈e} H_jᵀ (Âᵀδ)_j,
//
// because Σ_{r∈e} Â_{rj}δᵣ is 0 for j outside e and equals (Âᵀδ)_j for j in
// e (no row outside e reads j) — exactly the LinearWeight rule at Z with
// the same row groups; for the (Â·H)·W order it is the ordinary Linear
// rule. With an Â that joins two examples, the rule's norms are not the
// examples' gradient norms, the clipping bound C no longer bounds one
// example's contribution, and the accounting would under-report ε: build
// such a path's Â per example (a computation tree's own block), and run
// nn.Model.CheckPerSample on it, which fails on a cross-example Â.
type GCNConv struct {
	*Linear
	Adj *nn.Sparse
}

// NewGCNConv creates the layer's weight (Glorot) and bias on m; adj is Â
// (Reach.Conv gives the layer each path's rows of it).
func NewGCNConv(m *nn.Model, name string, adj *nn.Sparse, in, out int) *GCNConv {
	return &GCNConv{Linear: NewLinear(m, name, in, out, true, InitGlorot), Adj: adj}
}

// Forward returns Â·(h·W) + b (recording W's and b's per-sample rules on
// a recorded path).
func (c *GCNConv) Forward(h *G.Node) *G.Node {
	return c.aggregate(c.m, c.m.Record(nn.MatMul(h, c.W.Node), c.W, nn.LinearWeight{Input: h}))
}

// aggregate returns Â·z + b, recording b's rule on a recorded path (W's
// was recorded on z).
func (c *GCNConv) aggregate(m *nn.Model, z *G.Node) *G.Node {
	y := c.AddBias(G.Must(nn.SpMM(c.Adj, z)))
	if c.B != nil {
		y = m.Record(y, c.B, nn.Bias{})
	}
	return y
}

// InputFirst reports whether ForwardInput takes the features x as
// (Â·X)·W: dense features narrower than the layer. The sparse product
// then gathers rows of X instead of the wider rows of X·W, and the weight
// gradient (Â·X)ᵀ·dY needs no sparse product at all (X is not trained), so
// a step makes one narrow sparse product instead of two wide ones.
func (c *GCNConv) InputFirst(x *Features) bool { return x.Dense != nil && x.F < c.Out }

// ForwardInput returns Â·X·W + b for the model's feature input x (dense
// or sparse), with input dropout p on the training path. Where InputFirst
// it is (Â·X)·W + b: for constant features (x.Const) the dropout is
// applied as the rows of X are gathered (nn.Model.DropoutSpMM, which
// keeps a copy of X's values), for features written after the build (a
// DP-SGD batch) Â·Dropout(X); and for constant features without
// dropout, an evaluation path's, Â·X is computed here once, with the same
// kernel, into a constant input named after Â, so that every evaluation
// gives the same bits without gathering rows of X. Otherwise, and for
// sparse features, it is Â·(X·W) (Features.MatMul): that changes with W,
// so there is nothing to keep. On a recorded path it records W's and b's
// per-sample rules (the type's doc states when they hold).
func (c *GCNConv) ForwardInput(m *nn.Model, x *Features, p float64) *G.Node {
	switch {
	case c.InputFirst(x) && p <= 0 && x.Const:
		a := x.product(m, c.Adj)
		return m.RecordLinear(c.Affine(a), c.W, c.B, a, nil)
	case c.InputFirst(x):
		var a *G.Node
		switch {
		case x.Const:
			a = m.DropoutSpMM(c.Adj, x.Dense, p)
		case p > 0:
			// not DropoutSpMM: its copy of X's values would be read after
			// a fill rewrote them (the ninth outside audit of issue 38: a
			// FeatureBatch's rows as of the build, by batch position)
			a = G.Must(nn.SpMM(c.Adj, m.Dropout(x.Dense, p)))
		default:
			a = G.Must(nn.SpMM(c.Adj, x.Dense))
		}
		return m.RecordLinear(c.Affine(a), c.W, c.B, a, nil)
	}
	xw, rule := x.matMul(m, c.W, p)
	return c.aggregate(m, m.Record(xw, c.W, rule))
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
