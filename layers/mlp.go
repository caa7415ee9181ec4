package layers

import (
	"fmt"
	"strings"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Activation selects an MLP nonlinearity.
type Activation int

const (
	ReLU Activation = iota
	SELU
)

func (a Activation) apply(x *G.Node) *G.Node {
	if a == SELU {
		return nn.SELU(x)
	}
	return nn.ReLU(x)
}

func (a Activation) String() string {
	if a == SELU {
		return "selu"
	}
	return "relu"
}

// ParseActivation reads "relu" or "selu".
func ParseActivation(s string) (Activation, error) {
	switch s {
	case "relu", "":
		return ReLU, nil
	case "selu":
		return SELU, nil
	}
	return ReLU, fmt.Errorf("layers: unknown activation %q (want relu or selu)", s)
}

// MLPConfig describes an MLP. Dims lists the widths: input, hidden…, output.
// Each layer is Linear → activation → norm → dropout (ProGAP's ordering),
// or with NormFirst Linear → norm → dropout → activation (GAP's); with
// PlainLast the last layer is a bare Linear.
type MLPConfig struct {
	Dims         []int
	Activation   Activation
	Norm         NormKind
	Dropout      float64 // after each non-plain layer
	InputDropout float64 // on the input, before the first Linear
	PlainLast    bool
	NormFirst    bool
	Init         Init
}

// MLP is a stack of Linear layers with activations, norms and dropout.
type MLP struct {
	Name   string
	Cfg    MLPConfig
	Layers []*Linear
	Norms  []*Norm
	m      *nn.Model
}

// NewMLP adds an MLP's parameters to m.
func NewMLP(m *nn.Model, name string, cfg MLPConfig) (*MLP, error) {
	if len(cfg.Dims) < 2 {
		return nil, fmt.Errorf("layers: MLP %s needs at least input and output widths, got %v", name, cfg.Dims)
	}
	for _, d := range cfg.Dims {
		if d <= 0 {
			return nil, fmt.Errorf("layers: MLP %s has a non-positive width in %v", name, cfg.Dims)
		}
	}
	p := &MLP{Name: name, Cfg: cfg, m: m}
	for i := 0; i+1 < len(cfg.Dims); i++ {
		ln := fmt.Sprintf("%s.%d", name, i)
		p.Layers = append(p.Layers, NewLinear(m, ln, cfg.Dims[i], cfg.Dims[i+1], true, cfg.Init))
		last := i+2 == len(cfg.Dims)
		if last && cfg.PlainLast {
			p.Norms = append(p.Norms, nil)
		} else {
			p.Norms = append(p.Norms, NewNorm(m, ln+".norm", cfg.Norm, cfg.Dims[i+1]))
		}
	}
	return p, nil
}

// Forward applies the MLP to a dense (N, Dims[0]) node.
func (p *MLP) Forward(x *G.Node) *G.Node {
	x = p.m.Dropout(x, p.Cfg.InputDropout)
	return p.rest(p.Layers[0].Forward(x))
}

// ForwardSparse applies the MLP to sparse input features; the first layer
// multiplies the CSR directly. Input dropout, if any, acts on the stored
// entries of x (x must then be private to this model).
func (p *MLP) ForwardSparse(x *nn.Sparse) *G.Node {
	p.m.SparseDropout(x, p.Cfg.InputDropout)
	return p.rest(p.Layers[0].ForwardSparse(x))
}

func (p *MLP) rest(h *G.Node) *G.Node {
	for i := range p.Layers {
		if i > 0 {
			h = p.Layers[i].Forward(h)
		}
		if i == len(p.Layers)-1 && p.Cfg.PlainLast {
			break
		}
		if p.Cfg.NormFirst {
			h = p.Norms[i].Forward(h)
			h = p.m.Dropout(h, p.Cfg.Dropout)
			h = p.Cfg.Activation.apply(h)
			continue
		}
		h = p.Cfg.Activation.apply(h)
		h = p.Norms[i].Forward(h)
		h = p.m.Dropout(h, p.Cfg.Dropout)
	}
	return h
}

func (p *MLP) String() string {
	parts := make([]string, len(p.Cfg.Dims))
	for i, d := range p.Cfg.Dims {
		parts[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("MLP(%s: %s, %s, norm=%s, dropout=%g, plain_last=%v)", p.Name, strings.Join(parts, "→"), p.Cfg.Activation, p.Cfg.Norm, p.Cfg.Dropout, p.Cfg.PlainLast)
}

// CopyFrom copies every parameter and norm statistic of an MLP with the same
// configuration (usually the same MLP in an earlier stage's model).
func (p *MLP) CopyFrom(o *MLP) error {
	if len(p.Layers) != len(o.Layers) {
		return fmt.Errorf("layers: MLP %s has %d layers, %s has %d", p.Name, len(p.Layers), o.Name, len(o.Layers))
	}
	for i, l := range p.Layers {
		if err := l.CopyFrom(o.Layers[i]); err != nil {
			return err
		}
		p.Norms[i].CopyFrom(o.Norms[i])
	}
	return nil
}
