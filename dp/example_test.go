package dp_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
)

// A mechanism describes what it does; the accountant is told about it with
// an event; calibration inverts the accountant.
func Example() {
	// Noise multiplier for two Gaussian aggregations (edge-level ProGAP,
	// K = 2) at (ε, δ) = (1, 1e-8), with the exact Gaussian accountant.
	z, err := dp.CalibrateNoise(1, 1e-8, "gdp", func(z float64) []dp.Event { return []dp.Event{dp.GaussianEvent{Multiplier: z, Count: 2}} })
	if err != nil {
		fmt.Println(err)
		return
	}
	mech := dp.Gaussian{Multiplier: z, Sensitivity: 1}

	src := dp.NewSource(1)
	agg := []float64{0.5, 1.5, 2.5}
	if err := mech.AddNoise(agg, src); err != nil {
		fmt.Println(err)
		return
	}

	acct := dp.NewGDP()
	if err := acct.Compose(mech.Event(2)); err != nil {
		fmt.Println(err)
		return
	}
	eps, _ := acct.Epsilon(1e-8)
	fmt.Printf("z = %.4f, ε = %.6f, ledger of %d event(s)\n", z, eps, len(acct.Ledger()))
	// Output:
	// z = 7.2129, ε = 1.000000, ledger of 1 event(s)
}

// DP-SGD: the Poisson-subsampled Gaussian under the RDP accountant.
func ExampleRDP() {
	// 60 epochs of batch 256 on 60,000 examples, noise multiplier 1.1.
	step := dp.PoissonGaussianEvent{Rate: 256.0 / 60000, Multiplier: 1.1, Steps: 14100}
	for _, conv := range []dp.Conversion{dp.ConversionStandard, dp.ConversionImproved} {
		acct, err := dp.NewRDP(dp.WithConversion(conv))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := acct.Compose(step); err != nil {
			fmt.Println(err)
			return
		}
		eps, order, _ := acct.EpsilonAndOrder(1e-5)
		fmt.Printf("%s: ε = %.3f at order %.1f\n", conv, eps, order)
	}
	// Output:
	// standard: ε = 3.012 at order 8.8
	// improved: ε = 2.600 at order 8.1
}

func ExampleDeltaAuto() {
	for _, edges := range []int{2708, 10556, 2117924} {
		d, _ := dp.DeltaAuto(edges)
		fmt.Println(edges, d)
	}
	// Output:
	// 2708 0.0001
	// 10556 1e-05
	// 2117924 1e-07
}

func ExampleGumbelTopK() {
	// Pick 2 of 5 candidates with the exponential mechanism (ε₀ = 1 per
	// pick, scores of sensitivity 0.1): Gumbel scale 2·0.1/1.
	scores := []float64{0.1, 0.9, 0.4, 0.05, 0.7}
	top, _ := dp.GumbelTopK(scores, 2, 0.2, dp.NewSource(7))
	eps, _ := dp.GumbelTopKEpsilon(0.2, 0.1, 2, 0)
	fmt.Println(len(top), eps)
	// Output:
	// 2 2
}
