package graphs

import "math"

// withRemainingSelfLoops returns A + I in the sense of PyG's
// add_remaining_self_loops(fill_value=1): every node gets exactly one
// self-loop; where A already has one, its weight is kept (for an
// unweighted A that weight is 1), elsewhere the weight is 1. The result is
// weighted, with sorted rows.
func withRemainingSelfLoops(a *CSR) *CSR {
	b := newCSRBuilder(a.Rows, a.Cols, a.NNZ()+a.Rows, true)
	for i := 0; i < a.Rows; i++ {
		loop := 1.0
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			if j := a.Indices[k]; j == i {
				loop = a.Value(k)
			} else {
				b.add(j, a.Value(k))
			}
		}
		if i < a.Cols {
			b.add(i, loop)
		}
		b.endRow(func(x, y float64) float64 { return x + y })
	}
	return b.done()
}

// GCNNorm returns the GCN propagation matrix Â = D^{-1/2} (A+I) D^{-1/2},
// where D is the diagonal of row sums of A+I. Self-loops follow PyG's
// gcn_norm with add_remaining_self_loops: every node gets one self-loop of
// weight 1, except that an existing self-loop of a weighted A keeps its
// weight (for an unweighted A an existing self-loop is simply the weight-1
// loop, not a second one). Entries of a node with non-positive degree are
// 0. For an unweighted symmetric A, Â_ii = 1/(d_i+1) and
// Â_ij = 1/sqrt((d_i+1)(d_j+1)) with d the degree without self-loops.
// For a directed A the degrees are row sums (out-degrees). The result is
// weighted with sorted rows; A must be square.
func GCNNorm(a *CSR) *CSR {
	requireSquare(a, "GCNNorm")
	m := withRemainingSelfLoops(a)
	deg := m.RowSums()
	inv := make([]float64, len(deg))
	for i, d := range deg {
		if d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			m.Data[k] *= inv[i] * inv[m.Indices[k]]
		}
	}
	return m
}

// RowNorm returns the random-walk matrix D^{-1} (A+I), with A+I and D as in
// GCNNorm: every row of the result sums to 1 (rows of non-positive degree
// are 0). The result is weighted with sorted rows; A must be square.
func RowNorm(a *CSR) *CSR {
	requireSquare(a, "RowNorm")
	m := withRemainingSelfLoops(a)
	deg := m.RowSums()
	for i := 0; i < m.Rows; i++ {
		s := 0.0
		if deg[i] > 0 {
			s = 1 / deg[i]
		}
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			m.Data[k] *= s
		}
	}
	return m
}
