package graphs

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Transforms in this file never mutate their inputs: they return new CSRs
// (or graphs) with sorted, duplicate-free rows. A transform of an unweighted
// CSR (nil Data) is unweighted unless stated otherwise.

// csrEntry is one (column, value) pair while a row is being assembled.
type csrEntry struct {
	j int
	v float64
}

// csrBuilder assembles a CSR row by row.
type csrBuilder struct {
	m   *CSR
	buf []csrEntry
}

func newCSRBuilder(rows, cols, nnzHint int, weighted bool) *csrBuilder {
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int, 1, rows+1), Indices: make([]int, 0, nnzHint)}
	if weighted {
		m.Data = make([]float64, 0, nnzHint)
	}
	return &csrBuilder{m: m}
}

// add appends an entry to the current row's buffer.
func (b *csrBuilder) add(j int, v float64) { b.buf = append(b.buf, csrEntry{j, v}) }

// endRow sorts the buffered entries by column, merges duplicates with
// combine (nil keeps the first) and closes the row.
func (b *csrBuilder) endRow(combine func(x, y float64) float64) {
	byCol := func(x, y csrEntry) int { return cmp.Compare(x.j, y.j) }
	if !slices.IsSortedFunc(b.buf, byCol) {
		slices.SortStableFunc(b.buf, byCol)
	}
	m := b.m
	start := len(m.Indices)
	for _, e := range b.buf {
		if len(m.Indices) > start && m.Indices[len(m.Indices)-1] == e.j {
			if m.Data != nil && combine != nil {
				m.Data[len(m.Data)-1] = combine(m.Data[len(m.Data)-1], e.v)
			}
			continue
		}
		m.Indices = append(m.Indices, e.j)
		if m.Data != nil {
			m.Data = append(m.Data, e.v)
		}
	}
	m.Indptr = append(m.Indptr, len(m.Indices))
	b.buf = b.buf[:0]
}

func (b *csrBuilder) done() *CSR { return b.m }

// addRow buffers row i of a, keeping the entries for which keep (if non-nil)
// returns true.
func (b *csrBuilder) addRow(a *CSR, i int, keep func(j int) bool) {
	for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
		if keep == nil || keep(a.Indices[k]) {
			b.add(a.Indices[k], a.Value(k))
		}
	}
}

func maxf(x, y float64) float64 { return max(x, y) }

func requireSquare(a *CSR, op string) {
	if a.Rows != a.Cols {
		panic(fmt.Sprintf("graphs: %s needs a square matrix, got %d×%d", op, a.Rows, a.Cols))
	}
}

// sortedCopy returns a sorted copy of ids.
func sortedCopy(ids []int) []int {
	out := append([]int(nil), ids...)
	slices.Sort(out)
	return out
}

// filterCSR returns the entries (i, j) of a for which keep(i, j) is true.
func filterCSR(a *CSR, keep func(i, j int) bool) *CSR {
	b := newCSRBuilder(a.Rows, a.Cols, a.NNZ(), a.Data != nil)
	for i := 0; i < a.Rows; i++ {
		b.addRow(a, i, func(j int) bool { return keep(i, j) })
		b.endRow(nil)
	}
	return b.done()
}

// Symmetrize returns A ∪ Aᵀ for a square A. For an unweighted A the result
// is the 0/1 pattern of the union. For a weighted A, entry (i, j) of the
// result is max(A_ij, A_ji) over the directions that are stored: an entry
// stored in one direction only keeps its value in both. Self-loops are kept.
// It panics if A is not square (a programming error).
func Symmetrize(a *CSR) *CSR {
	requireSquare(a, "Symmetrize")
	t := a.Transpose()
	b := newCSRBuilder(a.Rows, a.Cols, 2*a.NNZ(), a.Data != nil)
	for i := 0; i < a.Rows; i++ {
		b.addRow(a, i, nil)
		b.addRow(t, i, nil)
		b.endRow(maxf)
	}
	return b.done()
}

// IsSymmetric reports whether A equals Aᵀ (same pattern and values).
func IsSymmetric(a *CSR) bool {
	if a.Rows != a.Cols {
		return false
	}
	t := a.Transpose()
	for i := 0; i < a.Rows; i++ {
		ac, av := sortedRow(a, i)
		tc, tv := sortedRow(t, i)
		if !slices.Equal(ac, tc) || !slices.Equal(av, tv) {
			return false
		}
	}
	return true
}

// sortedRow returns row i of m sorted by column, with values (all 1 when
// Data is nil).
func sortedRow(m *CSR, i int) ([]int, []float64) {
	b := newCSRBuilder(1, m.Cols, 0, true)
	b.addRow(m, i, nil)
	b.endRow(func(x, y float64) float64 { return x + y })
	r := b.done()
	return r.Indices, r.Data
}

