package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Aggr is how Aggregate combines the rows a row gathers: Sum, Mean or Max.
type Aggr int

const (
	// Sum is Σ_{j∈N(i)} x_j (0 for an empty N(i)).
	Sum Aggr = iota
	// Mean is (1/|N(i)|)·Σ_{j∈N(i)} x_j, and 0 for an empty N(i).
	Mean
	// Max is the column-wise max_{j∈N(i)} x_j, and 0 for an empty N(i).
	Max
)

var aggrNames = [...]string{Sum: "sum", Mean: "mean", Max: "max"}

// String returns "sum", "mean" or "max".
func (a Aggr) String() string {
	if a >= 0 && int(a) < len(aggrNames) {
		return aggrNames[a]
	}
	return fmt.Sprintf("Aggr(%d)", int(a))
}

// ParseAggr parses "sum", "mean" or "max" (a flag's value).
func ParseAggr(s string) (Aggr, error) {
	for a, n := range aggrNames {
		if n == s {
			return Aggr(a), nil
		}
	}
	return 0, fmt.Errorf("aggregation %q: want sum, mean or max", s)
}

// Neighbours is an adjacency prepared for Aggregate: row i of A lists the
// rows N(i) = {j : A[i,j] ≠ 0} that row i gathers (its in-neighbours, for
// messages j → i). Only the pattern counts: stored values other than 0 are
// not weights (an explicitly stored 0 is not a neighbour). The sparse
// inputs Aggregate multiplies are built once here, from A as it is now,
// and shared by every path (a training and an evaluation path over the
// same matrix); a later change of A is seen only through Set.
//
// Privacy. Aggregation has no parameters and records nothing on a DP-SGD
// path, so per-sample gradients stay those of the layers around it only
// when no row of one sample gathers a row of another: the adjacency of a
// training path must be block-diagonal over its samples (the K-hop rooted
// subgraphs of degree.RootedSubgraphs are). DP-SGD checks this for you:
// its products (nn.SpMM, nn.SpMax) are nn.RowMixers, and dpnn's SGD
// refuses, at every step, an entry joining two examples' rows, naming the
// op and the examples.
type Neighbours struct {
	Name string
	// A is the adjacency as given (rows × cols; x has cols rows).
	A *graphs.CSR
	// Pattern is A's non-zero pattern (all values 1), Sum's and Max's
	// input; it shares A's index arrays when A stores no zero.
	Pattern *nn.Sparse
	// Degree[i] = |N(i)|.
	Degree []int
	mean   *nn.Sparse
}

// NewNeighbours validates a and prepares it for Aggregate.
func NewNeighbours(name string, a *graphs.CSR) (*Neighbours, error) {
	if a == nil {
		return nil, fmt.Errorf("layers: neighbours %s: no adjacency", name)
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("layers: neighbours %s: %w", name, err)
	}
	p := &graphs.CSR{Rows: a.Rows, Cols: a.Cols, Indptr: a.Indptr, Indices: a.Indices}
	zeros := 0
	for _, v := range a.Data {
		if v == 0 {
			zeros++
		}
	}
	if zeros > 0 {
		p.Indptr = make([]int, a.Rows+1)
		p.Indices = make([]int, 0, a.NNZ()-zeros)
		for i := 0; i < a.Rows; i++ {
			for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
				if a.Data[k] != 0 {
					p.Indices = append(p.Indices, a.Indices[k])
				}
			}
			p.Indptr[i+1] = len(p.Indices)
		}
	}
	return &Neighbours{Name: name, A: a, Pattern: nn.NewSparse(name, p).Fixed(), Degree: p.Degrees()}, nil
}

// Set replaces the adjacency by a (same shape), e.g. a DP-SGD batch's
// block of the examples' adjacency (dpnn.Batch.Adj): the pattern, the
// degrees and the mean matrix follow, for every path built over nb.
func (nb *Neighbours) Set(a *graphs.CSR) error {
	fresh, err := NewNeighbours(nb.Name, a)
	if err != nil {
		return err
	}
	if a.Rows != nb.A.Rows || a.Cols != nb.A.Cols {
		return fmt.Errorf("layers: neighbours %s are %d×%d, cannot set a %d×%d adjacency", nb.Name, nb.A.Rows, nb.A.Cols, a.Rows, a.Cols)
	}
	if err := nb.Pattern.Set(fresh.Pattern.A); err != nil {
		return err
	}
	nb.A, nb.Degree = a, fresh.Degree
	if nb.mean != nil {
		m := fresh.MeanMatrix()
		if err := nb.mean.Set(m.A); err != nil {
			return err
		}
	}
	return nil
}

// MeanMatrix is D⁻¹·P: the pattern P with row i scaled by 1/|N(i)| (Mean's
// input; an empty row stays empty), built on first use.
func (nb *Neighbours) MeanMatrix() *nn.Sparse {
	if nb.mean == nil {
		p := nb.Pattern.A
		d := make([]float64, p.NNZ())
		for i := 0; i < p.Rows; i++ {
			for k := p.Indptr[i]; k < p.Indptr[i+1]; k++ {
				d[k] = 1 / float64(nb.Degree[i])
			}
		}
		nb.mean = nn.NewSparse("mean("+nb.Name+")", &graphs.CSR{Rows: p.Rows, Cols: p.Cols, Indptr: p.Indptr, Indices: p.Indices, Data: d}).Fixed()
	}
	return nb.mean
}

// Aggregate returns, for every row i of nb's adjacency, the aggregation of
// the rows N(i) of x (a dense (cols, k) node) in the given mode: an
// (rows, k) node. Sum and Mean are sparse products (nn.SpMM) with the
// pattern and with D⁻¹·P, whose gradients are the transposed products;
// Max is nn.SpMax, whose gradient goes to each output entry's argmax. The
// aggregation over an empty N(i) is 0 in every mode. m labels the node for
// inspection ("aggregate(mean)").
func Aggregate(m *nn.Model, nb *Neighbours, x *G.Node, mode Aggr) (*G.Node, error) {
	if nb == nil {
		return nil, fmt.Errorf("layers: aggregate: no neighbours")
	}
	if s := x.Shape(); len(s) != 2 || s[0] != nb.A.Cols {
		return nil, fmt.Errorf("layers: aggregate over %s (%d×%d): input is %v, want %d rows", nb.Name, nb.A.Rows, nb.A.Cols, s, nb.A.Cols)
	}
	var y *G.Node
	var err error
	switch mode {
	case Sum:
		y, err = nn.SpMM(nb.Pattern, x)
	case Mean:
		y, err = nn.SpMM(nb.MeanMatrix(), x)
	case Max:
		y, err = nn.SpMax(nb.Pattern, x)
	default:
		return nil, fmt.Errorf("layers: aggregate over %s: unknown mode %v", nb.Name, mode)
	}
	if err != nil {
		return nil, fmt.Errorf("layers: aggregate %s over %s: %w", mode, nb.Name, err)
	}
	if m != nil {
		m.Tag(y, "aggregate("+mode.String()+")")
	}
	return y, nil
}
