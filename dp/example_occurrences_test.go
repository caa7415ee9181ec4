package dp_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
)

// Node-level DP-SGD where one node changes up to R = 3 examples (its own
// and two neighbours'), each by at most 2C: the sampler × mechanism pair is
// Occurrences around Poisson around a Gaussian, not a type of its own. The
// multiplier z is the noise std over the sensitivity of the whole released
// sum, R·Change·C, so the std actually added is z·R·Change·C.
func Example_occurrences() {
	z, r, change, clip := 3.0, 3, 2.0, 1.0
	step := dp.Occurrences{R: r, Change: change, Event: dp.Poisson{Rate: 0.05, Event: dp.GaussianEvent{Multiplier: z, Count: 1}}}
	run := dp.Composed{Count: 1000, Event: step}
	eps, err := dp.EpsilonOf("rdp", []dp.Event{run}, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("noise std %.1f per unit of clip; ε = %.3f at δ = 1e-5 (rdp)\n", dp.OccurrencesNoiseStd(z, r, change, clip), eps)
	// Under Poisson sampling both rdp (at each order the smaller of the
	// occurrence curve and the pair's certified RDP) and pld (the pair's
	// privacy loss distribution) use the exact group pair: with no split
	// stated, every changed example is one deletion and one insertion.
	if eps, err = dp.EpsilonOf("pld", []dp.Event{run}, 1e-5); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε = %.3f at δ = 1e-5 (pld)\n", eps)
	// gdp has no rule for a unit that changes several examples: it refuses
	// it rather than count it as one.
	_, err = dp.EpsilonOf("gdp", []dp.Event{run}, 1e-5)
	fmt.Println(err != nil)
	// Output:
	// noise std 18.0 per unit of clip; ε = 2.298 at δ = 1e-5 (rdp)
	// ε = 2.113 at δ = 1e-5 (pld)
	// true
}
