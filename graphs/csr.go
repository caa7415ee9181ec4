package graphs

import (
	"sort"

	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
)

// Transpose returns Mᵀ as a new CSR with sorted rows.
func (m *CSR) Transpose() *CSR {
	t := &CSR{Rows: m.Cols, Cols: m.Rows, Indptr: make([]int, m.Cols+1), Indices: make([]int, len(m.Indices))}
	if m.Data != nil {
		t.Data = make([]float64, len(m.Data))
	}
	for _, j := range m.Indices {
		t.Indptr[j+1]++
	}
	for j := 0; j < m.Cols; j++ {
		t.Indptr[j+1] += t.Indptr[j]
	}
	next := make([]int, m.Cols)
	copy(next, t.Indptr[:m.Cols])
	// Walking rows in increasing order leaves each transposed row sorted.
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			j := m.Indices[k]
			p := next[j]
			t.Indices[p] = i
			if m.Data != nil {
				t.Data[p] = m.Data[k]
			}
			next[j]++
		}
	}
	return t
}

// Clone returns a deep copy.
func (m *CSR) Clone() *CSR {
	c := &CSR{Rows: m.Rows, Cols: m.Cols,
		Indptr:  append([]int(nil), m.Indptr...),
		Indices: append([]int(nil), m.Indices...)}
	if m.Data != nil {
		c.Data = append([]float64(nil), m.Data...)
	}
	return c
}

// SelectRows returns the rows rows of m, in that order, as a new
// len(rows)×Cols matrix (row k is m's row rows[k], entries in m's order).
// A product with it is the product with m restricted to those rows, with
// the same bits: a loss over the training nodes needs only their rows of
// the last layer's Â·Z. Rows outside m panic (a programming error).
func (m *CSR) SelectRows(rows []int) *CSR {
	s := &CSR{Rows: len(rows), Cols: m.Cols, Indptr: make([]int, len(rows)+1)}
	for k, i := range rows {
		s.Indptr[k+1] = s.Indptr[k] + m.Indptr[i+1] - m.Indptr[i]
	}
	s.Indices = make([]int, s.Indptr[len(rows)])
	if m.Data != nil {
		s.Data = make([]float64, len(s.Indices))
	}
	for k, i := range rows {
		a, b := m.Indptr[i], m.Indptr[i+1]
		copy(s.Indices[s.Indptr[k]:], m.Indices[a:b])
		if m.Data != nil {
			copy(s.Data[s.Indptr[k]:], m.Data[a:b])
		}
	}
	return s
}

// RowSums returns the sum of stored values in each row (the out-degree of an
// unweighted adjacency, the weighted degree otherwise).
func (m *CSR) RowSums() []float64 {
	d := make([]float64, m.Rows)
	for i := 0; i < m.Rows; i++ {
		if m.Data == nil {
			d[i] = float64(m.Indptr[i+1] - m.Indptr[i])
			continue
		}
		s := 0.0
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			s += m.Data[k]
		}
		d[i] = s
	}
	return d
}

// Degrees returns the number of stored entries in each row.
func (m *CSR) Degrees() []int {
	d := make([]int, m.Rows)
	for i := range d {
		d[i] = m.Indptr[i+1] - m.Indptr[i]
	}
	return d
}

// FromCOO builds a Rows×Cols CSR from coordinate triples, summing duplicate
// entries and sorting each row. vals may be nil (all ones; duplicates then
// collapse to a single 1, i.e. the result is a 0/1 pattern).
func FromCOO(rows, cols int, src, dst []int, vals []float64) *CSR {
	type entry struct {
		j int
		v float64
	}
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)}
	for _, i := range src {
		m.Indptr[i+1]++
	}
	for i := 0; i < rows; i++ {
		m.Indptr[i+1] += m.Indptr[i]
	}
	tmp := make([]entry, len(src))
	next := append([]int(nil), m.Indptr[:rows]...)
	for k, i := range src {
		v := 1.0
		if vals != nil {
			v = vals[k]
		}
		tmp[next[i]] = entry{dst[k], v}
		next[i]++
	}
	indptr := make([]int, rows+1)
	indices := make([]int, 0, len(src))
	var data []float64
	if vals != nil {
		data = make([]float64, 0, len(src))
	}
	for i := 0; i < rows; i++ {
		row := tmp[m.Indptr[i]:m.Indptr[i+1]]
		sort.Slice(row, func(a, b int) bool { return row[a].j < row[b].j })
		for k := 0; k < len(row); k++ {
			if k > 0 && row[k].j == row[k-1].j {
				if vals != nil {
					data[len(data)-1] += row[k].v
				}
				continue
			}
			indices = append(indices, row[k].j)
			if vals != nil {
				data = append(data, row[k].v)
			}
		}
		indptr[i+1] = len(indices)
	}
	m.Indptr, m.Indices, m.Data = indptr, indices, data
	return m
}

// unitValue is the factor of every entry of a pattern-only matrix (Data
// nil); read-only.
var unitValue = []float64{1}

// prefetchBytes is the size of X above which MulDense prefetches the rows
// it gathers (about where X leaves the L3 cache's share a core gets).
const prefetchBytes = 8 << 20