// RemoveSelfLoops returns A without its diagonal entries.
func RemoveSelfLoops(a *CSR) *CSR {
	return filterCSR(a, func(i, j int) bool { return i != j })
}

// AddSelfLoops returns A with every diagonal entry (i, i), i < min(Rows,
// Cols), set to w, replacing any existing self-loop. The result is
// unweighted when A is unweighted and w == 1, weighted otherwise.
func AddSelfLoops(a *CSR, w float64) *CSR {
	weighted := a.Data != nil || w != 1
	b := newCSRBuilder(a.Rows, a.Cols, a.NNZ()+a.Rows, weighted)
	for i := 0; i < a.Rows; i++ {
		b.addRow(a, i, func(j int) bool { return j != i })
		if i < a.Cols {
			b.add(i, w)
		}
		b.endRow(nil)
	}
	return b.done()
}

// RemoveNode returns A with node v's row and column emptied: the raw
// node-level neighbour, with the other nodes' ids unchanged (the node itself
// stays as an isolated id, so rows can be compared one to one; drop row v
// before comparing outputs). It panics if v is out of range (a programming
// error).
func RemoveNode(a *CSR, v int) *CSR {
	if v < 0 || v >= max(a.Rows, a.Cols) {
		panic(fmt.Sprintf("graphs: RemoveNode: node %d out of range", v))
	}
	return filterCSR(a, func(i, j int) bool { return i != v && j != v })
}

// RemoveEntry returns A without the entry (u, v) and, when both, also
// without (v, u): an edge-level neighbour (one directed entry, or one
// undirected edge with both its entries). It panics if u or v is out of
// range.
func RemoveEntry(a *CSR, u, v int, both bool) *CSR {
	if u < 0 || v < 0 || u >= a.Rows || v >= a.Cols || (both && (v >= a.Rows || u >= a.Cols)) {
		panic(fmt.Sprintf("graphs: RemoveEntry: (%d, %d) out of range", u, v))
	}
	return filterCSR(a, func(i, j int) bool {
		return !(i == u && j == v) && !(both && i == v && j == u)
	})
}

// HasEntry reports whether A stores the entry (i, j).
func (m *CSR) HasEntry(i, j int) bool {
	if i < 0 || i >= m.Rows {
		return false
	}
	return slices.Contains(m.Indices[m.Indptr[i]:m.Indptr[i+1]], j)
}

// RemoveEdgesBetween returns A without the entries (i, j) and (j, i) for
// i ∈ setA, j ∈ setB. A node in both sets loses its edges to both sets.
// Ids outside [0, max(Rows, Cols)) are ignored.
func RemoveEdgesBetween(a *CSR, setA, setB []int) *CSR {
	n := max(a.Rows, a.Cols)
	inA := make([]bool, n)
	inB := make([]bool, n)
	for _, i := range setA {
		if i >= 0 && i < n {
			inA[i] = true
		}
	}
	for _, i := range setB {
		if i >= 0 && i < n {
			inB[i] = true
		}
	}
	return filterCSR(a, func(i, j int) bool {
		return !((inA[i] && inB[j]) || (inB[i] && inA[j]))
	})
}

// SplitEdgesAt partitions A's entries by a node set: touching holds the
// entries (i, j) with i or j in nodes, rest the others. Together they are
// exactly A (e.g. a public test graph of the evaluated nodes' edges and the
// private training graph without them). Ids outside the matrix are ignored.
func SplitEdgesAt(a *CSR, nodes []int) (touching, rest *CSR) {
	n := max(a.Rows, a.Cols)
	in := make([]bool, n)
	for _, i := range nodes {
		if i >= 0 && i < n {
			in[i] = true
		}
	}
	touching = filterCSR(a, func(i, j int) bool { return in[i] || in[j] })
	rest = filterCSR(a, func(i, j int) bool { return !in[i] && !in[j] })
	return touching, rest
}

// WithAdj returns a shallow copy of g with Adj replaced by a. Features,
// labels and splits are shared with g (they are treated as immutable).
func (g *Graph) WithAdj(a *CSR) *Graph {
	c := *g
	c.Adj = a
	return &c
}

