package degree

import (
	"github.com/dpgnn/dpgnn/graphs"
)

// Excess returns how many rows of a have more than d entries and the
// largest number of entries in a row. Both are private statistics of the
// input (node level: the count of nodes above the bound and the maximum
// degree): they are for tests and diagnostics on data the caller may look
// at, never for a refusal message or a bound (see BoundError).
func Excess(a *graphs.CSR, d int) (count, maxDegree int) {
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
// Callers wrap it with the flag that set the bound and end with Advice
// (Bound.Refusal does both); errors.As finds it.
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

// Advice is the sentence a refusal by a public bound ends with: what the
// user may do, without inviting a bound read off the input.
const Advice = "choose a bound you can state without looking at the data (one read off this input's degrees is not public)"

// CheckRows is the public-bound mode's test of an out-degree bound: nil
// when every row of a (node j's out-neighbours j→i, so the number of
// aggregates j's embedding enters) has at most d entries, otherwise a
// *BoundError that names the bound d and nothing about a. It reads the
// private graph, but only to refuse inputs outside the universe the
// guarantee is stated for (graphs whose out-degrees are at most the public
// bound d): within it the check always passes for G and for every G − v,
// since removing a node never raises a degree, and the refusal's text is
// the same for every input outside it. Bound.Apply makes the same test.
func CheckRows(a *graphs.CSR, d int) error {
	_, err := Bound{Mode: Public, D: d, Kind: Out}.Apply(a, Key{})
	return err
}

// rowsAtMost reports whether every row of a has at most d entries.
func rowsAtMost(a *graphs.CSR, d int) bool {
	for i := 0; i < a.Rows; i++ {
		if a.Indptr[i+1]-a.Indptr[i] > d {
			return false
		}
	}
	return true
}
