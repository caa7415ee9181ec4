package dp_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
)

// A custom composition: a node-level pipeline that releases two noisy
// aggregations (noise multiplier 4), trains with DP-SGD (rate 0.01, noise
// 1.1, 2,000 steps) and answers one pure-ε query on a 10% subsample. The
// RDP accountant composes all three; the ledger is the privacy receipt.
func Example_customComposition() {
	acct, err := dp.NewRDP()
	if err != nil {
		fmt.Println(err)
		return
	}
	events := []dp.Event{
		dp.ComposedEvent{Events: []dp.Event{
			dp.GaussianEvent{Multiplier: 4, Count: 2},
			dp.PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 2000},
		}},
		dp.PureEvent{Epsilon: 0.5, Count: 1, Rate: 0.1},
	}
	for _, e := range events {
		if err := acct.Compose(e); err != nil {
			fmt.Println(err)
			return
		}
	}
	eps, order, err := acct.EpsilonAndOrder(1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε = %.3f at δ = 1e-5 (best order %.1f), %d ledger entries\n", eps, order, len(acct.Ledger()))
	for _, e := range acct.Ledger() {
		fmt.Println(" ", e)
	}
	// The composition costs more than DP-SGD alone.
	alone, _ := dp.NewRDP()
	_ = alone.Compose(dp.PoissonGaussianEvent{Rate: 0.01, Multiplier: 1.1, Steps: 2000})
	sgd, _ := alone.Epsilon(1e-5)
	fmt.Printf("DP-SGD alone: ε = %.3f\n", sgd)
	// Output:
	// ε = 2.881 at δ = 1e-5 (best order 7.4), 2 ledger entries
	//   Composed[Gaussian(multiplier=4, count=2), PoissonGaussian(rate=0.01, multiplier=1.1, steps=2000)]
	//   Pure(epsilon=0.5, count=1, rate=0.1)
	// DP-SGD alone: ε = 2.381
}
