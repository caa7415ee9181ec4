package gcon

import (
	"fmt"
	"math"
)

// LossKind selects GCON's per-class convex base loss ℓ(x; y) (GCON App. F).
type LossKind int

const (
	// SoftMargin is PyTorch's MultiLabelSoftMarginLoss per class:
	// ℓ = −(1/c)[y log σ(x) + (1−y) log(1−σ(x))].
	SoftMargin LossKind = iota
	// PseudoHuber is ℓ = (δ_l²/c)(√(1 + (x−y)²/δ_l²) − 1).
	PseudoHuber
)

// ParseLoss reads "softmargin" or "pseudohuber".
func ParseLoss(s string) (LossKind, error) {
	switch s {
	case "softmargin", "soft-margin", "sm":
		return SoftMargin, nil
	case "pseudohuber", "pseudo-huber", "ph":
		return PseudoHuber, nil
	}
	return SoftMargin, fmt.Errorf("unknown loss %q (want softmargin or pseudohuber)", s)
}

func (k LossKind) String() string {
	if k == PseudoHuber {
		return "pseudohuber"
	}
	return "softmargin"
}

// Loss is ℓ(x; y) with its 1/c factor built in (pitfall P4) and its
// derivatives with respect to x. C1, C2, C3 are sup|ℓ'|, sup|ℓ”| and
// sup|ℓ”'| over x ∈ R and y ∈ {0, 1} (Eq. 19), the constants CALIBRATE
// needs.
type Loss struct {
	Kind    LossKind
	Classes int     // c ≥ 1
	DeltaL  float64 // δ_l > 0 (pseudo-Huber only)
}

// NewLoss validates and returns a loss.
func NewLoss(kind LossKind, classes int, deltaL float64) (Loss, error) {
	if classes < 1 {
		return Loss{}, fmt.Errorf("gcon: loss needs at least one class, got %d", classes)
	}
	if kind == PseudoHuber && !(deltaL > 0 && !math.IsInf(deltaL, 1)) {
		return Loss{}, fmt.Errorf("gcon: pseudo-Huber δ_l must be positive and finite, got %v", deltaL)
	}
	return Loss{Kind: kind, Classes: classes, DeltaL: deltaL}, nil
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is log(1 + e^x), stable for large |x|.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// Value is ℓ(x; y).
func (l Loss) Value(x, y float64) float64 {
	c := float64(l.Classes)
	if l.Kind == PseudoHuber {
		u := (x - y) / l.DeltaL
		return l.DeltaL * l.DeltaL / c * (math.Sqrt(1+u*u) - 1)
	}
	// −[y log σ(x) + (1−y) log(1−σ(x))] = softplus(x) − y·x.
	return (softplus(x) - y*x) / c
}

// D1 is ℓ'(x; y).
func (l Loss) D1(x, y float64) float64 {
	c := float64(l.Classes)
	if l.Kind == PseudoHuber {
		u := (x - y) / l.DeltaL
		return (x - y) / (c * math.Sqrt(1+u*u))
	}
	return (sigmoid(x) - y) / c
}

// D2 is ℓ”(x; y).
func (l Loss) D2(x, y float64) float64 {
	c := float64(l.Classes)
	if l.Kind == PseudoHuber {
		u := (x - y) / l.DeltaL
		return 1 / (c * math.Pow(1+u*u, 1.5))
	}
	s := sigmoid(x)
	return s * (1 - s) / c
}

// D3 is ℓ”'(x; y).
func (l Loss) D3(x, y float64) float64 {
	c := float64(l.Classes)
	if l.Kind == PseudoHuber {
		u := (x - y) / l.DeltaL
		return -3 * (x - y) / (c * l.DeltaL * l.DeltaL * math.Pow(1+u*u, 2.5))
	}
	s := sigmoid(x)
	return s * (1 - s) * (1 - 2*s) / c
}

// Constants returns (c1, c2, c3) = (sup|ℓ'|, sup|ℓ”|, sup|ℓ”'|):
// soft margin 1/c, 1/(4c), 1/(6√3·c); pseudo-Huber δ_l/c, 1/c,
// 48√5/(125·c·δ_l).
func (l Loss) Constants() (c1, c2, c3 float64) {
	c := float64(l.Classes)
	if l.Kind == PseudoHuber {
		return l.DeltaL / c, 1 / c, 48 * math.Sqrt(5) / (125 * c * l.DeltaL)
	}
	return 1 / c, 1 / (4 * c), 1 / (6 * math.Sqrt(3) * c)
}
