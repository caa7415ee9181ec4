package dp

import (
	"errors"
	"testing"
)

// strangeEvent is an event type no accountant has a rule for: what a new
// mechanism looks like before its accounting is written.
type strangeEvent struct{}

func (strangeEvent) String() string  { return "strange" }
func (strangeEvent) Validate() error { return nil }

// TestUnknownEventRefused: every accountant refuses an event type it has no
// rule for, alone or inside a composition, and is left unchanged, instead
// of composing it as zero privacy loss (the RDP accountant used to accept
// any type and add nothing).
func TestUnknownEventRefused(t *testing.T) {
	for _, name := range AccountantNames() {
		acct, err := NewAccountant(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := acct.Compose(GaussianEvent{Multiplier: 2, Count: 1}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before, err := acct.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []Event{strangeEvent{}, ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 2, Count: 1}, strangeEvent{}}}} {
			if acct.Supports(e) {
				t.Errorf("%s supports %s", name, e)
			}
			err := acct.Compose(e)
			var u *UnsupportedEventError
			if !errors.As(err, &u) {
				t.Errorf("%s: Compose(%s) = %v, want an UnsupportedEventError", name, e, err)
			}
		}
		after, err := acct.Epsilon(1e-5)
		if err != nil || after != before || len(acct.Ledger()) != 1 {
			t.Errorf("%s: a refused event changed the accountant: ε %g → %g (%v), %d ledger entries", name, before, after, err, len(acct.Ledger()))
		}
	}
}
