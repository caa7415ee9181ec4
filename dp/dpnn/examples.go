package dpnn

import (
	"errors"
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
)

// Examples is the unit of DP-SGD on a graph: N examples, each a block of
// rows of a row universe (a node's rooted subgraph from
// degree.RootedSubgraphs, a PPR row, one row of an MLP's input), with the
// adjacency the training path aggregates over, and the declared
// occurrence bound.
//
// Privacy meaning. DP-SGD clips each example's gradient (the sum over its
// rows) to C and adds Gaussian noise to the sum over a Poisson sample of
// examples. If one privacy unit (an edge, a node with its edges, features
// and label) changes at most R examples between raw neighbours G and G′,
// each by at most Change·C in the clipped sum (Change 1: the example is
// only deleted or added; 2: it is modified, its two clipped gradients of
// norm ≤ C each), one step is dp.Occurrences{R, Change,
// Poisson{q, Gaussian{z}}} with noise std z·R·Change·C. R and Change are
// the method's claim, proven in its doc comment for every raw neighbour;
// what the framework guarantees is the other half: every batch's row
// groups are built here from the blocks (a fill function cannot mis-tag a
// row), and every row-mixing product of the training path (SpMM, SpMax,
// DropoutSpMM over a square batch-rows matrix, nn.RowMixer) is checked
// against them at every step, so an example's clipped gradient is a
// function of its own rows only.
type Examples struct {
	// N is the number of examples: DP-SGD samples ids 0 … N−1.
	N int
	// Start, when non-nil (len N+1, non-decreasing from 0), gives example
	// e's rows Start[e] … Start[e+1]−1 of the row universe; nil: example
	// e is the one row e. An example may have no rows (its clipped
	// gradient is then 0).
	Start []int
	// Adj, when non-nil, is the adjacency over the row universe
	// (Start[N] square) that the training path aggregates over (row i
	// lists the rows it gathers); every batch gets its sub-block in batch
	// rows (Batch.Adj). NewExamples refuses one that joins two examples.
	Adj *graphs.CSR
	// Present, when non-nil (one flag per id), says which of the N ids
	// hold an example in this run: the ids are a public universe (DPAR's
	// node ids, an absent node or one outside the node subsample keeping
	// its id). Every id is drawn, so whether an id is drawn does not
	// depend on which others are present; an absent id is then dropped
	// from the batch (its clipped gradient would be 0), and the noisy sum
	// is still divided by q·N. An absent id must have no rows.
	Present []bool
	// Weights, when non-nil (one per universe row), says the training
	// path pools each example's rows into one output row: batch example
	// k's output row is Σ over its rows i of Weights[row]·(row i), a
	// non-square product from the batch rows to PoolRows output rows
	// (DPAR: z_v = Σ_u Π[v,u]·f_θ(x_u) over v's rows of Π). Every batch
	// gets that matrix (Batch.Pool), and the construction checks every
	// such product of the training path: an entry (k, i) must have row i
	// in batch example k (Pool mixing, nn.CheckPools).
	Weights []float64
	// Generated, when > 0, says the examples' rows are drawn at every step
	// by the fill function, at most Generated batch rows per example
	// (ASGL: a root's training subgraph is the pairs of walks drawn from
	// it with the step's key, known only then). The framework lays out no
	// rows: it hands the fill the chunk's example ids and a row-tag vector
	// (Batch.Tags, every row −1), the fill tags each row it loads with its
	// batch example, and the framework checks every tag (a batch example
	// of the chunk or −1) before it sets the row groups from them, and
	// checks every row-mixing product of the training path against them.
	// A chunk holds capacity/Generated examples. Start, Adj, Weights and
	// Present must be nil.
	Generated int
	// R is the occurrence bound: the most examples one privacy unit
	// changes between raw neighbours.
	R int
	// Change is how far one changed example moves the clipped sum, in
	// units of the clip C: 1 (deleted or added only) or 2 (modified).
	Change int
	// What describes one example for the plan ("a training node's 1-hop
	// rooted subgraph").
	What string

	maxRows int
}

// OneRow is n one-row examples (row e of the batch input is example e's
// only row), with occurrence bound r and change c.
func OneRow(n, r, c int, what string) (*Examples, error) {
	return NewExamples(n, nil, nil, r, c, what)
}

