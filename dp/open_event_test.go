package dp_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
)

// outsideGaussian is a mechanism defined outside dp that states its RDP
// curve: the Gaussian mechanism of multiplier Z, α/(2Z²).
type outsideGaussian struct{ Z float64 }

func (o outsideGaussian) String() string { return fmt.Sprintf("outsideGaussian(z=%g)", o.Z) }
func (o outsideGaussian) Validate() error {
	if !(o.Z > 0) {
		return fmt.Errorf("outsideGaussian: z = %g, want > 0", o.Z)
	}
	return nil
}
func (o outsideGaussian) RDP(alpha float64) (float64, error) { return alpha / (2 * o.Z * o.Z), nil }

// outsideSilent is an outside mechanism that says nothing about its privacy.
type outsideSilent struct{}

func (outsideSilent) String() string  { return "outsideSilent" }
func (outsideSilent) Validate() error { return nil }

// outsideBroken states a curve that fails.
type outsideBroken struct{}

func (outsideBroken) String() string               { return "outsideBroken" }
func (outsideBroken) Validate() error              { return nil }
func (outsideBroken) RDP(float64) (float64, error) { return 0, errors.New("no bound") }

// outsideGDP is an outside mechanism that is μ-GDP.
type outsideGDP struct{ Mu float64 }

func (o outsideGDP) String() string          { return fmt.Sprintf("outsideGDP(mu=%g)", o.Mu) }
func (o outsideGDP) Validate() error         { return nil }
func (o outsideGDP) GDPMu() (float64, error) { return o.Mu, nil }

// TestOutsideGDPEvent: an outside event that implements dp.GDPer composes
// under every accountant with exactly the ε of GDPEvent{μ} (alone and
// repeated by Composed); a μ that is not positive and finite is rejected.
func TestOutsideGDPEvent(t *testing.T) {
	for _, name := range dp.AccountantNames() {
		for _, tc := range []struct{ outside, builtin dp.Event }{
			{outsideGDP{Mu: 0.8}, dp.GDPEvent{Mu: 0.8}},
			{dp.Composed{Count: 5, Event: outsideGDP{Mu: 0.3}}, dp.Composed{Count: 5, Event: dp.GDPEvent{Mu: 0.3}}},
		} {
			got, err := dp.EpsilonOf(name, []dp.Event{tc.outside}, 1e-5)
			want, err2 := dp.EpsilonOf(name, []dp.Event{tc.builtin}, 1e-5)
			if err != nil || err2 != nil || got != want || !(got > 0) {
				t.Errorf("%s: %s gives %v (%v), %s %v (%v)", name, tc.outside, got, err, tc.builtin, want, err2)
			}
		}
		for _, mu := range []float64{0, -1, math.NaN(), math.Inf(1)} {
			acct, _ := dp.NewAccountant(name)
			if err := acct.Compose(outsideGDP{Mu: mu}); err == nil {
				t.Errorf("%s composed an outside GDP event with μ = %v", name, mu)
			}
		}
	}
}

// TestOutsideEvent: an event type defined outside dp composes under the RDP
// accountants when it implements dp.RDPer — alone, repeated by Composed,
// and in a sequence, with the ε of the built-in event of the same curve —
// and is refused (UnsupportedEventError, accountant unchanged) by every
// accountant when it does not, and by gdp and pld even when it does.
func TestOutsideEvent(t *testing.T) {
	const delta = 1e-5
	for _, tc := range []struct {
		outside, builtin dp.Event
	}{
		{outsideGaussian{Z: 3}, dp.GaussianEvent{Multiplier: 3, Count: 1}},
		{dp.Composed{Count: 7, Event: outsideGaussian{Z: 3}}, dp.GaussianEvent{Multiplier: 3, Count: 7}},
		{dp.ComposedEvent{Events: []dp.Event{outsideGaussian{Z: 2}, dp.GaussianEvent{Multiplier: 5, Count: 2}}},
			dp.ComposedEvent{Events: []dp.Event{dp.GaussianEvent{Multiplier: 2, Count: 1}, dp.GaussianEvent{Multiplier: 5, Count: 2}}}},
	} {
		for _, name := range []string{"rdp", "rdp-standard"} {
			got, err := dp.EpsilonOf(name, []dp.Event{tc.outside}, delta)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, tc.outside, err)
			}
			want, err := dp.EpsilonOf(name, []dp.Event{tc.builtin}, delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-9*want || got <= 0 {
				t.Errorf("%s: %s gives ε %v, the built-in %s %v", name, tc.outside, got, tc.builtin, want)
			}
		}
	}
	for _, name := range dp.AccountantNames() {
		refused := []dp.Event{outsideSilent{}, dp.Composed{Count: 3, Event: outsideSilent{}},
			dp.Poisson{Rate: 0.1, Event: outsideGaussian{Z: 1}}}
		if name == "gdp" || name == "pld" {
			refused = append(refused, outsideGaussian{Z: 3})
		}
		for _, e := range refused {
			acct, err := dp.NewAccountant(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := acct.Compose(dp.GaussianEvent{Multiplier: 2, Count: 1}); err != nil {
				t.Fatal(err)
			}
			before, _ := acct.Epsilon(delta)
			if acct.Supports(e) {
				t.Errorf("%s supports %s", name, e)
			}
			var u *dp.UnsupportedEventError
			if err := acct.Compose(e); !errors.As(err, &u) {
				t.Errorf("%s: Compose(%s) = %v, want an UnsupportedEventError", name, e, err)
			}
			if after, _ := acct.Epsilon(delta); after != before || len(acct.Ledger()) != 1 {
				t.Errorf("%s: refused %s changed ε %v → %v", name, e, before, after)
			}
		}
	}
	// A curve that fails is rejected at Compose, not taken as zero.
	acct, _ := dp.NewAccountant("rdp")
	if err := acct.Compose(outsideBroken{}); err == nil {
		t.Error("rdp composed a curve that returns an error")
	}
	// An outside event that fails its own validation is rejected.
	if err := acct.Compose(outsideGaussian{Z: 0}); err == nil {
		t.Error("rdp composed an invalid outside event")
	}
}
