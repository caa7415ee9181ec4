package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Features is a graph's node feature matrix as a model input: a dense input
// node, or a constant sparse matrix that first layers multiply directly so
// bag-of-words features are never densified.
type Features struct {
	N, F   int
	Dense  *G.Node    // (N, F), or nil
	Sparse *nn.Sparse // (N, F), or nil
}

// NewFeatures wraps x for model m. Sparse features get their own copy of
// the values, so sparse input dropout never touches the graph.
func NewFeatures(m *nn.Model, x *graphs.Features, name string) (*Features, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: graph has no node features")
	}
	f := &Features{N: x.N, F: x.F}
	if x.Sparse != nil {
		a := *x.Sparse
		f.Sparse = nn.NewSparse(name, &a)
		return f, nil
	}
	f.Dense = m.Input(name, x.Dense, x.N, x.F)
	return f, nil
}

// Linear applies l to the features after input dropout p.
func (f *Features) Linear(m *nn.Model, l *Linear, p float64) *G.Node {
	return l.AddBias(f.MatMul(m, l.W, p))
}

// MatMul returns X·W (no bias) after input dropout p; for sparse X the
// product is a SpMM with the CSR, never a dense matrix.
func (f *Features) MatMul(m *nn.Model, w *nn.Param, p float64) *G.Node {
	if f.Sparse != nil {
		m.SparseDropout(f.Sparse, p)
		return G.Must(nn.SpMM(f.Sparse, w.Node))
	}
	return G.Must(G.Mul(m.Dropout(f.Dense, p), w.Node))
}

// MLP applies an MLP to the features (its InputDropout applies).
func (f *Features) MLP(p *MLP) *G.Node {
	if f.Sparse != nil {
		return p.ForwardSparse(f.Sparse)
	}
	return p.Forward(f.Dense)
}