// NewExamples validates and returns Examples (see the fields). It refuses
// an adjacency entry (i, j) whose rows lie in different examples, naming
// the two examples.
func NewExamples(n int, start []int, adj *graphs.CSR, r, c int, what string) (*Examples, error) {
	x := &Examples{N: n, Start: start, Adj: adj, R: r, Change: c, What: what}
	if err := x.validate(); err != nil {
		return nil, err
	}
	return x, nil
}

// PooledExamples is NewExamples for examples whose rows the training path
// pools into one output row each with the given weights (Examples.Weights,
// one per universe row), over ids of which present says which hold an
// example (Examples.Present; nil: all).
func PooledExamples(n int, start []int, weights []float64, present []bool, r, c int, what string) (*Examples, error) {
	x := &Examples{N: n, Start: start, Weights: weights, Present: present, R: r, Change: c, What: what}
	if err := x.validate(); err != nil {
		return nil, err
	}
	return x, nil
}

// GeneratedExamples is n examples whose rows the fill draws at every step,
// at most maxRows each (Examples.Generated).
func GeneratedExamples(n, maxRows, r, c int, what string) (*Examples, error) {
	if maxRows < 1 {
		return nil, fmt.Errorf("dp: examples: generated examples of at most %d rows, want at least 1", maxRows)
	}
	x := &Examples{N: n, Generated: maxRows, R: r, Change: c, What: what}
	if err := x.validate(); err != nil {
		return nil, err
	}
	return x, nil
}

// absent reports whether id e holds no example (Present).
func (x *Examples) absent(e int) bool { return x.Present != nil && !x.Present[e] }

// Rows returns the number of rows of the row universe.
func (x *Examples) Rows() int {
	if x.Start == nil {
		return x.N
	}
	return x.Start[x.N]
}

// MaxRows is the most rows of one example.
func (x *Examples) MaxRows() int { return x.maxRows }

// RowsOf returns example e's universe rows lo … hi−1.
func (x *Examples) RowsOf(e int) (lo, hi int) {
	if x.Start == nil {
		return e, e + 1
	}
	return x.Start[e], x.Start[e+1]
}

func (x *Examples) validate() error {
	if x.N <= 0 {
		return fmt.Errorf("dp: examples: need at least one, got %d", x.N)
	}
	if x.R < 1 {
		return fmt.Errorf("dp: examples: occurrence bound R must be at least 1, got %d", x.R)
	}
	if x.Change != 1 && x.Change != 2 {
		return fmt.Errorf("dp: examples: Change must be 1 (deleted or added) or 2 (modified), got %d", x.Change)
	}
	x.maxRows = 1
	if x.Generated > 0 {
		if x.Start != nil || x.Adj != nil || x.Weights != nil || x.Present != nil {
			return errors.New("dp: examples: generated examples take no Start, Adj, Weights or Present (the fill draws their rows)")
		}
		x.maxRows = x.Generated
	}
	if x.Start != nil {
		if len(x.Start) != x.N+1 || x.Start[0] != 0 {
			return fmt.Errorf("dp: examples: Start has %d entries (want N+1 = %d) starting at %d (want 0)", len(x.Start), x.N+1, x.Start[0])
		}
		for e := 0; e < x.N; e++ {
			d := x.Start[e+1] - x.Start[e]
			if d < 0 {
				return fmt.Errorf("dp: examples: example %d has %d rows (Start decreases)", e, d)
			}
			x.maxRows = max(x.maxRows, d)
		}
	}
	if x.Present != nil {
		if len(x.Present) != x.N {
			return fmt.Errorf("dp: examples: %d presence flags for %d ids", len(x.Present), x.N)
		}
		for e, in := range x.Present {
			if lo, hi := x.RowsOf(e); !in && hi > lo {
				return fmt.Errorf("dp: examples: id %d is absent but has %d rows", e, hi-lo)
			}
		}
	}
	if x.Weights != nil && len(x.Weights) != x.Rows() {
		return fmt.Errorf("dp: examples: %d pooling weights for %d rows", len(x.Weights), x.Rows())
	}
	if a := x.Adj; a != nil {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("dp: examples: adjacency: %w", err)
		}
		if a.Rows != x.Rows() || a.Cols != x.Rows() {
			return fmt.Errorf("dp: examples: adjacency is %d×%d, the examples have %d rows", a.Rows, a.Cols, x.Rows())
		}
		of := x.universeGroups()
		if err := nn.CheckBlocks([]nn.Mixing{{Op: "the examples' adjacency", S: nn.NewSparse("examples", a)}}, &nn.RowGroups{Of: of, Samples: x.N},
			func(k int) string { return fmt.Sprintf("example %d", k) }); err != nil {
			return fmt.Errorf("dp: examples: %w", err)
		}
	}
	return nil
}

