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
	// Const declares that the values never change after the graph is
	// built (no SetValue, no Set): a layer may then precompute a product
	// with them once (GCNConv.ForwardInput's Â·X on an evaluation path).
	Const bool
	// products are the fixed products Â·X of constant features, by matrix.
	products map[*graphs.CSR]*G.Node
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

// Linear applies l to the features after input dropout p: X·W + b. On
// a model's recorded (DP-SGD) path it records the per-sample rules of W
// (nn.LinearWeight over the dropped-out X, dense or sparse) and b, as
// Linear.Forward and Linear.ForwardSparse do. The layer is row-wise, so
// the rules hold for any row groups on a path that keeps examples apart
// after it (nn.PerSampleRule).
func (f *Features) Linear(m *nn.Model, l *Linear, p float64) *G.Node {
	if f.Dense != nil {
		x := m.Dropout(f.Dense, p)
		return m.RecordLinear(l.Affine(x), l.W, l.B, x, nil)
	}
	xw, _ := f.matMul(m, l.W, p)
	return m.RecordLinear(l.AddBias(xw), l.W, l.B, nil, f.Sparse)
}

// MatMul returns X·W (no bias) after input dropout p; for sparse X the
// product is a SpMM with the CSR, never a dense matrix.
func (f *Features) MatMul(m *nn.Model, w *nn.Param, p float64) *G.Node {
	y, _ := f.matMul(m, w, p)
	return y
}

// matMul is MatMul with the per-sample rule of w in it: the dropped-out
// dense input, or the sparse input (whose values input dropout rewrites
// before each training run, so the rule reads the kept entries).
func (f *Features) matMul(m *nn.Model, w *nn.Param, p float64) (*G.Node, nn.LinearWeight) {
	if f.Sparse != nil {
		m.SparseDropout(f.Sparse, p)
		return G.Must(nn.SpMM(f.Sparse, w.Node)), nn.LinearWeight{SparseInput: f.Sparse}
	}
	x := m.Dropout(f.Dense, p)
	return nn.MatMul(x, w.Node), nn.LinearWeight{Input: x}
}

// MLP applies an MLP to the features (its InputDropout applies).
func (f *Features) MLP(p *MLP) *G.Node {
	if f.Sparse != nil {
		return p.ForwardSparse(f.Sparse)
	}
	return p.Forward(f.Dense)
}

// FeatureBatch is a fixed-capacity batch of feature rows for DP-SGD: a
// (capacity, F) input whose rows are refilled from the full feature matrix
// (or the rows of it that From chose) before every run (padding rows are
// zero).
type FeatureBatch struct {
	Features
	x    *graphs.Features // the feature matrix
	full *graphs.Features // Fill's rows: x, or the rows of x From chose
	buf  []float64
	csr  *graphs.CSR // the sparse batch, refilled in place
}

// NewFeatureBatch adds a batch input of the given capacity (rows) for x.
func NewFeatureBatch(m *nn.Model, x *graphs.Features, capacity int, name string) (*FeatureBatch, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: graph has no node features")
	}
	b := &FeatureBatch{Features: Features{N: capacity, F: x.F}, x: x, full: x}
	if x.Sparse != nil {
		b.Sparse = nn.NewSparse(name, &graphs.CSR{Rows: capacity, Cols: x.F, Indptr: make([]int, capacity+1)})
		return b, nil
	}
	b.buf = make([]float64, capacity*x.F)
	b.Dense = m.Input(name, b.buf, capacity, x.F)
	return b, nil
}

// From makes Fill's row indices index rows: those rows of the feature
// matrix are copied once into a matrix of their own, which Fill gathers
// from. DP-SGD samples training rows only: at 10⁶ nodes the training tenth
// of a dense input fits in the last-level cache where the whole matrix
// does not, so each sampled row is a cache hit instead of a read from
// memory (and the sample index needs no lookup of its node).
func (b *FeatureBatch) From(rows []int) { b.full = b.x.SelectRows(rows) }

// Fill loads the given rows of the full matrix (of the rows From chose)
// into the batch, in order, and zeroes the remaining rows.
func (b *FeatureBatch) Fill(rows []int) error {
	if len(rows) > b.N {
		return fmt.Errorf("layers: batch of %d rows exceeds capacity %d", len(rows), b.N)
	}
	f := b.F
	if b.Sparse != nil {
		src := b.full.Sparse
		if b.csr == nil {
			b.csr = &graphs.CSR{Rows: b.N, Cols: f, Indptr: make([]int, b.N+1)}
		}
		a := b.csr
		a.Indices, a.Data = a.Indices[:0], a.Data[:0]
		weighted := src.Data != nil
		for k, r := range rows {
			cols, vals := src.Row(r)
			a.Indices = append(a.Indices, cols...)
			if weighted {
				a.Data = append(a.Data, vals...)
			}
			a.Indptr[k+1] = len(a.Indices)
		}
		for k := len(rows); k < b.N; k++ {
			a.Indptr[k+1] = len(a.Indices)
		}
		return b.Sparse.Set(a)
	}
	clear(b.buf)
	for k, r := range rows {
		copy(b.buf[k*f:(k+1)*f], b.full.Dense[r*f:(r+1)*f])
	}
	return nn.SetValue(b.Dense, b.buf)
}

// Input is one model input (node features or a cached aggregate) with a
// training path, a fixed-capacity batch of rows refilled before runs, and an
// evaluation path over all rows. Both paths feed the same layers.
type Input struct {
	Train *FeatureBatch
	All   *Features
}

// NewInput adds both paths of x to m.
func NewInput(m *nn.Model, x *graphs.Features, capacity int, name string) (*Input, error) {
	tr, err := NewFeatureBatch(m, x, capacity, name+".batch")
	if err != nil {
		return nil, err
	}
	all, err := NewFeatures(m, x, name)
	if err != nil {
		return nil, err
	}
	return &Input{Train: tr, All: all}, nil
}

// DenseFeatures wraps a row-major (n, f) matrix as features.
func DenseFeatures(data []float64, n, f int) *graphs.Features {
	return &graphs.Features{N: n, F: f, Dense: data}
}
