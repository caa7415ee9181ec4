package graphs

import (
	"fmt"
	"math"
)

// CSR is a sparse matrix in compressed sparse row form.
//
// Row i holds the entries Indices[Indptr[i]:Indptr[i+1]] (column ids) with
// values Data[Indptr[i]:Indptr[i+1]]. A nil Data means every stored entry is
// 1 (an unweighted adjacency or binary bag of words). Column ids within a row
// are sorted and unique for every CSR this package builds.
type CSR struct {
	Rows, Cols int
	Indptr     []int     // length Rows+1, non-decreasing, Indptr[0]=0
	Indices    []int     // column ids, length Indptr[Rows]
	Data       []float64 // values, same length as Indices, or nil for all ones
}

// NNZ is the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Indices) }

// Value returns the k-th stored value (1 when Data is nil).
func (m *CSR) Value(k int) float64 {
	if m.Data == nil {
		return 1
	}
	return m.Data[k]
}

// Row returns the column ids and values of row i (vals is nil for unweighted).
func (m *CSR) Row(i int) (cols []int, vals []float64) {
	a, b := m.Indptr[i], m.Indptr[i+1]
	if m.Data == nil {
		return m.Indices[a:b], nil
	}
	return m.Indices[a:b], m.Data[a:b]
}

// Validate checks the structural invariants: lengths, monotone Indptr,
// in-range column ids and finite values. It does not require sorted rows.
func (m *CSR) Validate() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("negative shape (%d, %d)", m.Rows, m.Cols)
	}
	if len(m.Indptr) != m.Rows+1 {
		return fmt.Errorf("indptr has length %d, want rows+1 = %d", len(m.Indptr), m.Rows+1)
	}
	if m.Indptr[0] != 0 {
		return fmt.Errorf("indptr[0] = %d, want 0", m.Indptr[0])
	}
	for i := 0; i < m.Rows; i++ {
		if m.Indptr[i+1] < m.Indptr[i] {
			return fmt.Errorf("indptr decreases at row %d (%d > %d)", i, m.Indptr[i], m.Indptr[i+1])
		}
	}
	if m.Indptr[m.Rows] != len(m.Indices) {
		return fmt.Errorf("indptr ends at %d but there are %d indices", m.Indptr[m.Rows], len(m.Indices))
	}
	if m.Data != nil && len(m.Data) != len(m.Indices) {
		return fmt.Errorf("data has length %d but there are %d indices", len(m.Data), len(m.Indices))
	}
	for k, j := range m.Indices {
		if j < 0 || j >= m.Cols {
			return fmt.Errorf("index %d at position %d is out of range [0, %d)", j, k, m.Cols)
		}
	}
	for k, v := range m.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("data[%d] = %v is not finite", k, v)
		}
	}
	return nil
}

// MaxFeatureMagnitude is the public range of feature values: every loaded
// feature x has |x| ≤ 1e30. Larger values overflow the models' float64
// arithmetic (a row's squared norm passes 1.8e308 near 1e154) and turn a
// run into NaN before any clipping can bound them. The range is a public
// bound on the input like a degree bound: an input outside it is refused
// with a message that names only the bound, and removing a node never takes
// an input outside it, so the neighbours of an accepted input are accepted.
const MaxFeatureMagnitude = 1e30

// CheckFeatureRange refuses features with a value outside
// ±MaxFeatureMagnitude (nil features pass). The error names the bound only:
// which node holds the value is the data's.
func CheckFeatureRange(f *Features) error {
	if f == nil {
		return nil
	}
	vals := f.Dense
	if f.Sparse != nil {
		vals = f.Sparse.Data
	}
	for _, v := range vals {
		if !(math.Abs(v) <= MaxFeatureMagnitude) {
			return fmt.Errorf("a feature value is outside the public range |x| ≤ %g (values that large overflow the models' float64 arithmetic): rescale the features", MaxFeatureMagnitude)
		}
	}
	return nil
}

// Features holds a node feature matrix of shape N×F, either dense
// (row-major, Dense != nil) or sparse (Sparse != nil); exactly one is set.
type Features struct {
	N, F   int
	Dense  []float64 // row-major N×F, or nil
	Sparse *CSR      // N×F CSR, or nil
}

// SelectRows returns the rows rows of f, in that order, as new features
// (row k is f's row rows[k], with the same values).
func (f *Features) SelectRows(rows []int) *Features {
	out := &Features{N: len(rows), F: f.F}
	if f.Sparse != nil {
		out.Sparse = f.Sparse.SelectRows(rows)
		return out
	}
	out.Dense = make([]float64, len(rows)*f.F)
	for k, i := range rows {
		copy(out.Dense[k*f.F:(k+1)*f.F], f.Dense[i*f.F:(i+1)*f.F])
	}
	return out
}

// IsSparse reports whether the features are stored as CSR.
func (f *Features) IsSparse() bool { return f.Sparse != nil }

// ToDense returns a dense row-major copy of the features.
func (f *Features) ToDense() []float64 {
	if f.Dense != nil {
		out := make([]float64, len(f.Dense))
		copy(out, f.Dense)
		return out
	}
	out := make([]float64, f.N*f.F)
	s := f.Sparse
	for i := 0; i < s.Rows; i++ {
		for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
			out[i*f.F+s.Indices[k]] += s.Value(k)
		}
	}
	return out
}

// Split is a named partition of node ids into train, validation and test
// sets. Val may be empty (e.g. an inductive split with no validation set).
type Split struct {
	Train, Val, Test []int
}

// Graph is a node-classification graph (or a signed graph).
//
// Adj is the N×N adjacency. Loaders return it symmetrised (undirected: both
// directions stored) unless Directed is set. For signed graphs Adj holds the
// positive edges and Neg the negative ones. Labels has length N with values
// in [0, NumClasses) or -1 for unlabelled nodes.
type Graph struct {
	Name       string
	N          int
	Adj        *CSR
	Neg        *CSR // negative edges of a signed graph, nil otherwise
	Directed   bool
	X          *Features
	Labels     []int
	NumClasses int
	// Split is the split in use (set by ApplySplit or a loader).
	Split Split
	// MaskSplits holds the published split masks of a dataset (geom-gcn
	// Actor has ten); `--split masks:K` selects MaskSplits[K].
	MaskSplits []Split
	// EdgeSplit holds a published train/test split of signed edges, when the
	// dataset has one (ASGL). Each is an N×N CSR with values ±1.
	EdgeTrain, EdgeTest *CSR
}

// Signed reports whether g carries negative edges.
func (g *Graph) Signed() bool { return g.Neg != nil }