// universeGroups returns every universe row's example.
func (x *Examples) universeGroups() []int {
	of := make([]int, x.Rows())
	for e := 0; e < x.N; e++ {
		lo, hi := x.RowsOf(e)
		for r := lo; r < hi; r++ {
			of[r] = e
		}
	}
	return of
}

// Batch is the layout of one chunk of sampled examples in the batch rows,
// built by the framework (SGD.StepExamples) before it calls the method's
// fill function: batch example k is example Examples[k], whose rows are
// batch rows First[k] … First[k+1]−1 (First[k] is its first row: the root
// of a rooted subgraph), holding universe rows Rows[First[k]] …; rows from
// First[len(Examples)] on are padding.
type Batch struct {
	Examples []int
	First    []int
	Rows     []int
	// Adj is the batch's adjacency (capacity × capacity, in batch rows),
	// the examples' blocks of Examples.Adj; nil without one. The fill
	// function gives it to the layers that aggregate (layers.Neighbours.Set).
	Adj *graphs.CSR
	// Pool is the batch's pooling matrix (pool rows × capacity, output row
	// k = batch example k, its entries Examples.Weights of k's rows in
	// batch rows); nil without Weights. The fill function gives it to the
	// pooling product (DPAR's Π batch).
	Pool *graphs.CSR
	// Tags, for generated examples (Examples.Generated), is the row-tag
	// vector the fill sets: Tags.Of[r] the batch example of row r, −1 for
	// a row it does not use; every tag starts at −1 and Tags.Samples is
	// the chunk's example count. nil otherwise.
	Tags *nn.RowGroups
}

// layout fills b (and groups) with ids laid out in at most capacity rows
// (and, for pooled examples, poolRows output rows).
func (x *Examples) layout(ids []int, capacity, poolRows int, b *Batch, groups *nn.RowGroups) error {
	b.Examples = append(b.Examples[:0], ids...)
	b.First, b.Rows = b.First[:0], b.Rows[:0]
	if len(groups.Of) != capacity {
		return fmt.Errorf("dp: DP-SGD: %d row groups for a batch of %d rows", len(groups.Of), capacity)
	}
	if x.Generated > 0 {
		return x.layoutGenerated(ids, capacity, b, groups)
	}
	b.Tags = nil
	if x.Weights != nil && len(ids) > poolRows {
		return fmt.Errorf("dp: DP-SGD: %d examples for %d pooled output rows", len(ids), poolRows)
	}
	var pool *graphs.CSR
	if x.Weights != nil {
		pool = &graphs.CSR{Rows: poolRows, Cols: capacity, Indptr: make([]int, 1, poolRows+1), Data: []float64{}}
	}
	var src, dst []int
	var val []float64
	for k, e := range ids {
		if e < 0 || e >= x.N {
			return fmt.Errorf("dp: DP-SGD: example %d outside 0 … %d", e, x.N-1)
		}
		lo, hi := x.RowsOf(e)
		base := len(b.Rows)
		if base+hi-lo > capacity {
			return fmt.Errorf("dp: DP-SGD: the batch's examples need more than its %d rows", capacity)
		}
		b.First = append(b.First, base)
		for r := lo; r < hi; r++ {
			if pool != nil {
				pool.Indices = append(pool.Indices, len(b.Rows))
				pool.Data = append(pool.Data, x.Weights[r])
			}
			groups.Of[len(b.Rows)] = k
			b.Rows = append(b.Rows, r)
		}
		if pool != nil {
			pool.Indptr = append(pool.Indptr, len(pool.Indices))
		}
		if x.Adj != nil {
			for r := lo; r < hi; r++ {
				for q := x.Adj.Indptr[r]; q < x.Adj.Indptr[r+1]; q++ {
					src, dst = append(src, base+r-lo), append(dst, base+x.Adj.Indices[q]-lo)
					if x.Adj.Data != nil {
						val = append(val, x.Adj.Data[q])
					}
				}
			}
		}
	}
	b.First = append(b.First, len(b.Rows))
	for r := len(b.Rows); r < capacity; r++ {
		groups.Of[r] = -1
	}
	groups.Samples = len(ids)
	b.Adj = nil
	if x.Adj != nil {
		b.Adj = graphs.FromCOO(capacity, capacity, src, dst, val)
	}
	b.Pool = nil
	if pool != nil {
		for len(pool.Indptr) < poolRows+1 {
			pool.Indptr = append(pool.Indptr, len(pool.Indices))
		}
		b.Pool = pool
	}
	return nil
}

