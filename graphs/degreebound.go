package graphs

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"slices"
)

// Node-level degree bounds: the one place where node-level mechanisms get
// a graph whose nodes reach a bounded number of others.
//
// The neighbouring relation is the raw input: G and G − v, node v removed
// with all its edges, features and label, before any preprocessing. A
// mechanism that aggregates over neighbours (NAP: row i = Σ_{j→i} x_j with
// ‖x_j‖ ≤ 1) has node-level sensitivity √D on the other rows only if v's
// removal changes at most D entries of what is aggregated. Two ways to get
// there, and what each proves:
//
//  1. A public bound (PublicBound, the default of the node-level methods):
//     D is a bound on every node's out-degree that is known without looking
//     at the data, so the universe of inputs is {graphs with out-degrees ≤
//     D}. Removing a node only lowers other nodes' degrees, so the universe
//     is closed under removal, and on it nothing needs to be dropped: v's
//     removal deletes its ≤ D out-entries and nothing else. Sensitivity √D,
//     exactly. An input outside the universe is refused before anything is
//     released (CheckOutDegree).
//
//  2. Sampling a raw graph down to degree D (SampleOutDegree, GAP's and
//     ProGAP's "bound the out-degree by random sampling", kept as the
//     papers' assumption mode). On a graph that already satisfies the bound
//     it is the identity, so case 1's guarantee holds there. On any other
//     graph removing v changes the samples of every node that had kept an
//     edge to v: each of them promotes another out-neighbour, entering a
//     row it did not enter before. Their number is v's in-degree, which
//     nothing bounds, so √D is not a proven sensitivity for raw graphs.
//
// Why not a cleverer projection. Every degree-bounding transform we know
// fails in one of two ways under node removal, and a transform with a
// change bounded in D alone for all raw graphs is not known (see
// docs/privacy.md for the analysis and the counterexamples, which are also
// tests):
//   - per-node choices (keep the D smallest keyed ranks, keep an edge when
//     both endpoints rank it among their D, drop the edges of nodes above a
//     threshold, weight by 1/degree) let v's removal change the choice of
//     each of v's neighbours, and v has unboundedly many;
//   - global greedy choices (visit pairs in a keyed order and keep a pair
//     while both endpoints have capacity: the stable-ordering projection of
//     Day, Li & Lyu, SIGMOD 2016) confine the change to ≤ D freed slots, but
//     each freed slot starts an alternating chain of swapped edges whose
//     length nothing bounds (on a path with D = 1 every edge flips). Day,
//     Li & Lyu bound the change of the degree histogram, which is constant
//     along a chain; the edges themselves are not.
//
// And under a public bound Δ ≥ D a projection to D cannot beat no
// projection: v's own Δ entries cost √Δ, and a projection's knock-on
// changes come on top of what v's removal does to its own entries.

// OutDegreeExcess returns how many rows of a have more than d entries and
// the largest number of entries in a row. Both are private statistics of
// the input (node level: the count of nodes above the bound and the
// maximum degree): they are for tests and diagnostics on data the caller
// may look at, never for a refusal message or a bound (see BoundError).
func OutDegreeExcess(a *CSR, d int) (count, maxDegree int) {
	for i := 0; i < a.Rows; i++ {
		k := a.Indptr[i+1] - a.Indptr[i]
		maxDegree = max(maxDegree, k)
		if k > d {
			count++
		}
	}
	return count, maxDegree
}

// BoundError is the refusal of an input outside the universe a public bound
// states (every node's degree at most D, at least D_min, ...). Its text
// names the bound and nothing about the input: not by how much it is
// exceeded, not the extreme degree, not how many nodes are outside. Those
// are private statistics of the input; printed, they would reach the user
// unaccounted, and a bound chosen from them would be read off the data and
// no longer public, so the guarantee stated for the universe "within the
// bound" would not cover the run (the universe itself would be a function
// of the input). A refusal that only says "outside the stated bound" is a
// function of the input's membership in a universe fixed before the data
// is seen, and within that universe no input and none of its neighbours is
// refused (the universes of this package are closed under the neighbouring
// relation: removing a node or an edge never raises a degree), so the
// refusal releases nothing about inputs the guarantee covers.
//
// Callers wrap it with the flag that set the bound and end with
// BoundAdvice; errors.As finds it.
type BoundError struct {
	// Bound states the universe, e.g. "at most 100 out-neighbours per
	// node". It must be built from public values (the flag's value) only.
	Bound string
}

