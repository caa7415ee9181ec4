package nn

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
)

// Synthetic is a batch layout for RowLocal.Synthetic: batch example k has
// the batch rows Rows[k], in the example's own order, and its data is
// seeded by Ids[k] (and Seed), so the same id laid out at other rows gets
// the same data.
type Synthetic struct {
	Rows [][]int
	Ids  []int
	Seed uint64
	// Pool is the pool's row count (0 without one): a product over the
	// batch rows with Pool rows is a pooling product (dpnn checks a square
	// one as a pool when Pool is the batch's row count).
	Pool int
	// Scale multiplies every value (0: 1): values in [−Scale, Scale).
	Scale float64
}

// Synthetic writes data into every batch input of the path (after Reset)
// for the layout l: each leaf row, batch matrix row and block entry that
// belongs to an example gets values that depend only on the example's id,
// the input, and the row's place within the example (its index in
// Rows[k], or the pooled example itself) — never on where the example
// lies in the batch. A probe stays zero; a padding row stays empty. The
// square products' matrices get entries within each example's block only,
// the pooling products' row k entries on example k's rows only: what the
// step's block checks accept. dp/dpnn runs the step on such batches in
// several layouts to test that nothing on the path depends on a row's
// position (SGD's layout check).
func (r *RowLocal) Synthetic(l Synthetic, rows int) error {
	owner, place := make([]int, rows), make([]int, rows)
	for i := range owner {
		owner[i] = -1
	}
	for k, rs := range l.Rows {
		for j, row := range rs {
			owner[row], place[row] = k, j
		}
	}
	// at returns the example and place of row r of an input laid out so
	// (-1 when it is padding or spans two examples)
	at := func(row int, pool bool, of [][]int) (k, j int) {
		switch {
		case pool:
			if row < len(l.Rows) {
				return row, -1
			}
			return -1, 0
		case of != nil:
			if row >= len(of) || len(of[row]) == 0 {
				return -1, 0
			}
			k, j = owner[of[row][0]], place[of[row][0]]
			for _, x := range of[row] {
				if owner[x] != k {
					return -1, 0
				}
			}
			return k, j
		case row < rows:
			return owner[row], place[row]
		}
		return -1, 0
	}
	scale := l.Scale
	if scale == 0 {
		scale = 1
	}
	val := func(input, k, j, col int) float64 {
		return scale * synth(l.Seed, uint64(input), uint64(l.Ids[k]), uint64(j+2), uint64(col))
	}
	r.leafRows(func(i int, lay leafLayout, row int, vals []float64) {
		if k, j := at(row, lay.pool, lay.of); k >= 0 {
			for c := range vals {
				vals[c] = val(i+1, k, j, c)
			}
		}
	})
	input := len(r.leaves) + 1
	for i, a := range r.sparse {
		var src, dst []int
		var vals []float64
		for row := 0; row < a.A.Rows; row++ {
			k, j := at(row, r.pooled[i], nil)
			if k < 0 {
				continue
			}
			for e := 0; e < min(3, a.A.Cols); e++ {
				h := math.Float64bits(synth(l.Seed, uint64(input+i), uint64(l.Ids[k]), uint64(j+2), uint64(-1-e)))
				src, dst, vals = append(src, row), append(dst, int(h%uint64(a.A.Cols))), append(vals, val(input+i, k, j, e))
			}
		}
		if err := a.Set(graphs.FromCOO(a.A.Rows, a.A.Cols, src, dst, vals)); err != nil {
			return err
		}
	}
	input += len(r.sparse)
	for i, a := range r.mixers {
		var src, dst []int
		var vals []float64
		for k, rs := range l.Rows {
			if l.Pool > 0 && a.A.Rows == l.Pool { // a pooling product: row k reads example k's rows
				for j, x := range rs {
					src, dst, vals = append(src, k), append(dst, x), append(vals, val(input+i, k, j, -1))
				}
				continue
			}
			for j1, x1 := range rs { // a square product: within the block
				for j2, x2 := range rs {
					if v := val(input+i, k, j1, j2); j1 == j2 || v > 0 { // about half the block
						src, dst, vals = append(src, x1), append(dst, x2), append(vals, v)
					}
				}
			}
		}
		if err := a.Set(graphs.FromCOO(a.A.Rows, a.A.Cols, src, dst, vals)); err != nil {
			return err
		}
	}
	return nil
}

// synth is a value in [−1, 1) determined by its arguments (splitmix64 of
// each in turn).
func synth(xs ...uint64) float64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range xs {
		h ^= x + 0x9e3779b97f4a7c15 + h<<6 + h>>2
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return float64(h>>11)/float64(1<<52) - 1
}

// Digest hashes what the fill wrote for one example laid out alone: the
// rows of every batch input that belong to it (used: the batch rows its
// layout gave it; the first pooled row for inputs laid out by pooled
// example). Two examples with equal digests were given the same data. A
// `dpgnn audit` counts, with it, the examples a neighbour changed.
func (r *RowLocal) Digest(used []bool) uint64 {
	h := fnv.New64a()
	var b [8]byte
	word := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	uses := func(row int, pool bool, of [][]int) bool {
		switch {
		case pool:
			return row == 0
		case of != nil:
			return row < len(of) && len(of[row]) > 0 && of[row][0] < len(used) && used[of[row][0]]
		}
		return row < len(used) && used[row]
	}
	r.leafRows(func(i int, lay leafLayout, row int, vals []float64) {
		if uses(row, lay.pool, lay.of) {
			word(uint64(i))
			for _, v := range vals {
				word(math.Float64bits(v))
			}
		}
	})
	matrices := append(slices.Clone(r.sparse), r.mixers...)
	for i, a := range matrices {
		pool := i < len(r.pooled) && r.pooled[i] || i >= len(r.sparse) && a.A.Rows != len(used)
		for row := 0; row < a.A.Rows; row++ {
			if !uses(row, pool, nil) {
				continue
			}
			word(uint64(len(r.leaves) + i))
			for q := a.A.Indptr[row]; q < a.A.Indptr[row+1]; q++ {
				word(uint64(a.A.Indices[q]))
				word(math.Float64bits(a.A.Value(q)))
			}
		}
	}
	return h.Sum64()
}

// leafRows calls f with every row of every batch input leaf but the
// probes (which stay zero): the leaf's index and layout, the row, and the
// row's values (aliased).
func (r *RowLocal) leafRows(f func(i int, lay leafLayout, row int, vals []float64)) {
	for i, n := range r.leaves {
		lay := r.layouts[i]
		d := backing(n)
		if lay.probe || len(d) == 0 {
			continue
		}
		nr := n.Shape()[0]
		w := len(d) / nr
		for row := 0; row < nr; row++ {
			f(i, lay, row, d[row*w:(row+1)*w])
		}
	}
}
