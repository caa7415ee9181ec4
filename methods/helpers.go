package methods

import (
	"errors"
	"fmt"
	"math"
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
