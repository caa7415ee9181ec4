package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// RowMixer is implemented by an op whose output row i reads the input rows
// j with A[i,j] ≠ 0 of a sparse matrix A (SpMM, SpMMT, SpMax and
// DropoutSpMM implement it; a custom op that gathers rows should too).
// On a DP-SGD training path such an op keeps examples apart only when A is
// block-diagonal over the batch's row groups; dp/dpnn checks every one it
// finds (Model.RowMixing) against the groups of every batch.
type RowMixer interface {
	// MixedRows is the matrix whose entries (i, j) say output row i
	// reads input row j (for SpMMT, the transpose of its pattern: the
	// same-example relation is symmetric, so checking A suffices).
	MixedRows() *Sparse
}

func (op *spmmOp) MixedRows() *Sparse     { return op.s }
func (op *spMaxOp) MixedRows() *Sparse    { return op.s }
func (op *dropSpMMOp) MixedRows() *Sparse { return op.s }

// Mixing is one row-mixing product on a training path: the op's name (as
// inspect shows it) and its matrix.
type Mixing struct {
	Op string
	S  *Sparse
}

// RowMixing returns the row-mixing products (RowMixer ops) among the
// ancestors of out (the per-row loss of a training path) that mix the
// batch rows: a square rows × rows matrix applied to a node that is not a
// parameter. A product from another row space (a sparse feature matrix
// times a weight, a PPR row gathering all nodes' features) is not listed:
// its rows are the batch rows but its columns are not.
func (m *Model) RowMixing(out *G.Node, rows int) []Mixing {
	return m.mixingProducts(out, rows, rows)
}

// PoolMixing returns the pooling products among the ancestors of out: a
// RowMixer whose matrix is outRows × rows (it reads the batch rows and
// writes one output row per batch example) applied to a node that is not
// a parameter. dp/dpnn checks them with CheckPools when the examples are
// pooled (dpnn.Examples.Weights).
func (m *Model) PoolMixing(out *G.Node, rows, outRows int) []Mixing {
	return m.mixingProducts(out, outRows, rows)
}

// mixingProducts lists the RowMixer products among out's ancestors whose matrix
// is r × c, applied to a node that is not a parameter.
func (m *Model) mixingProducts(out *G.Node, r, c int) []Mixing {
	params := map[*G.Node]bool{}
	for _, p := range m.Params {
		params[p.Node] = true
	}
	seen := map[*G.Node]bool{out: true}
	stack := []*G.Node{out}
	var mix []Mixing
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		in := children(m.G, n)
		if rm, ok := mixer(n.Op()); ok && n.Op() != nil {
			s := rm.MixedRows()
			if s != nil && s.A != nil && s.A.Rows == r && s.A.Cols == c && len(in) > 0 && !params[in[0]] {
				mix = append(mix, Mixing{Op: fmt.Sprint(n.Op()), S: s})
			}
		}
		for _, c := range in {
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return mix
}

// exampleLabel names batch example k for the checks' errors: name(k)
// (nil: "batch example k"), "a padding row" for k < 0.
func exampleLabel(name func(k int) string) func(k int) string {
	return func(k int) string {
		switch {
		case k < 0:
			return "a padding row"
		case name == nil:
			return fmt.Sprintf("batch example %d", k)
		}
		return name(k)
	}
}

// CheckBlocks returns an error naming the op and the two examples when an
// entry (i, j) of one of the products joins rows of different examples of
// groups (a padding row, Of = −1, counts as its own block), nil when every
// product is block-diagonal over the groups. name(k) names batch example k
// in the error (nil: "batch example k"). It makes one pass over each
// matrix's entries; stored zeros are not entries.
func CheckBlocks(mix []Mixing, groups *RowGroups, name func(k int) string) error {
	label := exampleLabel(name)
	of := groups.Of
	for _, mx := range mix {
		a := mx.S.A
		if a.Rows != len(of) || a.Cols != len(of) {
			return fmt.Errorf("nn: %s is %d×%d, the batch has %d rows", mx.Op, a.Rows, a.Cols, len(of))
		}
		for i := 0; i < a.Rows; i++ {
			gi := of[i]
			for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
				j := a.Indices[k]
				if of[j] != gi && a.Value(k) != 0 {
					return fmt.Errorf("nn: %s on the DP-SGD training path joins row %d (%s) with row %d (%s): its adjacency must keep examples apart (block-diagonal over the examples' rows), or one example's clipped gradient would carry another's",
						mx.Op, i, label(gi), j, label(of[j]))
				}
			}
		}
	}
	return nil
}

// CheckPools returns an error naming the op, the output row and the input
// row's example when an entry (k, i) of one of the pooling products (output
// rows × batch rows, PoolMixing) reads a row i that is not in batch example
// k: for k < groups.Samples row i must be in example k, for a padding
// output row k ≥ groups.Samples it must be a padding row (Of = −1). So
// output row k, and every loss term computed from it alone, is a function
// of example k's rows only, and the gradient reaching a row of example k
// comes from example k's output only. nil when every entry keeps to that.
// name is as for CheckBlocks.
func CheckPools(mix []Mixing, groups *RowGroups, name func(k int) string) error {
	label := exampleLabel(name)
	of := groups.Of
	for _, mx := range mix {
		a := mx.S.A
		if a.Cols != len(of) {
			return fmt.Errorf("nn: %s reads %d rows, the batch has %d", mx.Op, a.Cols, len(of))
		}
		for k := 0; k < a.Rows; k++ {
			want := k
			if k >= groups.Samples {
				want = -1
			}
			for q := a.Indptr[k]; q < a.Indptr[k+1]; q++ {
				i := a.Indices[q]
				if of[i] != want && a.Value(q) != 0 {
					return fmt.Errorf("nn: %s on the DP-SGD training path pools row %d (%s) into output row %d (%s): each output row must read only its own example's rows, or one example's clipped gradient would carry another's",
						mx.Op, i, label(of[i]), k, label(want))
				}
			}
		}
	}
	return nil
}
