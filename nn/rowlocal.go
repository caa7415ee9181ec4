package nn

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
)

// rowClass is what a node's row i may depend on, on a DP-SGD training path
// over declared examples (CheckRowLocal).
type rowClass int

const (
	// constRows: nothing of the batch (a parameter, a constant whose first
	// dimension is neither the batch rows nor the pool rows, or an op of
	// such values only).
	constRows rowClass = iota
	// batchRows: row i depends only on batch row i (and on constRows
	// values read whole); the node has the batch's rows.
	batchRows
	// poolRows: row k depends only on batch example k (a pooling
	// product's output, nn.CheckPools); the node has the pool's rows.
	poolRows
	// eitherRows: a leaf whose first dimension is both the batch rows and
	// the pool rows: laid out as whatever it is joined with.
	eitherRows
)

// rowDep is a node's class; for batchRows, of (when not nil) says that
// row r reads the batch rows of[r] (through fixed GatherRows), nil: row r
// reads batch row r.
type rowDep struct {
	c   rowClass
	of  [][]int
	via string // the GatherRows ops that selected of's rows
}

// RowReads is a fixed row selection on a training path (GatherRows of
// batch rows, and the element-wise ops joining its rows): row r of the
// node reads the batch rows Of[r]. dp/dpnn checks with CheckRowReads at
// every step that each Of[r] lies within one example.
type RowReads struct {
	Op string
	Of [][]int
}

func (c rowClass) String() string {
	switch c {
	case batchRows:
		return "the batch rows"
	case poolRows:
		return "the pooled examples' rows"
	}
	return "no batch row"
}

// CheckRowLocal returns an error naming the op when the training path from
// the batch inputs to out (the per-row loss) has an op that is neither
// row-local nor a row-mixing product of a checked shape; otherwise it
// returns the path's fixed row selections (GatherRows of batch rows), which
// the caller checks against every batch's groups with CheckRowReads. rows
// is the number of batch rows, pool the number of a pooling product's
// output rows (one per batch example; 0: the examples are not pooled).
// dp/dpnn calls it for every DP-SGD construction over declared Examples.
//
// It is a whitelist over nn's op types (the ops nn's machine runs): every
// node among out's ancestors gets a class —
//   - a leaf: a parameter reads no batch row; any other leaf whose first
//     dimension is rows holds batch rows (row i = batch row i), one whose
//     first dimension is pool holds pooled rows (row k = example k), one
//     whose first dimension is both is laid out as what it is joined with,
//     any other is a constant not indexed by the batch;
//   - a row-wise op (nn's rowKernel ops: activations, row-wise
//     softmax/log-softmax, row norms, x·W and x·W + b, per-row vectors,
//     column selections and concatenations, dropout masks), nn's Add,
//     ScaleRows, RowSums and NLLRows, gorgonia's element-wise ops, its Sum
//     along the columns of a matrix and a Reshape that keeps the rows:
//     its row inputs must all be of one class (or read no batch row) and
//     have its rows, its whole inputs (a weight, a bias, a broadcast
//     operand) must read no batch row; the output has the row inputs'
//     class (the union of their row selections);
//   - a row-mixing product (SpMM, SpMMT, SpMax, DropoutSpMM: RowMixer) of
//     a plain batch-rows input: its matrix must be rows × rows (checked at
//     every step by CheckBlocks: block-diagonal over the examples) or
//     pool × rows, not transposed (checked by CheckPools: output row k
//     reads only example k's rows); the output has batch rows, or pooled
//     rows for a pool (and for a square product when pool = rows, which
//     dpnn checks as a pool). A product of a constant (a sparse feature
//     batch times a weight) has the class its row count names, as a leaf;
//   - GatherRows of batch rows: row r reads the batch rows its index
//     names (a row selection, checked at every step by CheckRowReads:
//     each row of it, and of every op joining it, reads one example's
//     rows); GatherRows of a constant is classed as a leaf by its rows;
//   - anything else — a product whose right operand (or a transposed
//     left operand) reads batch rows, a gather over pooled rows, a scatter,
//     a sum or column sum over rows, a product chained onto a pool or onto
//     a row selection, an op joining batch rows with pooled rows, any op
//     type not named here — is refused when an input reads batch rows, and
//     reads no batch row when none does.
//
// The per-row loss may be a concatenation of loss vectors (a pool's
// losses, then padding zeros): only its sum is differentiated, so each
// part is classed on its own.
//
// Claim: if CheckRowLocal accepts out, and for a batch every checked
// product passes CheckBlocks/CheckPools and every returned selection
// passes CheckRowReads against the batch's groups, then for every fill
// that writes batch data only into the rows of leaves laid out by batch
// row (first dimension rows) or by example (first dimension pool, or the
// rows of the vector it is joined with), into the rows of ops' row-indexed
// state and into the checked products' matrices, each row of every node on
// the path reads the data of one example only (plus constants). Proof: by
// induction over the ancestors in topological order; each rule reads, for
// output row i, only row i of inputs of its class and whole inputs that
// read no batch row; a checked square product's row i reads rows of
// row i's example, a pool's row k rows of example k, and a selection's row
// r the rows Of[r], which CheckRowReads requires to lie in one example.
// So the loss Σ_i ℓ_i splits as Σ_k L_k with L_k a function of example k
// alone, and the gradient reaching a probe row of example k (through the
// adjoints: row-local ops, the transposed checked products, a selection's
// scatter back to rows of the same example) is ∇L_k there: the ghost
// norms and the clipped sum see separate examples, and one example's
// change moves only its own clipped contribution (norm ≤ C).
//
// Assumed, not checked: that the fill keeps to that layout (a fill that
// writes batch data into a leaf of another shape that is then read whole,
// e.g. as a product's weight, is not seen).
func (m *Model) CheckRowLocal(out *G.Node, rows, pool int) ([]RowReads, error) {
	params := map[*G.Node]bool{}
	for _, p := range m.Params {
		params[p.Node] = true
	}
	class := map[*G.Node]rowDep{}
	var reads []RowReads
	var visit func(n *G.Node) (rowDep, error)
	visit = func(n *G.Node) (rowDep, error) {
		if c, ok := class[n]; ok {
			return c, nil
		}
		in := children(m.G, n)
		cs := make([]rowDep, len(in))
		anyRows := false
		for k, c := range in {
			ck, err := visit(c)
			if err != nil {
				return rowDep{}, err
			}
			cs[k] = ck
			anyRows = anyRows || ck.c != constRows
		}
		var c rowDep
		var err error
		switch {
		case n.Op() == nil:
			if !params[n] {
				c = byRows(n, rows, pool)
			}
		case !anyRows:
			switch n.Op().(type) {
			case RowMixer, *gatherOp: // a batch matrix times a constant
				c = byRows(n, rows, pool)
			}
		default:
			c, err = rowLocalOp(n, in, cs, rows, pool)
		}
		if err != nil {
			return rowDep{}, err
		}
		if c.of != nil {
			reads = append(reads, RowReads{Op: fmt.Sprintf("%s (rows selected by %s)", n.Op(), c.via), Of: c.of})
		}
		class[n] = c
		return c, nil
	}
	if reflect.TypeOf(out.Op()).String() == "gorgonia.concatOp" && len(out.Shape()) == 1 {
		// The per-row loss as a concatenation of loss vectors (a pool's
		// losses, then padding zeros): only its sum is used, so each part
		// is checked on its own.
		for _, c := range children(m.G, out) {
			if len(c.Shape()) != 1 {
				return nil, fmt.Errorf("nn: the per-row loss %s concatenates %v, not a vector", out.Name(), c.Shape())
			}
			if _, err := visit(c); err != nil {
				return nil, err
			}
		}
		return reads, nil
	}
	_, err := visit(out)
	return reads, err
}

