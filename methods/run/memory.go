package run

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
)

// Begin is the prologue of a method's run: it refuses a model of `layers`
// hidden layers of width `hidden` above the memory limit
// (CheckModelMemory), before anything is allocated or released. (The
// run's ledger exists already: methods.NewContext creates it.)
func Begin(ctx *methods.Context, method string, hidden, layers int) error {
	return CheckModelMemory(ctx, method, hidden, layers)
}

// CheckMemory refuses a run whose memory estimate (bytes, for what)
// exceeds ctx.MaxMemory (graphs.MemoryLimit when 0), before it allocates.
func CheckMemory(ctx *methods.Context, what string, bytes float64) error {
	limit := float64(ctx.MaxMemory)
	if limit <= 0 {
		l, err := graphs.MemoryLimit()
		if err != nil {
			return err
		}
		limit = float64(l)
	}
	if bytes > limit {
		return fmt.Errorf("%s needs about %.3g GB, above the limit of %.3g GB (--max-memory); reduce the sizes", what, bytes/1e9, limit/1e9)
	}
	return nil
}

// DenseBytes estimates the memory of `copies` float64 matrices of rows×cols
// (activations, gradients, optimiser state, masks).
func DenseBytes(rows, cols int, copies float64) float64 {
	return 8 * float64(rows) * float64(cols) * copies
}

// CheckModelMemory estimates a node model of `layers` hidden layers of
// width `hidden` on ctx's graph — every node's activations, gradients,
// optimiser state and masks (a dozen N×hidden matrices per layer), the
// first layer's weights (F×hidden, four copies) and the logits (N×C) — and
// refuses it above the memory limit before anything is allocated.
func CheckModelMemory(ctx *methods.Context, method string, hidden, layers int) error {
	g := ctx.Graph
	f := 0
	if g.X != nil {
		f = g.X.F
	}
	b := DenseBytes(g.N, hidden, 12*float64(layers)) + DenseBytes(f, hidden, 4) + DenseBytes(g.N, g.NumClasses, 8)
	return CheckMemory(ctx, fmt.Sprintf("%s on %d nodes (hidden %d, %d layers)", method, g.N, hidden, layers), b)
}
