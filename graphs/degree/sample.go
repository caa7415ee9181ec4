package degree

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
)

// Key is the secret key of the keyed pseudo-random function on node pairs
// that Sample ranks edges by. Draw it from the mechanism's noise source
// (NewKey), so it is reproducible from the seed and unpredictable with
// secure noise.
type Key [32]byte

// NewKey draws a key from src: pass the mechanism's *dp.Source.
func NewKey(src rand.Source) Key {
	var k Key
	for i := 0; i < len(k); i += 8 {
		binary.LittleEndian.PutUint64(k[i:], src.Uint64())
	}
	return k
}

// pairPRF is AES-256 keyed by a Key, evaluated on (row, column).
type pairPRF struct{ block cipher.Block }

func newPairPRF(k Key) pairPRF {
	b, err := aes.NewCipher(k[:])
	if err != nil { // a 32-byte key is always valid
		panic(fmt.Sprintf("degree: AES-256 key: %v", err))
	}
	return pairPRF{b}
}

// rank returns the keyed rank of the ordered pair (j, i).
func (p pairPRF) rank(j, i int, buf *[16]byte) uint64 {
	binary.LittleEndian.PutUint64(buf[:8], uint64(j))
	binary.LittleEndian.PutUint64(buf[8:], uint64(i))
	p.block.Encrypt(buf[:], buf[:])
	return binary.LittleEndian.Uint64(buf[:8])
}

// SampleOut returns a copy of A in which every row j keeps at most d of
// its entries: the d out-neighbours i with the smallest keyed rank
// PRF_key(j, i) (rows with at most d entries keep all of them; values are
// kept). It is GAP's and ProGAP's out-degree bounding with its randomness
// drawn per pair from a key instead of from one sequential stream, and it is
// NOT re-symmetrised: the result is read as in-neighbour lists through its
// transpose, as NAP does. A negative d is treated as 0.
//
// Stability under node removal (proven; property-tested). Let A′ be A with
// node v's row and column emptied (node v removed; other ids unchanged).
// Then SampleOut(A′) equals SampleOut(A) with row and column v emptied,
// except that every row j ≠ v that has more than d entries and kept v
// gains exactly one entry, its (d+1)-th smallest-rank out-neighbour in A.
// No other entry appears or disappears. Proof: row j's kept set is a
// function of its own entries' ranks only, and the ranks of j's other
// entries do not depend on v. If v is not among the d smallest, removing it
// leaves the d smallest unchanged; if it is, the d smallest of the rest are
// the other d−1 plus the (d+1)-th. ∎
//
// So for NAP the change of the rows other than v is: −x_v in the ≤ d rows v
// kept, and +x_j in one new row for every node j that kept an edge to v.
// The second count is bounded by v's in-degree in A and by nothing in d: on
// graphs whose out-degrees are already ≤ d sampling is the identity and the
// sensitivity is √d; on others it is not a bound (the node-level tests audit
// a graph where it fails).
func SampleOut(a *graphs.CSR, d int, key Key) *graphs.CSR {
	d = max(d, 0)
	prf := newPairPRF(key)
	nnz := min(a.NNZ(), a.Rows*d)
	src, dst := make([]int, 0, nnz), make([]int, 0, nnz)
	var vals []float64
	if a.Data != nil {
		vals = make([]float64, 0, nnz)
	}
	keep := func(j, k int) {
		src, dst = append(src, j), append(dst, a.Indices[k])
		if vals != nil {
			vals = append(vals, a.Data[k])
		}
	}
	type ranked struct {
		r uint64
		k int
	}
	var buf [16]byte
	var rs []ranked
	for j := 0; j < a.Rows; j++ {
		lo, hi := a.Indptr[j], a.Indptr[j+1]
		if hi-lo <= d {
			for k := lo; k < hi; k++ {
				keep(j, k)
			}
			continue
		}
		rs = rs[:0]
		for k := lo; k < hi; k++ {
			rs = append(rs, ranked{prf.rank(j, a.Indices[k], &buf), k})
		}
		slices.SortFunc(rs, func(x, y ranked) int {
			if x.r != y.r {
				if x.r < y.r {
					return -1
				}
				return 1
			}
			return a.Indices[x.k] - a.Indices[y.k] // ties (never seen) by column
		})
		for _, e := range rs[:d] {
			keep(j, e.k)
		}
	}
	return graphs.FromCOO(a.Rows, a.Cols, src, dst, vals)
}

