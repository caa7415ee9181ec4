package methods

import "github.com/dpgnn/dpgnn/nn"

// Builder is implemented by methods whose expression graph can be built
// without training, for `dpgnn inspect`: the forward pass, the gradient
// nodes, and the privacy nodes (noise, clip factors, clipped sums,
// objective-perturbation terms) when ctx is private. Multi-stage methods
// build their last stage.
type Builder interface {
	BuildModel(ctx *Context) (*nn.Model, error)
}
