package run

import (
	"fmt"

	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
)

// Builder is implemented by methods whose expression graph can be built
// without training, for `dpgnn inspect`: the forward pass, the gradient
// nodes, and the privacy nodes (noise, clip factors, clipped sums,
// objective-perturbation terms) when ctx is private. Multi-stage methods
// build their last stage.
type Builder interface {
	BuildModel(ctx *methods.Context) (*nn.Model, error)
}

// BuildModel builds m's model for ctx, or says that m cannot be built
// without training.
func BuildModel(m methods.Method, ctx *methods.Context) (*nn.Model, error) {
	b, ok := m.(Builder)
	if !ok {
		return nil, fmt.Errorf("method %s cannot be inspected: it does not implement methods.Builder (its graph is built only while training)", m.Name())
	}
	model, err := b.BuildModel(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: building the model: %w", m.Name(), err)
	}
	return model, nil
}
