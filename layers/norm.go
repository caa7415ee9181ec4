package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// NormKind selects the normalisation inside an MLP layer.
type NormKind int

const (
	NormNone  NormKind = iota
	NormBatch          // BatchNorm1d: mixes samples, not DP-safe
	NormGroup          // GroupNorm with one group: per-sample, DP-safe
)

func (k NormKind) String() string {
	switch k {
	case NormBatch:
		return "batchnorm"
	case NormGroup:
		return "groupnorm"
	}
	return "none"
}

// ParseNorm reads "none", "batchnorm" or "groupnorm".
func ParseNorm(s string) (NormKind, error) {
	switch s {
	case "none", "":
		return NormNone, nil
	case "batchnorm", "batch", "bn":
		return NormBatch, nil
	case "groupnorm", "group", "gn":
		return NormGroup, nil
	}
	return NormNone, fmt.Errorf("layers: unknown norm %q (want none, batchnorm or groupnorm)", s)
}

// Norm is BatchNorm1d or GroupNorm(1) over (N, F) inputs with the affine
// parameters γ (init 1) and β (init 0): y = γ∘standardise(x) + β.
// BatchNorm standardises each column over the batch (running statistics,
// momentum 0.1, in evaluation); GroupNorm standardises each row.
type Norm struct {
	Kind        NormKind
	Name        string
	Gamma, Beta *nn.Param
	m           *nn.Model
	bn          *nn.BatchStandardizer
}

// NewNorm adds a norm layer of width f (nil for NormNone).
func NewNorm(m *nn.Model, name string, kind NormKind, f int) *Norm {
	if kind == NormNone {
		return nil
	}
	n := &Norm{Kind: kind, Name: name, m: m,
		Gamma: m.NewParam(name+".gamma", nn.Constant(1), f),
		Beta:  m.NewParam(name+".beta", nn.Constant(0), f)}
	if kind == NormBatch {
		n.bn = m.NewBatchStandardizer(1e-5, 0.1)
	}
	return n
}

// Forward applies the norm (nil receiver: identity).
func (n *Norm) Forward(x *G.Node) *G.Node {
	if n == nil {
		return x
	}
	var s *G.Node
	if n.Kind == NormBatch {
		if y := n.bn.Affine(x, n.Gamma.Node, n.Beta.Node); y != nil {
			return y // a frozen path's BatchNorm, in one pass
		}
		s = n.bn.Apply(x)
	} else {
		s = n.m.RowStandardize(x, 1e-5)
	}
	y := nn.MulRow(s, n.Gamma.Node)
	y = nn.AddRow(y, n.Beta.Node)
	return n.m.RecordAffine(y, n.Gamma, n.Beta, s)
}

func (n *Norm) String() string {
	if n == nil {
		return "Identity"
	}
	return fmt.Sprintf("%s(%s)", n.Kind, n.Name)
}

// CopyFrom copies γ, β and (BatchNorm) the running statistics of another
// norm layer of the same kind and width, usually in another model.
func (n *Norm) CopyFrom(o *Norm) {
	if n == nil || o == nil {
		return
	}
	copy(n.Gamma.Value(), o.Gamma.Value())
	copy(n.Beta.Value(), o.Beta.Value())
	if n.bn != nil && o.bn != nil {
		n.bn.SetStats(o.bn.Stats())
	}
}
