package nn

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
	// either, for an eitherRows value: the leaves it derives from, whose
	// layout (batch rows or pooled examples) the first join fixes.
	either []*G.Node
	// leaf, for a value that reads no batch row: it depends on a
	// non-parameter leaf, which a fill may write (CrossEntropy.SetRows
	// writes the chunk's row count into Count): such a value may not
	// reach the batch rows at all, whole or by row.
	leaf string
}

// RowReads is a fixed row selection on a training path (GatherRows of
// batch rows, and the element-wise ops joining its rows): row r of the
// node reads the batch rows Of[r]. dp/dpnn checks with CheckRowReads at
// every step that each Of[r] lies within one example.
type RowReads struct {
	Op string
	Of [][]int
}

// rowChecker is CheckRowLocal's state: the model's parameters, and the
// batch inputs found so far (rl's lists; each matrix once).
type rowChecker struct {
	// layout is the layout each leaf with both the batch's and the pool's
	// row count was joined with first (batchRows or poolRows): one fill
	// writes it one way, so a later join with the other layout is refused
	// (the sixth outside audit of issue 38: one such leaf read by batch row
	// before the pool and by example after it, Δ 7·C).
	layout map[*G.Node]rowClass
	// product is the node of each constant product's matrix (a sparse
	// rule input's layout is checked through it)
	product map[*Sparse]*G.Node
	params  map[*G.Node]bool
	rl      *RowLocal
	seen    map[*Sparse]bool // every matrix in rl.sparse or rl.mixers
	leaf    map[*G.Node]bool // every node in rl.leaves
	dropped map[*Sparse]bool // the matrices with a sparse dropout
}

