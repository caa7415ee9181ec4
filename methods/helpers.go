package methods

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
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

// A FieldCheck is the result of one condition on a config field: the
// field (a pointer into the config) and, when its value fails, what is
// wrong with it. Require and the helpers below make checks; CheckFields
// names their fields.
type FieldCheck struct {
	field   any
	problem string
}

// Require is the check of the condition ok on the field p points to: when
// ok is false, the problem is the formatted text, which follows the
// field's name and flag in the error ("must be ..., got ...").
func Require(p any, ok bool, format string, args ...any) FieldCheck {
	c := FieldCheck{field: p}
	if !ok {
		c.problem = fmt.Sprintf(format, args...)
	}
	return c
}

// CheckFields returns the problems of the failing checks as one error
// (errors.Join; nil when all pass), each naming its field by its Go name
// and its flag: "Hidden (--hidden) must be in [1, 65536], got 0". Every
// check must be on a field of the config cfg points to (embedded structs
// included); a check on anything else is a programming error and panics,
// whether it fails or not.
func CheckFields(cfg any, checks ...FieldCheck) error {
	fields := configFields(cfg)
	var errs []error
	for _, c := range checks {
		f := fieldAt(cfg, fields, c.field)
		if c.problem != "" {
			errs = append(errs, fmt.Errorf("%s (--%s) %s", f.name, f.flag, c.problem))
		}
	}
	return errors.Join(errs...)
}

// fieldAt is the field of fields that p points to.
func fieldAt(cfg any, fields []configField, p any) configField {
	pv := reflect.ValueOf(p)
	if pv.Kind() == reflect.Pointer && !pv.IsNil() {
		for _, f := range fields {
			if f.value.Addr().Pointer() == pv.Pointer() && f.value.Type() == pv.Type().Elem() {
				return f
			}
		}
	}
	panic(fmt.Sprintf("methods: a check on %T that is not a pointer to a field of the config %T", p, cfg))
}

// CheckAll joins the non-nil errors into one (errors.Join; nil when there
// are none).
func CheckAll(errs ...error) error { return errors.Join(errs...) }

// Positive requires *p > 0.
func Positive(p *int) FieldCheck { return Require(p, *p > 0, "must be positive, got %d", *p) }

// PositiveF requires *p > 0 and finite.
func PositiveF(p *float64) FieldCheck {
	return Require(p, *p > 0 && !math.IsInf(*p, 0), "must be positive and finite, got %v", *p)
}

// NonNegF requires *p ≥ 0 and finite.
func NonNegF(p *float64) FieldCheck {
	return Require(p, *p >= 0 && !math.IsInf(*p, 0), "must be non-negative and finite, got %v", *p)
}

// Prob requires 0 ≤ *p < 1.
func Prob(p *float64) FieldCheck {
	return Require(p, *p >= 0 && *p < 1, "must be in [0, 1), got %v", *p)
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

// Width requires 0 < *p ≤ MaxWidth.
func Width(p *int) FieldCheck { return inRange(p, 1, MaxWidth) }

// Depth requires 0 < *p ≤ MaxDepth (hops: each one is an aggregation over
// the graph, and at edge or node level each one costs privacy).
func Depth(p *int) FieldCheck { return inRange(p, 1, MaxDepth) }

// Epochs requires 0 < *p ≤ MaxEpochs.
func Epochs(p *int) FieldCheck { return inRange(p, 1, MaxEpochs) }

// DepthOrZero requires 0 ≤ *p ≤ MaxDepth (an optional stage: 0 leaves it
// out).
func DepthOrZero(p *int) FieldCheck { return inRange(p, 0, MaxDepth) }

func inRange(p *int, lo, hi int) FieldCheck {
	return Require(p, *p >= lo && *p <= hi, "must be in [%d, %d], got %d", lo, hi, *p)
}

// OneOf requires *p to be one of choices.
func OneOf(p *string, choices ...string) FieldCheck {
	want := strings.Join(choices, " or ")
	if n := len(choices); n > 2 {
		want = strings.Join(choices[:n-1], ", ") + " or " + choices[n-1]
	}
	return Require(p, slices.Contains(choices, *p), "must be %s, got %q", want, *p)
}
