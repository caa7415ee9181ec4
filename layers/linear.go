package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Init selects a weight initialiser for Linear.
type Init int

const (
	// InitPyG is PyTorch/PyG's default: W and b ~ U(±1/√fan_in).
	InitPyG Init = iota
	// InitGlorot is Glorot-uniform weights and zero bias (GCNConv).
	InitGlorot
)

// Linear computes y = x·W + b for x of shape (N, In); W is (In, Out), b (Out).
type Linear struct {
	Name    string
	In, Out int
	W, B    *nn.Param // B is nil without bias
	m       *nn.Model
}

// NewLinear adds a Linear layer's parameters to m.
func NewLinear(m *nn.Model, name string, in, out int, bias bool, init Init) *Linear {
	l := &Linear{Name: name, In: in, Out: out, m: m}
	switch init {
	case InitGlorot:
		l.W = m.NewParam(name+".W", nn.GlorotUniform(), in, out)
		if bias {
			l.B = m.NewParam(name+".b", nn.Constant(0), out)
		}
	default:
		l.W = m.NewParam(name+".W", nn.FanInUniform(in), in, out)
		if bias {
			l.B = m.NewParam(name+".b", nn.FanInUniform(in), out)
		}
	}
	return l
}

// Forward applies the layer to a dense (N, In) node. On a model's recorded
// (DP-SGD) path it also records W and b for per-sample gradients.
func (l *Linear) Forward(x *G.Node) *G.Node {
	return l.m.RecordLinear(l.Affine(x), l.W, l.B, x, nil)
}

// Affine is x·W + b for a dense (N, In) node, the bias added by the
// product's kernel as each chunk of rows is computed (nn.MatMulBias: the
// bits of AddBias(MatMul(x, W)) without a pass of its own).
func (l *Linear) Affine(x *G.Node) *G.Node {
	if l.B == nil {
		return nn.MatMul(x, l.W.Node)
	}
	return nn.MatMulBias(x, l.W.Node, l.B.Node)
}

// ForwardSparse applies the layer to a constant sparse (N, In) matrix
// (bag-of-words features) without densifying it: y = SpMM(X, W) + b.
func (l *Linear) ForwardSparse(x *nn.Sparse) *G.Node {
	y := l.AddBias(G.Must(nn.SpMM(x, l.W.Node)))
	return l.m.RecordLinear(y, l.W, l.B, nil, x)
}

// AddBias adds b to every row of h (identity without bias).
func (l *Linear) AddBias(h *G.Node) *G.Node {
	if l.B == nil {
		return h
	}
	return nn.AddRow(h, l.B.Node)
}

func (l *Linear) String() string {
	return fmt.Sprintf("Linear(%s: %d→%d, bias=%v)", l.Name, l.In, l.Out, l.B != nil)
}

// CopyFrom copies W and b from a layer of the same shape.
func (l *Linear) CopyFrom(o *Linear) error {
	if l.In != o.In || l.Out != o.Out || (l.B == nil) != (o.B == nil) {
		return fmt.Errorf("layers: cannot copy %s into %s", o, l)
	}
	copy(l.W.Value(), o.W.Value())
	if l.B != nil {
		copy(l.B.Value(), o.B.Value())
	}
	return nil
}
