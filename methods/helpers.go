package methods

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
)

// DefaultSplitFor is the split used when neither --split nor a
// method-specific protocol applies: the published masks for datasets that
// ship them, 20 labelled nodes per class for the citation graphs (the
// Planetoid protocol), and a stratified 10%/20% split otherwise.
func DefaultSplitFor(dataset string) string {
	switch dataset {
	case "actor":
		return "masks:0"
	case "cora_ml", "citeseer":
		return "per-class:20:500:1000"
	}
	if len(dataset) > 6 && dataset[:6] == "chain-" {
		return "fixed"
	}
	return "ratio:0.1:0.2"
}

// CheckAll returns the first non-nil error.
func CheckAll(errs ...error) error { return errors.Join(errs...) }

// Positive requires v > 0.
func Positive(name string, v int) error {
	if v <= 0 {
		return fmt.Errorf("--%s must be positive, got %d", name, v)
	}
	return nil
}

// PositiveF requires v > 0 and finite.
func PositiveF(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("--%s must be positive and finite, got %v", name, v)
	}
	return nil
}

// NonNegF requires v ≥ 0 and finite.
func NonNegF(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("--%s must be non-negative and finite, got %v", name, v)
	}
	return nil
}

// Prob requires 0 ≤ v < 1.
func Prob(name string, v float64) error {
	if !(v >= 0 && v < 1) {
		return fmt.Errorf("--%s must be in [0, 1), got %v", name, v)
	}
	return nil
}

// Size limits checked before anything is allocated: a value beyond them is
// a typo or an attack, not an experiment.
const (
	// MaxWidth bounds hidden sizes and embedding widths.
	MaxWidth = 1 << 16
	// MaxDepth bounds layer and hop counts.
	MaxDepth = 64
	// MaxEpochs bounds epoch counts.
	MaxEpochs = 1 << 20
)

// Width requires 0 < v ≤ MaxWidth.
func Width(name string, v int) error {
	if v <= 0 || v > MaxWidth {
		return fmt.Errorf("--%s must be in [1, %d], got %d", name, MaxWidth, v)
	}
	return nil
}

// Depth requires 0 < v ≤ MaxDepth (hops: each one is an aggregation over
// the graph, and at edge or node level each one costs privacy).
func Depth(name string, v int) error {
	if v <= 0 || v > MaxDepth {
		return fmt.Errorf("--%s must be in [1, %d], got %d", name, MaxDepth, v)
	}
	return nil
}

// Epochs requires 0 < v ≤ MaxEpochs.
func Epochs(name string, v int) error {
	if v <= 0 || v > MaxEpochs {
		return fmt.Errorf("--%s must be in [1, %d], got %d", name, MaxEpochs, v)
	}
	return nil
}

// CheckMemory refuses a run whose memory estimate (bytes, for what)
// exceeds ctx.MaxMemory (graphs.MemoryLimit when 0), before it allocates.
func CheckMemory(ctx *Context, what string, bytes float64) error {
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
func CheckModelMemory(ctx *Context, method string, hidden, layers int) error {
	g := ctx.Graph
	f := 0
	if g.X != nil {
		f = g.X.F
	}
	b := DenseBytes(g.N, hidden, 12*float64(layers)) + DenseBytes(f, hidden, 4) + DenseBytes(g.N, g.NumClasses, 8)
	return CheckMemory(ctx, fmt.Sprintf("%s on %d nodes (hidden %d, %d layers)", method, g.N, hidden, layers), b)
}
