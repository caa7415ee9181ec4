package dp

import (
	"math"
	"testing"
)

// TestPairPLDLargeGroupTinyNoise: a noise that protects nothing must never
// be reported cheap. With the pair's PLD allowed up to 1000 examples, R =
// 169 at z = 0.001 (std 0.338 C against sums that move by up to 169 C)
// over 5 steps at q = 0.236 gave ε = 0 at δ = 1e-5; the true ε is
// enormous (rdp: 2.4e6). Every accountant that accepts the event must
// report at least 100 here, for small groups too.
func TestPairPLDLargeGroupTinyNoise(t *testing.T) {
	for _, r := range []int{2, 3, 8, 169} {
		ev := Composed{Count: 5, Event: Occurrences{R: r, Change: 2, Event: Poisson{Rate: 0.236, Event: GaussianEvent{Multiplier: 0.001, Count: 1}}}}
		for _, acct := range []string{"pld", "rdp", Auto} {
			name := acct
			if acct == Auto {
				name = AutoAccountant([]Event{ev})
			}
			eps, err := EpsilonOf(name, []Event{ev}, 1e-5)
			if err != nil {
				if name == "pld" && r > 8 {
					continue // refused: no pair above maxPairExamples
				}
				t.Fatalf("R=%d %s: %v", r, name, err)
			}
			if !(eps >= 100) && !math.IsInf(eps, 1) {
				t.Errorf("R=%d %s: ε = %g for a noise that protects nothing", r, name, eps)
			}
		}
	}
}