// MulDense computes out = M·X for a dense row-major X of shape Cols×k and
// writes the Rows×k result into out (which must have length Rows·k; it is
// overwritten). Rows are processed in parallel over GOMAXPROCS goroutines,
// each one sum of scaled rows of X (vec.SumIdx) over the row's entries in
// order. Stored zeros (entries removed by sparse dropout) add ±0, which
// leaves every sum unchanged unless X holds an infinity or NaN.
func (m *CSR) MulDense(x []float64, k int, out []float64) {
	if len(x) != m.Cols*k || len(out) != m.Rows*k {
		panic("graphs: MulDense shape mismatch") // programming error, not user input
	}
	ahead := prefetchAhead(8 * len(x))
	parallel.Rows(m.Rows, m.NNZ()*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if j := i + ahead; ahead > 0 && j < hi {
				vec.PrefetchRows(m.Indices[m.Indptr[j]:m.Indptr[j+1]], x, k, m.Cols)
			}
			vals, vinc, idx := m.row(i)
			vec.SumIdx(out[i*k:(i+1)*k:(i+1)*k], vals, vinc, idx, x, k)
		}
	})
}

// MulDenseBits32 is MulDense of a float32 X dropped out by a mask of
// bits, without writing the masked X: entry e of X (row-major) counts as
// its float64 value times keep when bit e of bits is set and as 0
// otherwise, which gives the bits of a masked float64 X followed by
// MulDense, reading half the bytes of every gathered row and no masked
// matrix. bits holds one bit per entry of X, entry e at bit e%64 of word
// e/64, in at least ⌈Cols·k/64⌉ + 1 words (the last one padding); keep
// is a kept entry's factor (1/(1−p) for dropout at rate p).
func (m *CSR) MulDenseBits32(x []float32, k int, bits []uint64, keep float64, out []float64) {
	if len(x) != m.Cols*k || len(out) != m.Rows*k || len(bits) < vec.MaskWords(m.Cols*k) {
		panic("graphs: MulDenseBits32 shape mismatch") // programming error, not user input
	}
	mask := vec.NewBitMask(bits, keep)
	ahead := prefetchAhead(4 * len(x))
	parallel.Rows(m.Rows, m.NNZ()*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if j := i + ahead; ahead > 0 && j < hi {
				next := m.Indices[m.Indptr[j]:m.Indptr[j+1]]
				mask.PrefetchBits(next, k, m.Cols)
				vec.PrefetchRows32(next, x, k, m.Cols)
			}
			vals, vinc, idx := m.row(i)
			vec.SumIdxBits32(out[i*k:(i+1)*k:(i+1)*k], vals, vinc, idx, x, mask)
		}
	})
}

// prefetchAhead is how many output rows ahead the products prefetch the
// rows they gather from an X of the given size: beyond the caches, rows
// two output rows ahead, since the gathers are bound by memory latency
// there (a 10⁶-row product 25–35 % faster at widths 5 and 16), while on X
// that the caches hold the extra pass over the indices only costs (a
// 3,000-row product 40–55 % slower).
func prefetchAhead(bytes int) int {
	if bytes > prefetchBytes {
		return 2
	}
	return 0
}

// row returns row i's factors (with their stride: 0 for a pattern-only
// matrix, whose entries are all 1) and column indices.
func (m *CSR) row(i int) (vals []float64, vinc int, idx []int) {
	a, b := m.Indptr[i], m.Indptr[i+1]
	if m.Data == nil {
		return unitValue, 0, m.Indices[a:b]
	}
	return m.Data[a:b], 1, m.Indices[a:b]
}

// MulDenseT computes out = Mᵀ·X for a dense row-major X of shape Rows×k
// and writes the Cols×k result into out (length Cols·k; overwritten),
// without building Mᵀ: out is cleared and every entry (i, j, v) adds v·X[i]
// to row j, rows i in increasing order (vec.ScatterCSR), so each output
// entry sums its terms in the order MulDense over Mᵀ (Transpose) sums them:
// the same bits. k must be a multiple of vec.ScatterWidth (ScattersT); the
// strips of 16 columns are processed in parallel, each writing only its own
// columns.
func (m *CSR) MulDenseT(x []float64, k int, out []float64) {
	if len(x) != m.Rows*k || len(out) != m.Cols*k || !ScattersT(k) {
		panic("graphs: MulDenseT shape mismatch") // programming error, not user input
	}
	clear(out)
	vals, vinc := m.Data, 1
	if vals == nil {
		vals, vinc = unitValue, 0
	}
	strips := k / vec.ScatterWidth
	parallel.Rows(strips, m.NNZ()*k, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			c := s * vec.ScatterWidth
			vec.ScatterCSR(out[c:], k, m.Cols, m.Indptr, m.Indices, vals, vinc, x[c:], k)
		}
	})
}

// ScattersT reports whether MulDenseT takes products of width k: a
// multiple of vec.ScatterWidth with at least two strips, so the two halves
// of the work run in parallel (one strip would run on one core, where
// MulDense over a transpose runs on all).
func ScattersT(k int) bool { return k%vec.ScatterWidth == 0 && k >= 2*vec.ScatterWidth }

// UndirectedEdges is the number of unordered pairs {i, j} with an entry
// i→j or j→i (a self-loop counts once): the edge count of the undirected
// graph a square adjacency stands for, and the privacy unit count when one
// unit is an undirected edge.
func (m *CSR) UndirectedEdges() int {
	seen := make(map[[2]int]struct{}, m.NNZ())
	for i := 0; i < m.Rows; i++ {
		for _, j := range m.Indices[m.Indptr[i]:m.Indptr[i+1]] {
			seen[[2]int{min(i, j), max(i, j)}] = struct{}{}
		}
	}
	return len(seen)
}

// Canonical reports whether every row has strictly increasing column ids
// (sorted, no duplicates): the form every constructor here returns.
func (m *CSR) Canonical() bool {
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i] + 1; k < m.Indptr[i+1]; k++ {
			if m.Indices[k] <= m.Indices[k-1] {
				return false
			}
		}
	}
	return true
}
