package dp

import (
	"errors"
	"fmt"
	"strings"
)

// Accountant turns a ledger of privacy events into (ε, δ).
//
// Compose is checks-then-commits: it validates the event and computes its
// whole contribution before changing any state, so a rejected event (invalid
// parameters, unsupported type, an RDP curve returning NaN) leaves the
// accountant exactly as it was. Implementations are not safe for concurrent
// use.
type Accountant interface {
	// Name identifies the accountant in reports ("gdp", "rdp",
	// "rdp-standard"); NewAccountant(Name()) builds a fresh one of the same
	// kind (for RDP: the same conversion on the default orders).
	Name() string
	// Supports reports whether Compose can account for the event's type
	// (including every event nested in a ComposedEvent).
	Supports(Event) bool
	// Compose adds the event to the ledger.
	Compose(Event) error
	// Epsilon returns the ε of everything composed so far at δ ∈ (0, 1);
	// 0 when nothing was composed.
	Epsilon(delta float64) (float64, error)
	// Ledger returns a copy of the composed events, in order.
	Ledger() []Event
}

var (
	_ Accountant = (*RDP)(nil)
	_ Accountant = (*GDP)(nil)
	_ Accountant = (*PLD)(nil)
)

// AccountantNames lists the names NewAccountant accepts.
func AccountantNames() []string { return []string{"gdp", "rdp", "rdp-standard", "pld"} }

// NewAccountant returns a fresh accountant by name:
//
//	"gdp"           exact Gaussian / GDP accountant (NewGDP)
//	"rdp"           RDP accountant, default orders, ConversionImproved
//	"rdp-standard"  RDP accountant, default orders, ConversionStandard
//	"pld"           privacy-loss-distribution accountant, default grid (NewPLD)
func NewAccountant(name string) (Accountant, error) {
	switch strings.ToLower(name) {
	case "gdp":
		return NewGDP(), nil
	case "rdp", "rdp-improved":
		return NewRDP()
	case "rdp-standard":
		return NewRDP(WithConversion(ConversionStandard))
	case "pld":
		return NewPLD()
	}
	return nil, fmt.Errorf("dp: unknown accountant %q (want one of %s)", name, strings.Join(AccountantNames(), ", "))
}

// Auto is the accountant name a plan gives to have AutoAccountant choose.
const Auto = "auto"

// AutoAccountant returns "pld" when the PLD accountant has a rule for every
// one of the events (it is then the tightest of dpgnn's accountants: only
// its discretisation is lost, pessimistically), and "rdp" otherwise (an
// RDP curve, an RDPer or an occurrence structure without a group pair).
// Either is a valid bound; the choice reads only the events' structure,
// never data.
func AutoAccountant(events []Event) string {
	a, err := NewPLD()
	if err != nil || len(events) == 0 {
		return "rdp"
	}
	for _, e := range events {
		if !a.Supports(e) {
			return "rdp"
		}
	}
	return "pld"
}

func isUnsupported(err error) bool {
	var u *UnsupportedEventError
	return errors.As(err, &u)
}