// layoutGenerated is layout for generated examples: no rows, a tag
// vector of −1 for the fill, and the groups all padding until the fill's
// tags are checked (tagged).
func (x *Examples) layoutGenerated(ids []int, capacity int, b *Batch, groups *nn.RowGroups) error {
	if len(ids)*x.Generated > capacity {
		return fmt.Errorf("dp: DP-SGD: %d generated examples of up to %d rows exceed the batch's %d rows", len(ids), x.Generated, capacity)
	}
	for _, e := range ids {
		if e < 0 || e >= x.N {
			return fmt.Errorf("dp: DP-SGD: example %d outside 0 … %d", e, x.N-1)
		}
	}
	b.Examples = append(b.Examples[:0], ids...)
	b.First, b.Rows, b.Adj, b.Pool = b.First[:0], b.Rows[:0], nil, nil
	if b.Tags == nil || len(b.Tags.Of) != capacity {
		b.Tags = &nn.RowGroups{Of: make([]int, capacity)}
	}
	for r := range b.Tags.Of {
		b.Tags.Of[r], groups.Of[r] = -1, -1
	}
	b.Tags.Samples, groups.Samples = len(ids), len(ids)
	return nil
}

// tagged sets groups from the fill's tags of a generated chunk of k
// examples, refusing a tag outside the chunk and a chunk count the fill
// changed, and an example with more rows than declared.
func (x *Examples) tagged(b *Batch, groups *nn.RowGroups) error {
	k := len(b.Examples)
	if b.Tags.Samples != k || len(b.Tags.Of) != len(groups.Of) {
		return fmt.Errorf("dp: DP-SGD: the fill's tags describe %d examples over %d rows, the chunk has %d examples over %d rows", b.Tags.Samples, len(b.Tags.Of), k, len(groups.Of))
	}
	count := make([]int, k)
	for r, t := range b.Tags.Of {
		if t < -1 || t >= k {
			return fmt.Errorf("dp: DP-SGD: the fill tagged batch row %d with example %d of a chunk of %d", r, t, k)
		}
		if t >= 0 {
			if count[t]++; count[t] > x.Generated {
				return fmt.Errorf("dp: DP-SGD: the fill gave example %d more than its declared %d rows", b.Examples[t], x.Generated)
			}
		}
		groups.Of[r] = t
	}
	groups.Samples = k
	return nil
}

// chunks splits a sampled batch into chunks whose rows fit capacity, that
// hold at most capacity examples (examples without rows take none, and
// the per-sample norms have one entry per batch row: the eleventh outside
// audit of issue 38 crashed a step on G′ only with empty examples) and,
// when maxEx > 0, at most maxEx examples (pooled examples: one output row
// each).
func (x *Examples) chunks(batch []int, capacity, maxEx int, out [][]int) ([][]int, error) {
	out = out[:0]
	if x.Generated > 0 {
		per := capacity / x.Generated
		if per < 1 {
			return nil, fmt.Errorf("dp: DP-SGD: generated examples of up to %d rows do not fit the batch's %d rows", x.Generated, capacity)
		}
		for lo := 0; lo < len(batch); lo += per {
			out = append(out, batch[lo:min(lo+per, len(batch))])
		}
		if len(out) == 0 {
			out = append(out, batch)
		}
		return out, nil
	}
	lo, rows := 0, 0
	for i, e := range batch {
		a, b := x.RowsOf(e)
		if b-a > capacity {
			return nil, fmt.Errorf("dp: DP-SGD: example %d has %d rows, more than the batch's %d", e, b-a, capacity)
		}
		if rows+b-a > capacity || i-lo == capacity || (maxEx > 0 && i-lo == maxEx) {
			out = append(out, batch[lo:i])
			lo, rows = i, 0
		}
		rows += b - a
	}
	if lo < len(batch) || len(out) == 0 {
		out = append(out, batch[lo:])
	}
	return out, nil
}

// errNoExamples is Step's refusal of a construction over Examples.
var errNoExamples = errors.New("dp: DP-SGD over declared Examples steps with StepExamples (the framework lays out the rows)")