// SampleSymmetric is the keyed greedy cap of a symmetric A: its undirected
// pairs {i, j}, visited in increasing keyed rank PRF_key(min, max), are
// kept while both endpoints have fewer than d kept pairs (a self-loop uses
// one unit of its node's capacity); kept pairs are stored in both
// directions with their values. On a graph with degrees ≤ d it is the
// identity; its result has degrees ≤ d. A negative d is treated as 0.
//
// Not stable under node removal: removing a node frees at most d slots,
// but each freed slot can start an alternating chain of swapped edges as
// long as the graph (TestGreedyProjectionCascades, TestSampleSymmetricNotStable),
// so a sensitivity proven on the capped graph assumes the raw graph is
// already within d (the package doc).
func SampleSymmetric(a *graphs.CSR, d int, key Key) *graphs.CSR {
	pairs := undirectedPairs(a)
	prf := newPairPRF(key)
	var buf [16]byte
	ranks := make([]uint64, len(pairs))
	for k, p := range pairs {
		ranks[k] = prf.rank(p.i, p.j, &buf)
	}
	order := make([]int, len(pairs))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int {
		if ranks[x] != ranks[y] {
			if ranks[x] < ranks[y] {
				return -1
			}
			return 1
		}
		if pairs[x].i != pairs[y].i {
			return pairs[x].i - pairs[y].i
		}
		return pairs[x].j - pairs[y].j
	})
	sorted := make([]pair, len(pairs))
	for k, o := range order {
		sorted[k] = pairs[o]
	}
	return greedy(a.Rows, sorted, d, a.Data != nil)
}

// pair is an undirected pair {i, j}, i ≤ j, with its value.
type pair struct {
	i, j int
	v    float64
}

// undirectedPairs lists the pairs i ≤ j of a symmetric s.
func undirectedPairs(s *graphs.CSR) []pair {
	pairs := make([]pair, 0, s.NNZ()/2+s.Rows)
	for i := 0; i < s.Rows; i++ {
		for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
			if j := s.Indices[k]; j >= i {
				pairs = append(pairs, pair{i, j, s.Value(k)})
			}
		}
	}
	return pairs
}

// greedy visits pairs in the given order and keeps a pair when both
// endpoints have capacity left (d each; a self-loop uses one unit); kept
// pairs are stored in both directions, with their values when weighted.
func greedy(n int, pairs []pair, d int, weighted bool) *graphs.CSR {
	d = max(d, 0)
	capLeft := make([]int, n)
	for i := range capLeft {
		capLeft[i] = d
	}
	var src, dst []int
	var vals []float64
	if weighted {
		vals = make([]float64, 0, len(pairs))
	}
	for _, p := range pairs {
		if p.i == p.j {
			if capLeft[p.i] >= 1 {
				capLeft[p.i]--
				src, dst = append(src, p.i), append(dst, p.i)
				if weighted {
					vals = append(vals, p.v)
				}
			}
			continue
		}
		if capLeft[p.i] >= 1 && capLeft[p.j] >= 1 {
			capLeft[p.i]--
			capLeft[p.j]--
			src, dst = append(src, p.i, p.j), append(dst, p.j, p.i)
			if weighted {
				vals = append(vals, p.v, p.v)
			}
		}
	}
	return graphs.FromCOO(n, n, src, dst, vals)
}