// CheckRowReads returns an error naming the op and the two examples when
// a row of one of the fixed row selections reads batch rows of two
// examples (a padding row, Of = −1, counts as its own), nil when each row
// reads within one example. name is as for CheckBlocks.
func CheckRowReads(reads []RowReads, groups *RowGroups, name func(k int) string) error {
	label := exampleLabel(name)
	of := groups.Of
	for _, rd := range reads {
		for r, js := range rd.Of {
			for _, j := range js {
				if j < 0 || j >= len(of) {
					return fmt.Errorf("nn: %s reads row %d, the batch has %d rows", rd.Op, j, len(of))
				}
				if of[j] != of[js[0]] {
					return fmt.Errorf("nn: %s on the DP-SGD training path joins row %d (%s) with row %d (%s) in its row %d: a row may read only one example's rows, or one example's clipped gradient would carry another's",
						rd.Op, js[0], label(of[js[0]]), j, label(of[j]), r)
				}
			}
		}
	}
	return nil
}

// byRows classes a value that may hold batch data by its first dimension.
func byRows(n *G.Node, rows, pool int) rowDep {
	s := n.Shape()
	if len(s) == 0 || n.IsScalar() {
		return rowDep{}
	}
	switch {
	case s[0] == rows && pool == rows:
		return rowDep{c: eitherRows}
	case s[0] == rows:
		return rowDep{c: batchRows}
	case pool > 0 && s[0] == pool:
		return rowDep{c: poolRows}
	}
	return rowDep{}
}

// identity reports whether d reads batch row r in row r (a plain batch
// value, or a leaf laid out either way).
func (d rowDep) identity() bool { return d.c == eitherRows || d.c == batchRows && d.of == nil }