func (e *BoundError) Error() string {
	return "the input is outside the public bound (" + e.Bound + ")"
}

// OutsideBound returns the refusal of an input outside the public bound
// described by bound (built from public values only, e.g.
// fmt.Sprintf("at least %d neighbours per node", dMin)).
func OutsideBound(bound string) error { return &BoundError{Bound: bound} }

// BoundAdvice is the sentence a refusal by a public bound ends with: what
// the user may do, without inviting a bound read off the input.
const BoundAdvice = "choose a bound you can state without looking at the data (one read off this input's degrees is not public)"

// CheckOutDegree is the public-bound mode's test of the input: nil when
// every row of a (node j's out-neighbours j→i, so the number of aggregates
// j's embedding enters) has at most d entries, otherwise a *BoundError that
// names the bound d and nothing about a. It reads the private graph, but
// only to refuse inputs outside the universe the guarantee is stated for
// (graphs whose out-degrees are at most the public bound d): within it the
// check always passes for G and for every G − v, since removing a node
// never raises a degree, and the refusal's text is the same for every
// input outside it.
func CheckOutDegree(a *CSR, d int) error {
	if d < 0 {
		return fmt.Errorf("graphs: degree bound must be non-negative, got %d", d)
	}
	if !rowsAtMost(a, d) {
		return OutsideBound(fmt.Sprintf("at most %d out-neighbours per node", d))
	}
	return nil
}

// rowsAtMost reports whether every row of a has at most d entries.
func rowsAtMost(a *CSR, d int) bool {
	for i := 0; i < a.Rows; i++ {
		if a.Indptr[i+1]-a.Indptr[i] > d {
			return false
		}
	}
	return true
}

// PairKey is the secret key of a keyed pseudo-random function on node
// pairs. Node-level mechanisms draw it from their noise source, so it is
// reproducible from the seed and unpredictable with secure noise.
type PairKey [32]byte

// pairPRF is AES-256 keyed by a PairKey, evaluated on (row, column).
type pairPRF struct{ block cipher.Block }

func newPairPRF(k PairKey) pairPRF {
	b, err := aes.NewCipher(k[:])
	if err != nil { // a 32-byte key is always valid
		panic(fmt.Sprintf("graphs: AES-256 key: %v", err))
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

// SampleOutDegree returns a copy of A in which every row j keeps at most d
// of its entries: the d out-neighbours i with the smallest keyed rank
// PRF_key(j, i) (rows with at most d entries keep all of them; values are
// kept). It is GAP's and ProGAP's out-degree bounding with its randomness
// drawn per pair from a key instead of from one sequential stream, and it is
// NOT re-symmetrised: the result is read as in-neighbour lists through its
// transpose, as NAP does. A negative d is treated as 0.
//
// Stability under node removal (proven; property-tested). Let A′ be A with
// node v's row and column emptied (node v removed; other ids unchanged).
// Then SampleOutDegree(A′) equals SampleOutDegree(A) with row and column v
// emptied, except that every row j ≠ v that has more than d entries and
// kept v gains exactly one entry, its (d+1)-th smallest-rank out-neighbour
// in A. No other entry appears or disappears. Proof: row j's kept set is a
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
func SampleOutDegree(a *CSR, d int, key PairKey) *CSR {
	d = max(d, 0)
	prf := newPairPRF(key)
	b := newCSRBuilder(a.Rows, a.Cols, min(a.NNZ(), a.Rows*d), a.Data != nil)
	type ranked struct {
		r uint64
		k int
	}
	var buf [16]byte
	var rs []ranked
	for j := 0; j < a.Rows; j++ {
		lo, hi := a.Indptr[j], a.Indptr[j+1]
		if hi-lo <= d {
			b.addRow(a, j, nil)
			b.endRow(nil)
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
			b.add(a.Indices[e.k], a.Value(e.k))
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
