package layers

import (
	"fmt"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Reach is the plan of a stack of K propagations over one n×n adjacency
// Â (GCNConv layers, layer 0 reading the n input rows) whose output is
// read only at some rows: a loss over the training nodes, a monitoring
// path over the validation nodes. Layer K−1 computes only those rows,
// and each layer k−1 below it only the rows layer k's rows of Â have an
// entry in — the rows reachable from the output's through K−k hops. A
// layer whose rows would be more than 90 % of the nodes computes every
// row (the restriction then saves little and costs a gather).
//
// A path over Reach gives, at every row it computes, the bits of the path
// over every node: SelectRows keeps each row's entries in order, the
// columns of layer k are renumbered to layer k−1's rows in order, and
// every other op of a GCN (the weight product, bias, ReLU, dropout through
// Reach.Dropout) is row-wise. Its gradient with respect to the weights
// equals the full path's for a loss that reads only the output rows: the
// rows it leaves out have a zero gradient, and the terms it leaves out of
// each sum are those zeros (the kernels add a sum's terms in row order,
// so the remaining terms keep their order). At 10⁶ nodes with a tenth of
// them training, the second layer's all-rows product, its transpose and
// the log-softmax of every row were a fifth of an epoch, and the first
// layer's rows the second does not read a fifth to a quarter.
//
// Privacy: a plan changes no value a path computes at the rows it reads,
// so a mechanism built on a restricted path releases what it would on the
// full one and its guarantee is unchanged. The plan reads the adjacency
// (which rows to compute), so only the running time and memory depend on
// it beyond the released values — as they do for the full path.
type Reach struct {
	// N is the number of nodes (Â's rows and columns).
	N int
	// Rows[k] are the rows layer k computes, sorted and distinct; nil:
	// every node.
	Rows [][]int
	// Adj[k] is layer k's adjacency: the rows Rows[k] of Â, its columns
	// renumbered to Rows[k−1] when layer k−1 computes only those (k > 0);
	// Â itself for a layer computing every row.
	Adj []*nn.Sparse
	// out are the output nodes the plan was made for, as given.
	out []int
}

// NewReach plans a stack of layers propagations over the n×n adjacency
// adj whose output is read at the nodes out (nil: every node). Layers that
// compute every row use adj itself (so paths over the same matrix share
// their nodes); a restricted layer k gets a matrix of its own named
// adj.Name[k], built here and never written (nn.Sparse.Fixed). out must
// be nodes of adj (a programming error otherwise, recovered by nn.Build).
func NewReach(adj *nn.Sparse, layers int, out []int) *Reach {
	a, n := adj.A, adj.A.Rows
	if a.Cols != n || layers < 1 {
		panic(fmt.Sprintf("layers: Reach of %d layers over a %d×%d adjacency", layers, a.Rows, a.Cols)) // programming error
	}
	for _, i := range out {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("layers: Reach: node %d of %d", i, n)) // programming error
		}
	}
	r := &Reach{N: n, Rows: make([][]int, layers), Adj: make([]*nn.Sparse, layers), out: out}
	rows := outRows(out, n)
	for k := layers - 1; k >= 0; k-- {
		if rows == nil {
			r.Adj[k] = adj
			continue
		}
		m := a.SelectRows(rows)
		r.Rows[k] = rows
		if k > 0 {
			var read *graphs.CSR
			if rows, read = readRows(m); rows != nil {
				m = read
			}
		}
		r.Adj[k] = nn.NewSparse(fmt.Sprintf("%s[%d]", adj.Name, k), m).Fixed()
	}
	return r
}

// outRows returns the rows of a plan's output: the nodes out, sorted, when
// they are distinct and at most 90 % of the n nodes; nil (every node)
// otherwise.
func outRows(out []int, n int) []int {
	rows := slices.Sorted(slices.Values(out))
	if len(rows) == 0 || 10*len(rows) > 9*n || len(slices.Compact(slices.Clone(rows))) != len(rows) {
		return nil
	}
	return rows
}

// readRows returns the rows of the layer below that a layer over the
// adjacency rows at reads (the columns with an entry, in order) and at
// with its columns renumbered to them, when they are at most 90 % of the
// nodes (nil otherwise). The renumbering keeps each row's entries in
// order, so every sum of the layer adds the same terms in the same order.
// With the training nodes' rows of Â (a tenth of a graph of average degree
// 10) they are about 70 % of the nodes; on cora about a quarter.
func readRows(at *graphs.CSR) ([]int, *graphs.CSR) {
	used, count := make([]bool, at.Cols), 0
	for _, j := range at.Indices {
		if !used[j] {
			used[j] = true
			count++
		}
	}
	if count == 0 || 10*count > 9*at.Cols {
		return nil, nil // before allocating anything of the nodes' size
	}
	pos, rows := make([]int, at.Cols), make([]int, 0, count)
	for j, u := range used {
		if u {
			pos[j] = len(rows)
			rows = append(rows, j)
		}
	}
	idx := make([]int, len(at.Indices))
	for e, j := range at.Indices {
		idx[e] = pos[j]
	}
	return rows, &graphs.CSR{Rows: at.Rows, Cols: len(rows), Indptr: at.Indptr, Indices: idx, Data: at.Data}
}

// Conv returns the layer c (its parameters) as layer k of the plan: over
// Adj[k], computing the rows Rows[k].
func (r *Reach) Conv(c *GCNConv, k int) *GCNConv {
	return &GCNConv{Linear: c.Linear, Adj: r.Adj[k]}
}

// Dropout is dropout p on layer k's output h as on the whole layer: the
// rows Rows[k] take their rows of a mask drawn for every node
// (nn.Model.DropoutRows), so each computed entry is dropped as on the
// path over every node, and the model's stream advances alike.
func (r *Reach) Dropout(m *nn.Model, h *G.Node, p float64, k int) *G.Node {
	if r.Rows[k] == nil {
		return m.Dropout(h, p)
	}
	return m.DropoutRows(h, p, r.Rows[k], r.N)
}

// Out returns the nodes of the output's rows, in order (Rows[K−1]); nil:
// every node.
func (r *Reach) Out() []int { return r.Rows[len(r.Rows)-1] }

// Loss returns the arguments of nn.CrossEntropy.SetRows for a loss over
// the output nodes the plan was made for, whose classes are labels (one
// per node): their rows in the output, and the labels of the output's rows.
func (r *Reach) Loss(labels []int) (rows, targets []int) {
	out := r.Out()
	if out == nil {
		return r.out, labels
	}
	rows, targets = make([]int, len(out)), make([]int, len(out))
	for k, i := range out {
		rows[k], targets[k] = k, labels[i]
	}
	return rows, targets
}