// inducedRows returns the rows nodes of m (in that order), keeping only the
// columns j with colMap[j] ≥ 0, renumbered to colMap[j]; colMap == nil keeps
// every column unchanged. cols is the new column count.
func inducedRows(m *CSR, nodes []int, colMap []int, cols int) *CSR {
	if m == nil {
		return nil
	}
	b := newCSRBuilder(len(nodes), cols, 0, m.Data != nil)
	for _, i := range nodes {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			j := m.Indices[k]
			if colMap != nil {
				if j = colMap[j]; j < 0 {
					continue
				}
			}
			b.add(j, m.Value(k))
		}
		b.endRow(nil)
	}
	return b.done()
}

// remapIDs maps ids through old2new, drops those outside the subgraph and
// returns them sorted.
func remapIDs(ids []int, old2new []int) []int {
	var out []int
	for _, i := range ids {
		if i >= 0 && i < len(old2new) && old2new[i] >= 0 {
			out = append(out, old2new[i])
		}
	}
	slices.Sort(out)
	return out
}

func remapSplit(s Split, old2new []int) Split {
	return Split{Train: remapIDs(s.Train, old2new), Val: remapIDs(s.Val, old2new), Test: remapIDs(s.Test, old2new)}
}

// InducedSubgraph returns the subgraph of g induced by nodes, re-indexed so
// that nodes[k] becomes node k, and the old→new mapping (length g.N, −1 for
// nodes left out; the new→old mapping is nodes itself). Adjacency (Adj, Neg,
// EdgeTrain, EdgeTest), features, labels, Split and MaskSplits are carried
// over; split members outside the subgraph are dropped. It panics on an
// out-of-range or repeated node id (a programming error).
func InducedSubgraph(g *Graph, nodes []int) (*Graph, []int) {
	old2new := make([]int, g.N)
	for i := range old2new {
		old2new[i] = -1
	}
	for k, i := range nodes {
		if i < 0 || i >= g.N {
			panic(fmt.Sprintf("graphs: InducedSubgraph: node id %d out of range [0, %d)", i, g.N))
		}
		if old2new[i] >= 0 {
			panic(fmt.Sprintf("graphs: InducedSubgraph: node id %d repeated", i))
		}
		old2new[i] = k
	}
	n := len(nodes)
	sub := &Graph{
		Name:       g.Name,
		N:          n,
		Directed:   g.Directed,
		NumClasses: g.NumClasses,
		Adj:        inducedRows(g.Adj, nodes, old2new, n),
		Neg:        inducedRows(g.Neg, nodes, old2new, n),
		EdgeTrain:  inducedRows(g.EdgeTrain, nodes, old2new, n),
		EdgeTest:   inducedRows(g.EdgeTest, nodes, old2new, n),
		Split:      remapSplit(g.Split, old2new),
	}
	if g.Labels != nil {
		sub.Labels = make([]int, n)
		for k, i := range nodes {
			sub.Labels[k] = g.Labels[i]
		}
	}
	if g.X != nil {
		if g.X.Sparse != nil {
			sub.X = &Features{N: n, F: g.X.F, Sparse: inducedRows(g.X.Sparse, nodes, nil, g.X.F)}
		} else {
			sub.X = g.X.SelectRows(nodes)
		}
	}
	for _, s := range g.MaskSplits {
		sub.MaskSplits = append(sub.MaskSplits, remapSplit(s, old2new))
	}
	return sub, old2new
}

// L1NormalizeFeatures returns features whose rows have ℓ1 norm 1 (each
// value divided by the row's Σ|x|; rows of zeros stay zero): for the
// non-negative features of the benchmarks, the "NormalizeFeatures"
// preprocessing of Kipf & Welling's GCN and PyG (rows summing to 1). Every
// value of the result is in [−1, 1]: dividing by a signed sum instead would
// send a row such as (1, −1, 5e-324) to ±Inf. Sparse features stay sparse.
func L1NormalizeFeatures(f *Features) *Features {
	out := &Features{N: f.N, F: f.F}
	if f.Sparse != nil {
		s := f.Sparse.Clone()
		if s.Data == nil {
			s.Data = make([]float64, s.NNZ())
			for k := range s.Data {
				s.Data[k] = 1
			}
		}
		for i := 0; i < s.Rows; i++ {
			sum := 0.0
			for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
				sum += math.Abs(s.Data[k])
			}
			if sum != 0 {
				for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
					s.Data[k] /= sum
				}
			}
		}
		out.Sparse = s
		return out
	}
	out.Dense = make([]float64, len(f.Dense))
	for i := 0; i < f.N; i++ {
		row := f.Dense[i*f.F : (i+1)*f.F]
		sum := 0.0
		for _, v := range row {
			sum += math.Abs(v)
		}
		for c, v := range row {
			if sum != 0 {
				out.Dense[i*f.F+c] = v / sum
			}
		}
	}
	return out
}