// rowLocalOp classes op node n, some of whose inputs read batch rows, or
// refuses it.
func rowLocalOp(n *G.Node, in []*G.Node, cs []rowDep, rows, pool int) (rowDep, error) {
	op := n.Op()
	refuse := func(why string) (rowDep, error) {
		return rowDep{}, fmt.Errorf("nn: %s on the DP-SGD training path %s: over declared examples every op from the batch inputs to the per-row loss must be row-local (row i of its output reads only row i of its batch-row inputs) or a checked row-mixing product, or one example's clipped gradient could carry another's", op, why)
	}
	outRows := -1
	if s := n.Shape(); len(s) > 0 {
		outRows = s[0]
	}
	// rowWise: row[k] says input k is read row by row.
	rowWise := func(row []bool) (rowDep, error) {
		if len(row) != len(in) {
			return refuse("is not row-wise")
		}
		var c rowDep
		for k, ck := range cs {
			if ck.c == constRows {
				continue
			}
			if !row[k] {
				return refuse(fmt.Sprintf("reads input %d (%s, which holds %s) whole", k, in[k].Name(), ck.c))
			}
			if s := in[k].Shape(); len(s) == 0 || s[0] != outRows {
				return refuse(fmt.Sprintf("reads input %d (%s) of shape %v into %d rows", k, in[k].Name(), in[k].Shape(), outRows))
			}
			switch {
			case c.c == constRows || c.c == eitherRows:
				c = ck
			case ck.c == eitherRows:
			case c.c != ck.c:
				return refuse("joins the batch rows with the pooled examples' rows")
			case c.c == batchRows && (c.of != nil || ck.of != nil):
				via := c.via
				if ck.via != "" && ck.via != via {
					via = strings.TrimPrefix(via+", "+ck.via, ", ")
				}
				c = rowDep{c: batchRows, of: union(c.of, ck.of, outRows), via: via}
			}
		}
		return c, nil
	}
	if rm, ok := op.(RowMixer); ok {
		s := rm.MixedRows()
		if s == nil || s.A == nil || len(in) != 1 || !cs[0].identity() {
			return refuse(fmt.Sprintf("applies its matrix to %s", cs[0].c))
		}
		a := s.A
		switch {
		case a.Rows == rows && a.Cols == rows && outRows == rows:
			if pool == rows {
				return rowDep{c: poolRows}, nil // checked as a pool (dpnn)
			}
			return rowDep{c: batchRows}, nil
		case pool > 0 && a.Rows == pool && a.Cols == rows && outRows == pool:
			if sp, ok := op.(*spmmOp); ok && sp.trans {
				return refuse("is a transposed pooling product")
			}
			return rowDep{c: poolRows}, nil
		}
		return refuse(fmt.Sprintf("is a %d×%d product of %d batch rows: only a square product over the batch rows or a pooling product (%d × %d) is checked", a.Rows, a.Cols, rows, pool, rows))
	}
	switch o := op.(type) {
	case *gatherOp:
		if cs[0].c == poolRows {
			return refuse("selects pooled rows")
		}
		of := make([][]int, len(o.idx))
		for r, i := range o.idx {
			if cs[0].of != nil {
				of[r] = cs[0].of[i]
			} else {
				of[r] = []int{i}
			}
		}
		via := fmt.Sprint(o)
		if cs[0].via != "" {
			via = cs[0].via + ", " + via
		}
		return rowDep{c: batchRows, of: of, via: via}, nil
	case rowKernel:
		row := o.rowInputs()
		if row == nil {
			return refuse("reduces over rows (a transposed product)")
		}
		return rowWise(row)
	case addOp, scaleRowsOp, nllRowsOp:
		return rowWise([]bool{true, true})
	case rowSumOp:
		return rowWise([]bool{true})
	}
	switch reflect.TypeOf(op).String() {
	case "gorgonia.elemBinOp", "gorgonia.elemUnaryOp", "*gorgonia.elemBinOp", "*gorgonia.elemUnaryOp":
		// element-wise; an operand of another shape is broadcast (read
		// whole)
		same := make([]bool, len(in))
		for k := range in {
			same[k] = in[k].Shape().Eq(n.Shape())
		}
		return rowWise(same)
	case "gorgonia.sumOp":
		// a sum along the columns of a matrix only
		along := reflect.ValueOf(op).FieldByName("along")
		if s := in[0].Shape(); len(s) == 2 && along.Len() == 1 && along.Index(0).Int() == 1 {
			return rowWise([]bool{true})
		}
		return refuse("sums over rows")
	case "gorgonia.reshapeOp":
		// row-major: a reshape that keeps the rows keeps each row's entries
		if s := in[0].Shape(); len(s) > 0 && s[0] == outRows {
			return rowWise([]bool{true})
		}
		return refuse("reshapes across rows")
	}
	return refuse(fmt.Sprintf("is not a row-local op nn knows (%T)", op))
}

// union is the row-wise union of two row selections over n rows (nil:
// row r reads batch row r).
func union(a, b [][]int, n int) [][]int {
	out := make([][]int, n)
	for r := range out {
		var ra, rb []int
		if a != nil {
			ra = a[r]
		} else {
			ra = []int{r}
		}
		if b != nil {
			rb = b[r]
		} else {
			rb = []int{r}
		}
		out[r] = append(append([]int(nil), ra...), rb...)
		slices.Sort(out[r])
		out[r] = slices.Compact(out[r])
	}
	return out
}