// wholeOp refuses an op on values that hold no batch rows (op n, whose
// inputs hold none) unless it is deterministic: one of gorgonia's own ops
// other than its random ones, or one of nn's other than its noise and
// dropout masks. Such a value is computed once per run of the graph, and
// DP-SGD runs the graph once per chunk of a step, so anything random in
// it is drawn once per chunk and shared by every example of the chunk —
// and which examples share a chunk depends on the layout, which a removed
// example shifts. The eleventh outside audit of issue 38 built it with
// dropout masks (DropConnect on W, a mask on a constant: Δ up to 3.85·C
// for a declared C with a chunk of two rows), the twelfth with noise
// (nn.AddNoise, gorgonia's GaussianRandomNode, normalised into a random
// direction: 5.3·C, gated by the data so that the layout check's
// synthetic data never met it). An op of another package is refused too:
// nothing tells whether it draws. Masks and noise over batch rows draw per
// row and are classed by rowLocalOp (a dropout mask there is fine; noise
// is refused as an op nn does not know).
func (ck *rowChecker) wholeOp(n *G.Node, in []*G.Node, op G.Op, rm RowMixer, isMixer bool, rows, pool int) error {
	why := ""
	over := "its inputs"
	if len(in) > 0 {
		over = in[0].Name()
	}
	switch op.(type) {
	case maskOp:
		why = "a dropout mask over " + over + ", which holds no batch rows (a parameter or a constant)"
	case *dropSpMMOp:
		why = "a dropout mask over " + over + ", which holds no batch rows"
	case gaussianNoiseOp, *gaussianNoiseOp:
		why = "Gaussian noise to " + over + ", which holds no batch rows"
	default:
		switch t := gorgoniaType(op); {
		case t == "randomOp" || t == "dropoutOp" || t == "dropoutDiffOp":
			why = "gorgonia's random " + t + " (to values without batch rows)"
		case t != "" && !pureGorgonia[t]:
			return fmt.Errorf("nn: %s (gorgonia's %s) on the DP-SGD training path, on values without batch rows, is not one of the gorgonia ops accepted there (deterministic ops that read only their inputs: element-wise, products, reshapes, slices, concatenations, sums, transposes, constants); build it from those or from nn's ops", op, t)
		case t != "":
		case isMixer:
			if a := rm.MixedRows(); a != nil && ck.dropped[a] && byRows(n, rows, pool).c == constRows {
				why = "a sparse dropout over " + a.Name + ", whose rows are not the batch's"
			}
		case !nnOp(op):
			return fmt.Errorf("nn: %s (%T) on the DP-SGD training path is an op of neither nn nor gorgonia, on values without batch rows: nothing tells whether it draws randomness, which would be drawn once per chunk and shared by the chunk's examples (their grouping follows the layout, which a removed example shifts); build it from nn's or gorgonia's ops", op, op)
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("nn: %s on the DP-SGD training path applies %s: it is drawn once per run and DP-SGD runs the graph once per chunk, so every example of a chunk would share it, and which examples share a chunk depends on the layout (a removed example shifts it); drop out batch rows (activations or batch features) instead, and add no noise of your own on the training path", op, why)
}

// pureGorgonia are the gorgonia op types accepted on values without batch
// rows on a DP-SGD training path: deterministic, and reading only their
// inputs (the thirteenth outside audit of issue 38: gorgonia's BatchNorm
// read the machine's reused buffer instead of its input; an allow-list,
// not a deny-list of the ops found so far).
var pureGorgonia = map[string]bool{
	"constantScalar": true, "constantTensor": true, "elemBinOp": true, "elemUnaryOp": true, "linAlgBinOp": true,
	"reshapeOp": true, "sliceOp": true, "concatOp": true, "sumOp": true, "transposeOp": true, "repeatOp": true,
}

// nnOp reports whether op is one of nn's own op types.
func nnOp(op G.Op) bool {
	t := reflect.TypeOf(op)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.PkgPath() == reflect.TypeOf(maskOp{}).PkgPath()
}

// fix lays out d's eitherRows leaves as cls, refusing a leaf already laid
// out the other way.
func (ck *rowChecker) fix(d rowDep, cls rowClass, where string) error {
	for _, l := range d.either {
		if was, ok := ck.layout[l]; ok && was != cls {
			return fmt.Errorf("nn: %s on the DP-SGD training path reads %s as %s, and another op reads it as %s: a fill writes it in one layout only, so one of the two reads another example's row; use one leaf for each layout", where, l.Name(), cls, was)
		}
		ck.layout[l] = cls
	}
	return nil
}

// input registers leaf n as a batch input (emptied before every fill),
// laid out as lay says; it reports whether n is new.
func (ck *rowChecker) input(n *G.Node, lay leafLayout) bool {
	if ck.leaf[n] {
		return false
	}
	ck.leaf[n] = true
	ck.rl.leaves = append(ck.rl.leaves, n)
	ck.rl.layouts = append(ck.rl.layouts, lay)
	return true
}

// matrix registers a product's matrix (a constant product's batch data,
// or a square or pooling product over the batch rows) to be emptied
// before every fill.
func (ck *rowChecker) matrix(a *Sparse, constant bool) {
	if a == nil || ck.seen[a] {
		return
	}
	ck.seen[a] = true
	if constant {
		ck.rl.sparse = append(ck.rl.sparse, a)
		ck.rl.pooled = append(ck.rl.pooled, false) // set at the end (CheckRowLocal)
	} else {
		ck.rl.mixers = append(ck.rl.mixers, a)
	}
}

// RowLocal is what CheckRowLocal found on a training path: the fixed row
// selections to check against every batch's groups (Reads), and the
// path's batch inputs — the leaves and sparse matrices laid out by batch
// row (or by pooled example) — which Reset empties before every fill.
type RowLocal struct {
	Reads  []RowReads
	leaves []*G.Node // leaves laid out by row: the batch's, the pool's, or a selection's
	sparse []*Sparse // constant products' matrices with the batch's rows
	// the matrices of the square and pooling products over the batch rows
	mixers []*Sparse
	// layouts says, for each of leaves, how its rows are laid out (a
	// synthetic batch writes them so: Synthetic); pooled, for each of
	// sparse, whether its rows are the pooled examples'
	layouts []leafLayout
	pooled  []bool
	// whole are the parameters and constants on the path, read whole:
	// none may share memory with a batch input (the eighth outside audit
	// of issue 38: a constant built on a batch input's backing array read
	// batch row 0's data into every row, Δ 37.8·C for 1·C)
	whole []*G.Node
}

// backing returns the float64 array behind n's value, nil for another
// kind of value.
func backing(n *G.Node) []float64 {
	switch v := n.Value().(type) {
	case *tensor.Dense:
		if d, ok := v.Data().([]float64); ok {
			return d
		}
	}
	return nil
}

// overlaps reports whether two arrays share memory.
func overlaps(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*8 && b0 < a0+uintptr(len(a))*8
}

// aliases refuses a parameter or constant of the path whose memory is a
// batch input's (a leaf's values or a batch matrix's entries).
func (r *RowLocal) aliases() error {
	var inputs [][]float64
	var names []string
	for _, l := range r.leaves {
		inputs, names = append(inputs, backing(l)), append(names, l.Name())
	}
	for _, list := range [][]*Sparse{r.sparse, r.mixers} {
		for _, s := range list {
			inputs, names = append(inputs, s.A.Data), append(names, s.Name)
		}
	}
	for _, w := range r.whole {
		k := backing(w)
		for i, in := range inputs {
			if overlaps(k, in) {
				return fmt.Errorf("nn: %s on the DP-SGD training path shares memory with the batch input %s: it would hold batch data while read whole by every row; give it its own copy", w.Name(), names[i])
			}
		}
	}
	return nil
}

// Reset empties every batch input of the path: a dense leaf laid out by
// batch row is set to 0 and a sparse batch matrix to no entries. DP-SGD
// over declared examples calls it before every fill, so a batch input the
// fill does not write holds the same (zero) value in every row — never a
// value that depends on a row's position in the batch, which would move
// when another example's removal shifts the layout (the outside audit of
// issue 38 built one: a constant ±1 per row on the loss gave Δ 29·C for a
// declared C). What the fill writes is its own: it must write each row
// with the data of the example laid out there (dpnn.Batch).
func (r *RowLocal) Reset() error {
	for _, n := range r.leaves {
		clear(Values(n))
	}
	// a fresh empty matrix each time: a fill that wrote the last one in
	// place must not leave its entries for the next batch
	for _, list := range [][]*Sparse{r.sparse, r.mixers} {
		for _, s := range list {
			if err := s.Set(&graphs.CSR{Rows: s.A.Rows, Cols: s.A.Cols, Indptr: make([]int, s.A.Rows+1)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Check refuses, after a fill, a batch matrix that is not canonical or
// not finite: Sparse.Set canonicalises and checks what it is given, but it
// keeps the caller's arrays, and a fill may write them in place after Set
// (the seventh outside audit: a NaN or duplicate entries written so).
func (r *RowLocal) Check() error {
	if err := r.aliases(); err != nil {
		return err
	}
	for _, list := range [][]*Sparse{r.sparse, r.mixers} {
		for _, s := range list {
			if !s.A.Canonical() {
				return fmt.Errorf("nn: %s: the fill left rows with unsorted or duplicate columns (written in place after Set?)", s.Name)
			}
			for _, v := range s.A.Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("nn: %s: the fill left a non-finite entry (written in place after Set?)", s.Name)
				}
			}
		}
	}
	return nil
}

// Inputs is the number of batch inputs Reset empties: dense leaves and
// sparse matrices (batch data and the products' matrices).
func (r *RowLocal) Inputs() (dense, sparse int) {
	return len(r.leaves), len(r.sparse) + len(r.mixers)
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
//     softmax/log-softmax, row norms and RowStandardize, x·W and x·W + b, per-row vectors,
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
// More rules keep a row's value a function of the example laid out there
// rather than of its position in the batch, which moves when another
// example is removed (the two outside audits of issue 38 built ±1 weights,
// offsets, labels and products by position, up to Δ 41.6 for a declared
// 1, then a scalar leaf, a selection reading one row twice and a product
// on a rule's input: up to Δ 58.8). A value that holds no batch data (a
// parameter, a constant op, a value computed from leaves of other shapes
// by Reshape, Concat or Slice) may be read only whole — as a weight, a
// broadcast bias, a scalar — never row by row beside batch rows: that is
// refused. A leaf read row by row is a fill input, laid out by those rows;
// any other non-parameter leaf (CrossEntropy's Count, which SetRows sets to
// the chunk's size) may not reach the batch rows at all, whole or by row,
// nor may a value computed from one. Loss row r counts for the example at
// row r, so a selection reaching the loss is checked with row r added (a
// fixed selection that reads one row twice and another not at all weighs
// examples by position). A constant product whose matrix's columns number
// the batch rows (a batch adjacency applied to a parameter) reads the
// parameter's rows by position and is refused. Every batch input — such leaves, leaves
// with the batch's or the pool's rows (probes too), the matrix of a
// constant product with the batch's rows, and the matrix of every square
// or pooling product over the batch rows — is returned for RowLocal.Reset,
// which empties it before every fill, so whatever the fill does not write
// is 0 in every row. A selection of a constant's rows into the batch rows
// by fixed positions, and a BatchNorm evaluation twin, are refused. And
// every per-sample rule's inputs (PerSampleRule.Inputs) are classed too:
// row r of each may read only the example of δ's row r (a selection is
// checked with row r added), and a sparse input must be one of the path's
// batch inputs. (dpnn also refuses any fixed row selection over examples
// of several rows declared by Start: whether it stays within one example
// would depend on the examples' sizes.)
//
// Assumed, not checked: that the fill keeps to that layout — it writes
// each batch row with the data of the example laid out there (dpnn.Batch),
// not another example's and not a value chosen by the row's position (a
// row of Batch.Adj written as features is one: its columns are batch
// positions; Batch.Adj is for the path's square products, through
// Neighbours.Set), and it writes batch data into no leaf of another shape
// (one read whole, e.g. as a product's weight, is not seen).
func (m *Model) CheckRowLocal(out *G.Node, rows, pool int) (*RowLocal, error) {
	rl := &RowLocal{}
	ck := &rowChecker{params: map[*G.Node]bool{}, rl: rl, seen: map[*Sparse]bool{}, leaf: map[*G.Node]bool{}, layout: map[*G.Node]rowClass{}, product: map[*Sparse]*G.Node{}, dropped: map[*Sparse]bool{}}
	params := ck.params
	for _, p := range m.Params {
		params[p.Node] = true
	}
	sparseSeen := map[*Sparse]bool{} // the constant products' matrices: a rule's sparse inputs
	for _, d := range m.modal {
		if d, ok := d.(*sparseDropout); ok {
			ck.dropped[d.s] = true
		}
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
		if n.Op() == nil && params[n] || n.Op() != nil && len(in) == 0 {
			rl.whole = append(rl.whole, n) // a parameter or a constant: checked not to share a batch input's memory
		}
		switch {
		case n.Op() == nil:
			if !params[n] {
				if c = byRows(n, rows, pool); c.c != constRows {
					ck.input(n, leafLayout{pool: c.c == poolRows}) // a batch input (a probe too): reset before every fill
					if c.c == eitherRows {
						c.either = []*G.Node{n}
					}
				} else {
					c.leaf = n.Name() // fine as a fill input read by row (rowWise), refused otherwise
				}
			}
		case !anyRows:
			for _, d := range cs {
				if d.leaf != "" {
					c.leaf = d.leaf
				}
			}
			op := n.Op()
			rm, isMixer := mixer(op)
			_, isGather := op.(*gatherOp)
			if d, ok := op.(*dropSpMMOp); ok {
				d.uncache() // its operand may be a leaf (DropoutSpMM's copy: uncache)
			}
			if err := ck.wholeOp(n, in, op, rm, isMixer, rows, pool); err != nil {
				return rowDep{}, err
			}
			switch {
			case isMixer: // a batch matrix times a constant (the refusal below names no sizes: the batch's rows depend on Examples.MaxRows)
				if a := rm.MixedRows(); a != nil && a.A != nil && byRows(n, rows, pool).c != constRows && (a.A.Cols == rows || pool > 0 && a.A.Cols == pool) {
					return rowDep{}, fmt.Errorf("nn: %s on the DP-SGD training path applies a matrix whose columns number the batch's rows to %s, which holds no batch data: row r would read the operand's rows by batch position (a removed example shifts the layout); apply a batch adjacency to batch rows; if the columns are features or ids that only happen to number the batch rows, give the batch one row more of capacity", op, in[0].Name())
				}
				leaf := c.leaf
				if c = byRows(n, rows, pool); c.c == constRows {
					c.leaf = leaf // a product of other rows keeps its operand's mark
				} else {
					if leaf != "" {
						// the operand depends on a leaf a fill may write (the
						// seventh outside audit: CrossEntropy's Count through
						// a sparse product reached every row, Δ 59·C)
						return rowDep{}, fmt.Errorf("nn: %s on the DP-SGD training path applies the batch's matrix to %s, which depends on the leaf %s: a fill may write data there and every row would read it; use a parameter or a constant", op, in[0].Name(), leaf)
					}
					if c.c == eitherRows {
						c.either = []*G.Node{n} // its layout is fixed at its first join, like a leaf's
					}
					if a := rm.MixedRows(); a != nil {
						sparseSeen[a] = true
						ck.product[a] = n
						ck.matrix(a, true)
					}
				}
			case isGather:
				if byRows(n, rows, pool).c != constRows {
					return rowDep{}, fmt.Errorf("nn: %s on the DP-SGD training path selects rows of %s, which holds no batch data, into the batch's rows by fixed positions: row r would hold the same value whichever example is laid out there, and a removed example shifts the layout; load each example's rows in the fill instead", op, in[0].Name())
				}
			}
		default:
			c, err = ck.rowLocalOp(n, in, cs, rows, pool)
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
	// Loss row r counts for the example laid out at row r (its group), so
	// it may read only that example's rows: a selection reaching the loss
	// is checked with row r added (a fixed selection that reads one row
	// twice and another not at all weighs examples by position), and a
	// value that depends on a leaf of another shape may not be the loss.
	lossRows := func(part *G.Node, offset int) error {
		d, err := visit(part)
		if err != nil {
			return err
		}
		if d.c == constRows && d.leaf != "" {
			return fmt.Errorf("nn: the per-row loss %s depends on the leaf %s, which holds no batch rows: a fill may write data there and every example would read it", part.Name(), d.leaf)
		}
		if d.of != nil {
			of := make([][]int, len(d.of))
			for r, js := range d.of {
				of[r] = append(slices.Clone(js), offset+r)
			}
			reads = append(reads, RowReads{Op: fmt.Sprintf("the per-row loss (rows selected by %s)", d.via), Of: of})
		}
		return nil
	}
	if gorgoniaType(out.Op()) == "concatOp" && len(out.Shape()) == 1 {
		// The per-row loss as a concatenation of loss vectors (a pool's
		// losses, then padding zeros): only its sum is used, so each part
		// is checked on its own, its rows at their offset.
		offset := 0
		for _, c := range children(m.G, out) {
			if len(c.Shape()) != 1 {
				return nil, fmt.Errorf("nn: the per-row loss %s concatenates %v, not a vector", out.Name(), c.Shape())
			}
			if err := lossRows(c, offset); err != nil {
				return nil, err
			}
			offset += c.Shape()[0]
		}
	} else if err := lossRows(out, 0); err != nil {
		return nil, err
	}
	// What the per-sample rules read besides δ: each rule pairs row r of
	// its inputs with row r of δ, which belongs to row r's example, so an
	// input's row r may read only that example's rows (a selection is
	// checked with row r itself added) and a sparse input must be one of
	// the path's batch inputs (emptied before every fill, written by it).
	// A rule's rows are grouped by the batch layout (its examples' rows):
	// one after a pooling product, whose rows are the pooled examples, would
	// be grouped by the wrong layout (the fifth outside audit: a head after
	// the pool with PoolRows equal to the batch rows, Δ (n/2 − 2)·C).
	output := map[*G.Node]*G.Node{} // a probe's sum with its layer output
	for _, n := range m.G.AllNodes() {
		if _, ok := n.Op().(addOp); ok {
			for _, c := range children(m.G, n) {
				output[c] = n
			}
		}
	}
	for _, rec := range m.records {
		dense, sp := rec.Rule.Inputs()
		probe := byRows(rec.Probe, rows, pool)
		if y := output[rec.Probe]; y != nil && pool > 0 {
			d, err := visit(y)
			if err != nil {
				return nil, err
			}
			if d.c == poolRows {
				return nil, fmt.Errorf("nn: the %s rule of %s is on the pooled examples' rows (after the pooling product): per-sample rules group rows by the batch layout, so a parameter after the pool is not supported; put it before the pool", rec.Rule, rec.Param.Name)
			}
		}
		for _, a := range dense {
			d, err := visit(a)
			if err != nil {
				return nil, err
			}
			if s := a.Shape(); len(s) == 0 || s[0] != rec.Probe.Shape()[0] {
				return nil, fmt.Errorf("nn: the %s rule of %s reads %s of shape %v against its output's %v rows", rec.Rule, rec.Param.Name, a.Name(), a.Shape(), rec.Probe.Shape()[0])
			}
			if err := ck.fix(d, batchRows, fmt.Sprintf("the %s rule of %s", rec.Rule, rec.Param.Name)); err != nil {
				return nil, err
			}
			switch {
			case d.c == poolRows:
				// rules group their rows by the batch layout (the sixth
				// outside audit: a rule naming the pooled rows as its input
				// when the pool has the batch's row count, Δ 9·C)
				return nil, fmt.Errorf("nn: the %s rule of %s reads %s, the pooled examples' rows: per-sample rules group rows by the batch layout, so a rule's inputs must be batch rows", rec.Rule, rec.Param.Name, a.Name())
			case d.c == constRows:
				return nil, fmt.Errorf("nn: the %s rule of %s reads %s, which holds no batch data, row by row against the batch's rows: a rule's inputs must be the layer's batch rows", rec.Rule, rec.Param.Name, a.Name())
			case d.c != probe.c && d.c != eitherRows && probe.c != eitherRows:
				return nil, fmt.Errorf("nn: the %s rule of %s reads %s (%s) against an output of %s", rec.Rule, rec.Param.Name, a.Name(), d.c, probe.c)
			case d.of != nil:
				reads = append(reads, RowReads{Op: fmt.Sprintf("the %s rule of %s (its input %s, rows selected by %s)", rec.Rule, rec.Param.Name, a.Name(), d.via), Of: union(d.of, nil, len(d.of))})
			}
		}
		for _, a := range sp {
			if !sparseSeen[a] {
				return nil, fmt.Errorf("nn: the %s rule of %s reads the sparse matrix %s, which is not a batch input of the training path (a product on the path to the loss): its rows would not be the examples'", rec.Rule, rec.Param.Name, a.Name)
			}
			d := class[ck.product[a]]
			if d.c == poolRows {
				return nil, fmt.Errorf("nn: the %s rule of %s reads the sparse matrix %s laid out by pooled example: per-sample rules group rows by the batch layout", rec.Rule, rec.Param.Name, a.Name)
			}
			if err := ck.fix(d, batchRows, fmt.Sprintf("the %s rule of %s", rec.Rule, rec.Param.Name)); err != nil {
				return nil, err
			}
		}
	}
	rl.Reads = reads
	ck.settle(class, m.records, rows, pool)
	if err := rl.aliases(); err != nil {
		return nil, err
	}
	return rl, nil
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
func (ck *rowChecker) rowLocalOp(n *G.Node, in []*G.Node, cs []rowDep, rows, pool int) (rowDep, error) {
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
		var either []*G.Node
		var joined []int // the leaves registered here, laid out as c (below)
		for k, d := range cs {
			if d.c == eitherRows {
				either = append(either, d.either...)
			}
			if d.c == constRows {
				if !row[k] {
					if d.leaf != "" || in[k].Op() == nil && !ck.params[in[k]] {
						// a leaf other than a parameter, read whole by every
						// row: whatever a fill writes there (a chunk's size)
						// reaches every example's gradient
						return refuse(fmt.Sprintf("reads input %d (%s), which depends on the leaf %s, whole beside the batch's rows: a fill may write data there (CrossEntropy's Count is the chunk's size) and every example would read it; use a parameter or a constant", k, in[k].Name(), orName(d.leaf, in[k].Name())))
					}
					continue // read whole (a weight, a bias, a scalar constant)
				}
				// Read row by row beside batch data: row r must be the data
				// of the example laid out at row r. A leaf is a fill input,
				// laid out by these rows and emptied before every fill;
				// anything else (a parameter, a constant op, a value
				// computed from leaves of other shapes) holds a value per
				// position, not per example, and a removed example shifts
				// the layout under it.
				if in[k].Op() != nil || ck.params[in[k]] {
					return refuse(fmt.Sprintf("reads input %d (%s), which holds no batch data, row by row beside the batch's rows: row r would depend on its position in the batch, and a removed example shifts the layout (write per-row data in the fill, as a leaf)", k, in[k].Name()))
				}
				if s := in[k].Shape(); len(s) == 0 || s[0] != outRows {
					return refuse(fmt.Sprintf("reads input %d (%s) of shape %v into %d rows", k, in[k].Name(), in[k].Shape(), outRows))
				}
				if ck.input(in[k], leafLayout{}) {
					joined = append(joined, len(ck.rl.layouts)-1)
				}
				continue
			}
			if !row[k] {
				return refuse(fmt.Sprintf("reads input %d (%s, which holds %s) whole", k, in[k].Name(), d.c))
			}
			if s := in[k].Shape(); len(s) == 0 || s[0] != outRows {
				return refuse(fmt.Sprintf("reads input %d (%s) of shape %v into %d rows", k, in[k].Name(), in[k].Shape(), outRows))
			}
			switch {
			case c.c == constRows || c.c == eitherRows:
				c = d
			case d.c == eitherRows:
			case c.c != d.c:
				return refuse("joins the batch rows with the pooled examples' rows")
			case c.c == batchRows && (c.of != nil || d.of != nil):
				via := c.via
				if d.via != "" && d.via != via {
					via = strings.TrimPrefix(via+", "+d.via, ", ")
				}
				c = rowDep{c: batchRows, of: union(c.of, d.of, outRows), via: via}
			}
		}
		if c.c == eitherRows {
			c.either = either
		} else if err := ck.fix(rowDep{either: either}, c.c, op.String()); err != nil {
			return rowDep{}, err
		}
		for _, i := range joined { // row r goes with row r of the join
			ck.rl.layouts[i] = leafLayout{pool: c.c == poolRows, of: c.of, either: c.either}
		}
		return c, nil
	}
	if rm, ok := mixer(op); ok {
		if d, ok := op.(*dropSpMMOp); ok {
			d.uncache() // its input is a batch input, rewritten by every fill
		}
		s := rm.MixedRows()
		if s == nil || s.A == nil || len(in) != 1 || !cs[0].identity() {
			return refuse(fmt.Sprintf("applies its matrix to %s", cs[0].c))
		}
		ck.matrix(s, false)                                           // written by the fill, emptied before it
		if err := ck.fix(cs[0], batchRows, op.String()); err != nil { // a product reads batch rows
			return rowDep{}, err
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
	case affineEvalOp:
		// A BatchNorm evaluation twin is row-wise only while it holds
		// running statistics, which can be loaded or cleared after the
		// path is checked; before any were observed it takes the batch's
		// column statistics, which read every row (the outside audit of
		// issue 38 put an unloaded twin on a DP-SGD path: Δ 0.086 for a
		// declared 0.02). Refused as BatchNorm is.
		return refuse("is a BatchNorm evaluation twin, which may normalise with the batch's statistics")
	case *standardizeOp:
		// RowStandardize normalises each row by its own mean and spread;
		// BatchStandardize by the batch's column statistics
		if o.axis == 1 {
			return rowWise([]bool{true})
		}
		return refuse("standardises with the batch's column statistics")
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
	switch gorgoniaType(op) {
	case "elemBinOp", "elemUnaryOp":
		// element-wise; an operand of another shape is broadcast (read
		// whole)
		same := make([]bool, len(in))
		for k := range in {
			same[k] = in[k].Shape().Eq(n.Shape())
		}
		return rowWise(same)
	case "sumOp":
		// a sum along the columns of a matrix only
		along := reflect.ValueOf(op).FieldByName("along")
		if s := in[0].Shape(); len(s) == 2 && along.Len() == 1 && along.Index(0).Int() == 1 {
			return rowWise([]bool{true})
		}
		return refuse("sums over rows")
	case "reshapeOp":
		// row-major: a reshape that keeps the rows keeps each row's entries
		if s := in[0].Shape(); len(s) > 0 && s[0] == outRows {
			return rowWise([]bool{true})
		}
		return refuse("reshapes across rows")
	}
	return refuse(fmt.Sprintf("is not a row-local op nn knows (%T)", op))
}

// gorgoniaType is the name of op's type when it is one of gorgonia's own
// (by import path, not by the printed name, which a package of an
// author's that is also called gorgonia could imitate: the eighth outside
// audit of issue 38), "" otherwise.
func gorgoniaType(op G.Op) string {
	t := reflect.TypeOf(op)
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() != "gorgonia.org/gorgonia" {
		return ""
	}
	return t.Name()
}

// mixer returns op's matrix when op is one of nn's own row-mixing
// products (SpMM, SpMMT, SpMax, DropoutSpMM): RowMixer is an exported
// interface, and an op of an author's implementing it could name any
// matrix while mixing rows otherwise (the eighth outside audit: an op
// summing every row that reported an empty matrix, Δ 30·C for 2·C).
func mixer(op G.Op) (RowMixer, bool) {
	switch o := op.(type) {
	case *spmmOp:
		return o, true
	case *spMaxOp:
		return o, true
	case *dropSpMMOp:
		return o, true
	}
	return nil, false
}

func orName(a, b string) string {
	if a != "" {
		return a
	}
	return b
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

// leafLayout is how a batch input leaf's rows are laid out: row r is
// batch row r's (neither set), pooled example r's (pool), or goes with
// the batch rows of[r] (a leaf read beside a fixed row selection). A
// leaf with both the batch's and the pool's row count takes the layout
// its first join fixed (either: the leaves whose layout it shares). A
// probe is zero whatever the batch.
type leafLayout struct {
	pool, probe bool
	of          [][]int
	either      []*G.Node
}

// settle resolves the layouts left open while the path was walked: the
// leaves laid out either way (by the layout their first join fixed; by
// batch row when nothing fixed it), the constant products' matrices (as
// their product's rows), and the probes.
func (ck *rowChecker) settle(class map[*G.Node]rowDep, records []PerSample, rows, pool int) {
	pooled := func(either []*G.Node) bool {
		for _, l := range either {
			if ck.layout[l] == poolRows {
				return true
			}
		}
		return false
	}
	probe := map[*G.Node]bool{}
	for _, r := range records {
		probe[r.Probe] = true
	}
	rl := ck.rl
	for i, l := range rl.leaves {
		lay := &rl.layouts[i]
		if byRows(l, rows, pool).c == eitherRows && lay.of == nil && len(lay.either) == 0 {
			lay.either = []*G.Node{l}
		}
		if len(lay.either) > 0 {
			lay.pool = pooled(lay.either)
		}
		lay.probe = probe[l]
	}
	for i, a := range rl.sparse {
		n := ck.product[a]
		if n == nil {
			continue
		}
		d := class[n]
		rl.pooled[i] = d.c == poolRows || d.c == eitherRows && pooled(append(d.either, n))
	}
}
