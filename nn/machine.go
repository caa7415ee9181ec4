package nn

import (
	"fmt"
	"slices"
	"time"

	"github.com/dpgnn/dpgnn/internal/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// machine executes a compiled subgraph of a Model's expression graph. It
// replaces gorgonia's TapeMachine, which drops every value on Reset so that
// each op allocates its output again on every step.
//
// The machine keeps one output buffer per slot and reuses it across runs:
// ops that implement gorgonia's UsePreallocDoer and write their whole
// output (every custom op of this package, gorgonia's elementwise binary
// ops and matrix products: isPrealloc) write into it. Elementwise unary gorgonia ops (Neg, Square, Rectify, ...) are
// run in place on a copy of their input in the slot (UnsafeDo). Other ops
// (reductions to scalars, reshapes, constants) run Do and allocate, as
// before.
//
// Slots are shared by liveness, like a register allocator: a node's buffer
// returns to the free list after its last reader has run, unless the node
// is kept (a root of the machine: loss, gradients, outputs). Memory is
// therefore close to the largest set of values alive at once, not the sum
// over every node. Two rules keep sharing safe:
//   - a node's slot is taken before its inputs' slots are released, so an
//     op never writes into a buffer it reads;
//   - the inputs of an op that runs Do are never released: its result may
//     be a view of them (Reshape returns one).
//
// After a run the kept nodes' values are bound to their nodes (Node.Value,
// Values). Intermediate nodes hold no value: their buffers belong to other
// nodes by then.
type machine struct {
	steps []step
	vals  []G.Value // value of every node in order, this run
	slots []*tensor.Dense
	keep  []int // positions of kept op nodes (bound after each run)
	nodes []*G.Node
	// bind, if set, holds values that leaves read instead of their nodes'
	// (a frozen copy of the parameters: Frozen).
	bind []G.Value
	ins  []G.Value // Run's inputs of a step
	// segs are the chains of row-wise steps run block of rows by block
	// (segment); segAt[i] is 1 + the index of the one starting at step i,
	// 0 elsewhere.
	segs  []segment
	segAt []int
	keys  []string // the steps' names for the op-time table (optimes.go)
}

type stepKind uint8

const (
	leaf      stepKind = iota // a node without op: its bound value is read
	prealloc                  // UsePreallocDo into the slot
	unaryCopy                 // copy the input into the slot, then UnsafeDo
	fresh                     // Do: allocates
)

type step struct {
	kind stepKind
	node *G.Node
	op   G.Op
	in   []int // positions of the inputs in vals
	slot int   // slot of the output (prealloc, unaryCopy); -1 otherwise
	size int
	// shape is the node's shape, taken once: Node.Shape clones it on every
	// call (an allocation per step of every run).
	shape tensor.Shape
	// allocs counts the runs in which the step allocated a dense output
	// (Do instead of its buffer): Model.Fallbacks reports them.
	allocs int
}

// newMachine compiles sub (a subgraph of the model's graph) for execution;
// keep are the nodes whose values must survive the run.
func newMachine(sub *G.ExprGraph, keep G.Nodes) (*machine, error) {
	sorted, err := G.Sort(sub)
	if err != nil {
		return nil, fmt.Errorf("nn: sorting graph: %w", err)
	}
	slices.Reverse(sorted)
	sorted = placeReductions(sub, sorted)
	pos := make(map[*G.Node]int, len(sorted))
	for i, n := range sorted {
		pos[n] = i
	}
	kept := make([]bool, len(sorted))
	for _, n := range keep {
		if i, ok := pos[n]; ok {
			kept[i] = true
		}
	}
	mc := &machine{
		steps: make([]step, len(sorted)),
		vals:  make([]G.Value, len(sorted)),
		nodes: sorted,
	}
	// Plan each step's kind, then the last reader of every value.
	last := make([]int, len(sorted))
	pinned := make([]bool, len(sorted))
	for i, n := range sorted {
		s := step{node: n, op: n.Op(), slot: -1}
		kids := children(sub, n)
		for _, c := range kids {
			j, ok := pos[c]
			if !ok {
				return nil, fmt.Errorf("nn: node %v reads %v, which is outside its machine", n, c)
			}
			s.in = append(s.in, j)
			last[j] = i
		}
		switch {
		case s.op == nil:
			s.kind = leaf
		case !denseShape(n):
			s.kind = fresh
		case isPrealloc(s.op):
			s.kind = prealloc
		case isUnaryInPlace(s.op, n, kids):
			s.kind = unaryCopy
		default:
			s.kind = fresh
		}
		if s.kind == fresh {
			for _, j := range s.in {
				pinned[j] = true
			}
		}
		if s.kind == prealloc || s.kind == unaryCopy {
			s.shape = n.Shape()
			s.size = s.shape.TotalSize()
		}
		mc.steps[i] = s
		if kept[i] && s.op != nil {
			mc.keep = append(mc.keep, i)
		}
	}
	// Assign slots in execution order from a free list (by size).
	free := map[int][]int{}
	var sizes []int
	for i := range mc.steps {
		s := &mc.steps[i]
		if s.kind == prealloc || s.kind == unaryCopy {
			if l := free[s.size]; len(l) > 0 && !kept[i] {
				s.slot = l[len(l)-1]
				free[s.size] = l[:len(l)-1]
			} else {
				s.slot = len(sizes)
				sizes = append(sizes, s.size)
			}
		}
		for k, j := range s.in {
			if slices.Contains(s.in[:k], j) {
				continue // read twice (x·x): release once
			}
			in := &mc.steps[j]
			if last[j] == i && !kept[j] && !pinned[j] && in.slot >= 0 {
				free[in.size] = append(free[in.size], in.slot)
			}
		}
	}
	mc.slots = make([]*tensor.Dense, len(sizes))
	mc.planSegments()
	return mc, nil
}

// placeReductions moves each reduction of order (a product with A
// transposed, Aᵀ·B, or column sums: the weight and bias gradients, small
// results of whole matrices) to the earliest place its inputs allow, so
// that the large matrices it reads are released as soon as possible, and
// from there past any run of row-wise ops it would cut, up to its first
// reader: the row-wise ops around a reduction (a backward pass's G·Wᵀ,
// dropout and activation gradients) then form one segment. The other
// nodes keep their order. Both ops are pure functions of their inputs, so
// any order that runs them after their inputs gives the same values.
func placeReductions(g *G.ExprGraph, order []*G.Node) []*G.Node {
	var reds []*G.Node
	out := make([]*G.Node, 0, len(order))
	for _, n := range order {
		if reduction(n.Op()) {
			reds = append(reds, n)
		} else {
			out = append(out, n)
		}
	}
	rowOp := func(n *G.Node) bool {
		rk, ok := n.Op().(rowKernel)
		return ok && rk.rowInputs() != nil
	}
	for _, r := range reds {
		kids := children(g, r)
		p := 0 // just after the last input
		for k, n := range out {
			if slices.Contains(kids, n) {
				p = k + 1
			}
		}
		for {
			prev := p - 1 // the ops either side, leaves skipped
			for prev >= 0 && out[prev].Op() == nil {
				prev--
			}
			next := p
			for next < len(out) && out[next].Op() == nil {
				next++
			}
			if prev < 0 || next == len(out) || !rowOp(out[prev]) || !rowOp(out[next]) ||
				slices.Contains(children(g, out[next]), r) {
				break
			}
			p = next + 1
		}
		out = slices.Insert(out, p, r)
	}
	return out
}

// reduction reports whether op is one placeReductions moves.
func reduction(op G.Op) bool {
	switch o := op.(type) {
	case matMulOp:
		return o.ta
	case colSumOp:
		return true
	}
	return false
}

// segment is a chain of consecutive row-wise steps (rowKernel ops with
// their buffers, over the same number of rows, each reading whole only
// values from before the chain) that Run prepares at once and then runs a
// block of rows at a time, every step of the chain on one block before
// the next block (parallel.Blocks), so that a block's intermediate rows
// are read back from the cache, not from memory. Sharing a slot within a
// chain is safe for a value read by rows: a slot is reused only after its
// value's last reader, which for every block runs before the reusing step
// writes that block's rows. It is not for a value read whole, which every
// block reads entirely: a step may not write into the slot of a value a
// step of its chain reads whole (the fourteenth outside audit of issue 38:
// a product's whole operand, freed after its last reader in the chain, was
// overwritten by the next step's first block, so later blocks — other
// examples — read the first block's data; 32·C for a declared C on a DP-SGD
// path, and wrong values outside DP).
type segment struct {
	start, end int   // the steps start..end (leaves included)
	ops        []int // the op steps, in order
	rows       int   // rows of every op's output
	block      int   // rows per block
	fs         []func(lo, hi int)
	whole      map[int]bool // the slots of the values the chain reads whole
}

// segmentBytes is the size (all the chain's rows of a block together)
// that a block of a segment is cut to: well within a core's L2 cache.
const segmentBytes = 192 << 10

// planSegments finds the machine's segments: maximal chains of at least
// two row-wise op steps with at least two blocks of rows.
func (mc *machine) planSegments() {
	mc.segAt = make([]int, len(mc.steps))
	var cur segment
	width := 0
	flush := func() {
		if len(cur.ops) >= 2 {
			cur.block = max(16, min(1024, segmentBytes/8/max(width, 1))) &^ 15
			if cur.rows >= 2*cur.block {
				mc.segs = append(mc.segs, cur)
				mc.segAt[cur.start] = len(mc.segs)
			}
		}
		cur, width = segment{}, 0
	}
	for i := range mc.steps {
		s := &mc.steps[i]
		if s.kind == leaf {
			if len(cur.ops) > 0 {
				cur.end = i
			}
			continue
		}
		if len(cur.ops) > 0 && s.slot >= 0 && cur.whole[s.slot] {
			flush() // i would overwrite a value the chain reads whole: it starts the next
		}
		rows, cols, ok := mc.rowWise(i, &cur)
		if ok && len(cur.ops) > 0 && rows != cur.rows {
			flush()
			rows, cols, ok = mc.rowWise(i, &cur)
		}
		if !ok {
			flush()
			continue
		}
		if len(cur.ops) == 0 {
			cur.start, cur.rows = i, rows
		}
		cur.ops, cur.end = append(cur.ops, i), i
		width += cols
		row := s.op.(rowKernel).rowInputs()
		for k, j := range s.in {
			if !row[k] && mc.steps[j].slot >= 0 {
				if cur.whole == nil {
					cur.whole = map[int]bool{}
				}
				cur.whole[mc.steps[j].slot] = true
			}
		}
	}
	flush()
}

// rowWise reports whether step i can join the chain cur: a row-wise op
// with a buffer and a 2-D output whose row inputs have its rows and whose
// whole inputs are not computed within cur. It returns the output's rows
// and columns.
func (mc *machine) rowWise(i int, cur *segment) (rows, cols int, ok bool) {
	s := &mc.steps[i]
	rk, isRow := s.op.(rowKernel)
	if s.kind != prealloc || !isRow || len(s.shape) != 2 {
		return 0, 0, false
	}
	row := rk.rowInputs()
	if len(row) != len(s.in) {
		return 0, 0, false
	}
	rows, cols = s.shape[0], s.shape[1]
	if cur.whole[s.slot] {
		return 0, 0, false // it would overwrite a value the chain reads whole
	}
	for k, j := range s.in {
		in := mc.nodes[j].Shape()
		inChain := len(cur.ops) > 0 && j >= cur.start && mc.steps[j].kind != leaf
		switch {
		case row[k] && (len(in) != 2 || in[0] != rows):
			return 0, 0, false
		case !row[k] && inChain:
			return 0, 0, false
		}
	}
	return rows, cols, true
}

// denseShape reports whether n's value is a float64 tensor (not a scalar).
func denseShape(n *G.Node) bool {
	return len(n.Shape()) > 0 && n.Shape().TotalSize() > 0 && n.Dtype() == tensor.Float64 && !n.IsScalar()
}

// isPrealloc reports whether op writes its whole output into a reused
// buffer: nn's own ops, and gorgonia's element-wise binary ops, matrix
// products and repeats (broadcasting). Other gorgonia ops that implement UsePreallocDoer read the
// buffer they are given (BatchNorm scales it in place as if it held the
// input, sliceIncrOp adds into it), so with a reused buffer they returned
// whatever it last held — another value of this run or of the run before
// (the thirteenth outside audit of issue 38: BatchNorm of a constant
// returned the batch's X·X, and on a DP-SGD path one example's data
// reached every other's gradient, 6.58·C for C). They run Do.
func isPrealloc(op G.Op) bool {
	if _, ok := op.(G.UsePreallocDoer); !ok {
		return false
	}
	switch gorgoniaType(op) {
	case "elemBinOp", "linAlgBinOp", "repeatOp":
		return true
	case "":
		return nnOp(op)
	}
	return false
}

// isUnaryInPlace: gorgonia's elementwise unary ops overwrite their one
// tensor input under UnsafeDo and keep its shape.
func isUnaryInPlace(op G.Op, n *G.Node, kids []*G.Node) bool {
	if _, ok := op.(G.UnsafeDoer); !ok || op.Arity() != 1 || op.OverwritesInput() != 0 {
		return false
	}
	c := kids
	return len(c) == 1 && c[0].Shape().Eq(n.Shape()) && c[0].Dtype() == n.Dtype()
}

// slot returns slot k's buffer, shaped like step s's node (allocated on
// first use).
func (mc *machine) slot(k int, s *step) *tensor.Dense {
	t := mc.slots[k]
	if t == nil || t.Size() != s.size {
		t = tensor.New(tensor.WithShape(s.shape.Clone()...), tensor.Of(tensor.Float64))
		mc.slots[k] = t
	} else if !t.Shape().Eq(s.shape) {
		if err := t.Reshape(s.shape.Clone()...); err != nil {
			panic(err) // same size: cannot fail
		}
	}
	return t
}

// Run executes every step once and binds the kept nodes' values.
func (mc *machine) Run() error {
	timing := opTiming.Load()
	var t0 time.Time
	for i := 0; i < len(mc.steps); i++ {
		if timing {
			t0 = time.Now()
		}
		if k := mc.segAt[i]; k > 0 {
			if err := mc.segment(&mc.segs[k-1]); err != nil {
				return err
			}
			if timing {
				addOpTime(mc.stepKey(i), t0)
			}
			i = mc.segs[k-1].end
			continue
		}
		if err := mc.step(i); err != nil {
			return err
		}
		if timing && mc.steps[i].kind != leaf {
			addOpTime(mc.stepKey(i), t0)
		}
	}
	for _, i := range mc.keep {
		if bound(mc.nodes[i], mc.vals[i]) {
			continue // bound since an earlier run (UnsafeLet clones the shape)
		}
		if err := G.UnsafeLet(mc.nodes[i], mc.vals[i]); err != nil {
			return fmt.Errorf("nn: binding %v: %w", mc.nodes[i], err)
		}
	}
	return nil
}

// inputs returns step s's input values (in mc.ins, reused).
func (mc *machine) inputs(s *step) []G.Value {
	ins := mc.ins[:0]
	for _, j := range s.in {
		ins = append(ins, mc.vals[j])
	}
	mc.ins = ins
	return ins
}

// step runs step i.
func (mc *machine) step(i int) error {
	s := &mc.steps[i]
	if s.kind == leaf {
		var v G.Value
		if mc.bind != nil && mc.bind[i] != nil {
			v = mc.bind[i]
		} else {
			v = s.node.Value()
		}
		if v == nil {
			return fmt.Errorf("nn: input %v has no value", s.node)
		}
		mc.vals[i] = v
		return nil
	}
	ins := mc.inputs(s)
	var v G.Value
	var err error
	switch s.kind {
	case prealloc:
		out := mc.slot(s.slot, s)
		v, err = s.op.(G.UsePreallocDoer).UsePreallocDo(out, ins...)
		if err == nil {
			err = mc.checkOut(s, v, out, ins)
		}
	case unaryCopy:
		out := mc.slot(s.slot, s)
		src, ok := ins[0].(*tensor.Dense)
		if !ok {
			err = fmt.Errorf("input is %T, not a dense tensor", ins[0])
			break
		}
		copy(out.Data().([]float64), src.Data().([]float64))
		v, err = s.op.(G.UnsafeDoer).UnsafeDo(out)
	default:
		v, err = s.op.Do(ins...)
		if _, ok := v.(*tensor.Dense); ok {
			s.allocs++
		}
	}
	if err != nil {
		return fmt.Errorf("nn: running %v: %w", s.node, err)
	}
	mc.vals[i] = v
	return nil
}

// checkOut counts a step whose op did not write into its buffer, and
// refuses a view of an input in its place.
func (mc *machine) checkOut(s *step, v G.Value, out *tensor.Dense, ins []G.Value) error {
	if sameData(v, out) {
		return nil
	}
	s.allocs++
	if aliases(v, ins) {
		return fmt.Errorf("returned a view of its input where a buffer was given")
	}
	return nil
}

// segment runs the steps of seg: its leaves, then every op's preparation
// in order (which reads no row data), then the ops' row loops block by
// block. If an op cannot run by rows this time, the ops before it run by
// rows and the rest one by one.
func (mc *machine) segment(seg *segment) error {
	for i := seg.start; i <= seg.end; i++ {
		if mc.steps[i].kind == leaf {
			if err := mc.step(i); err != nil {
				return err
			}
		}
	}
	seg.fs = seg.fs[:0]
	work := 0
	for _, i := range seg.ops {
		s := &mc.steps[i]
		out := mc.slot(s.slot, s)
		ins := mc.inputs(s)
		t, w, f, err := s.op.(rowKernel).rows(out, ins)
		if err == nil && f != nil {
			err = mc.checkOut(s, t, out, ins)
		}
		if err != nil {
			return fmt.Errorf("nn: running %v: %w", s.node, err)
		}
		if f == nil {
			mc.blocks(seg, work)
			for j := i; j <= seg.end; j++ {
				if mc.steps[j].kind != leaf {
					if err := mc.step(j); err != nil {
						return err
					}
				}
			}
			return nil
		}
		mc.vals[i] = t
		seg.fs = append(seg.fs, f)
		work += w
	}
	mc.blocks(seg, work)
	return nil
}

// blocks runs the row loops prepared in seg.fs, a block of rows at a time,
// then drops them: they hold the chain's buffers, which a released machine
// must let go.
func (mc *machine) blocks(seg *segment, work int) {
	fs := seg.fs
	if len(fs) > 0 {
		parallel.Blocks(seg.rows, seg.block, work, func(lo, hi int) {
			for _, f := range fs {
				f(lo, hi)
			}
		})
	}
	clear(fs)
	seg.fs = fs[:0]
}

// bound reports whether n's value is v already: the same tensor (a slot)
// or the same scalar (an op's own, as SumAll's).
func bound(n *G.Node, v G.Value) bool {
	switch v.(type) {
	case *tensor.Dense, *G.F64:
		return n.Value() == v
	}
	return false
}

// release drops every slot's buffer but the kept nodes' (their nodes
// still hold their last values) and returns the bytes it dropped.
func (mc *machine) release() int {
	kept := map[int]bool{}
	for _, i := range mc.keep {
		kept[mc.steps[i].slot] = true
	}
	n := 0
	for k, t := range mc.slots {
		if t != nil && !kept[k] {
			n += 8 * t.Shape().TotalSize()
			mc.slots[k] = nil
		}
	}
	clear(mc.vals)
	return n
}

// sameData reports whether v's data is t's buffer.
func sameData(v G.Value, t *tensor.Dense) bool {
	d, ok := v.(*tensor.Dense)
	return ok && d.Uintptr() == t.Uintptr()
}

// aliases reports whether v shares memory with one of ins.
func aliases(v G.Value, ins []G.Value) bool {
	d, ok := v.(*tensor.Dense)
	if !ok || d.Size() == 0 {
		return false
	}
	for _, in := range ins {
		if e, ok := in.(*tensor.Dense); ok && e.Size() > 0 && e.Uintptr() == d.Uintptr() {
			return true
		}
	}
	return false
}

// children returns n's inputs in argument order.
func children(g *G.ExprGraph, n *G.Node) []*G.Node {
	var out []*G.Node
	for it := g.From(n.ID()); it != nil && it.Next(); {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}
