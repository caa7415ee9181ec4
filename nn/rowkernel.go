package nn

import (
	"github.com/dpgnn/dpgnn/internal/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rowKernel is implemented by the ops whose output row i is computed from
// row i of each row input alone (and from the whole of their other inputs,
// such as weights): row-wise ops. rows checks the inputs, prepares the
// output as UsePreallocDo would and returns the function that writes the
// output's rows [lo, hi) — reading only those rows of the row inputs —
// with the work of all rows (for parallel.Rows). rows itself reads no
// row input's data, so a machine may prepare a chain of such ops before
// their inputs are computed and then run the chain block of rows by block
// (machine.segment): each block goes through every op of the chain while
// it is in the cache, where op by op every intermediate matrix of a 10⁶-row
// evaluation is written to memory and read back. Rows are independent, so
// the bits are those of running each op over all rows.
//
// A nil function (and no error) means the op cannot run by rows this time
// (e.g. a BatchNorm twin that must first take its batch's statistics); the
// op then runs whole.
type rowKernel interface {
	// rowInputs reports which inputs are row-aligned with the output;
	// nil: the op is never row-wise (e.g. a transposed product).
	rowInputs() []bool
	rows(prealloc G.Value, vals []G.Value) (out *tensor.Dense, work int, f func(lo, hi int), err error)
}

// runRows is a row-wise op's UsePreallocDo, given what its rows returned
// (runRows(op.rows(prealloc, vals))): the loop over every row, split over
// the cores. It takes the results, not the op, so that the op is not
// boxed into an interface (an allocation per call).
func runRows(t *tensor.Dense, work int, f func(lo, hi int), err error) (G.Value, error) {
	if err != nil {
		return nil, err
	}
	n, _ := shape2(t)
	parallel.Rows(n, work, f)
	return t, nil
}
