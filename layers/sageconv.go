package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// SAGEOptions are SAGEConv's switches; the zero value is PyG's default
// (root weight, bias, no normalisation).
type SAGEOptions struct {
	// NoRootWeight drops the root term W_r·x_i (PyG's root_weight=False).
	NoRootWeight bool
	// NoBias drops the bias b (PyG's bias=False).
	NoBias bool
	// Normalize divides every output row by its ℓ2 norm (PyG's
	// normalize=True; a zero row stays zero).
	Normalize bool
}

// SAGEConv is GraphSAGE's convolution (Hamilton et al. 2017) as PyG's
// SAGEConv computes it:
//
//	out_i = aggr_{j∈N(i)} x_j · W_l + b + x_i · W_r
//
// (the root term without NoRootWeight), each output row then ℓ2-normalised
// with Normalize. aggr is Aggregate's Sum, Mean (PyG's default) or Max,
// with an empty N(i) aggregating to 0; W_l, b and W_r are Linear layers
// with PyG's initialisation (U(±1/√in)), the root one without bias.
//
// DP-SGD. Both terms are Linear.Forward, so on a model's recorded path W_l
// (input: the aggregate), b and W_r (input: x) get Linear's per-sample
// rules, and the per-sample gradient of the layer is the sum over a
// sample's rows — exact when the adjacency is block-diagonal over samples
// (no row gathers a row of another sample; see Neighbours). The
// normalisation is per row, so it mixes no samples.
type SAGEConv struct {
	Name string
	// Lin is lin_l: the aggregate → out, with the bias.
	Lin *Linear
	// Root is lin_r: x_i → out, without bias; nil with NoRootWeight.
	Root      *Linear
	Aggr      Aggr
	Normalize bool
	m         *nn.Model
}

// NewSAGEConv adds a SAGEConv's parameters to m: name.l.W, name.l.b (unless
// NoBias) and name.r.W (unless NoRootWeight), for in input and out output
// columns.
func NewSAGEConv(m *nn.Model, name string, in, out int, aggr Aggr, opt SAGEOptions) *SAGEConv {
	c := &SAGEConv{Name: name, Lin: NewLinear(m, name+".l", in, out, !opt.NoBias, InitPyG), Aggr: aggr, Normalize: opt.Normalize, m: m}
	if !opt.NoRootWeight {
		c.Root = NewLinear(m, name+".r", in, out, false, InitPyG)
	}
	return c
}

// Forward applies the layer to x (nb.A.Cols × in) over the neighbours nb,
// giving nb.A.Rows × out; with the root term nb's adjacency must be square
// (row i's own input is x_i).
func (c *SAGEConv) Forward(nb *Neighbours, x *G.Node) (*G.Node, error) {
	agg, err := Aggregate(c.m, nb, x, c.Aggr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	out := c.Lin.Forward(agg)
	if c.Root != nil {
		if nb.A.Rows != nb.A.Cols {
			return nil, fmt.Errorf("%s: the root term needs a square adjacency, %s is %d×%d", c, nb.Name, nb.A.Rows, nb.A.Cols)
		}
		if out, err = nn.Add(out, c.Root.Forward(x)); err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
	}
	if c.Normalize {
		if out, err = nn.RowNormalize(out); err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
	}
	return out, nil
}

func (c *SAGEConv) String() string {
	return fmt.Sprintf("SAGEConv(%s: %d→%d, aggr=%s, root=%v, bias=%v, normalize=%v)",
		c.Name, c.Lin.In, c.Lin.Out, c.Aggr, c.Root != nil, c.Lin.B != nil, c.Normalize)
}
