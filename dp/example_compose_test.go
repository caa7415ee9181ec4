package dp_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
)

// A custom composition: a node-level pipeline that releases two noisy
// aggregations (noise multiplier 4), trains with DP-SGD (2,000 steps, each
// a Poisson sample at rate 0.01 with a Gaussian of multiplier 1.1) and
// answers one pure-ε query on a 10% subsample. Samplers are wrappers
// (Poisson, Composed) around base mechanisms, not new types; the RDP
// accountant composes all three from their structure, and the ledger is
// the privacy receipt.
func Example_customComposition() {
	acct, err := dp.NewRDP()
	if err != nil {
		fmt.Println(err)
		return
	}
	events := []dp.Event{
		dp.ComposedEvent{Events: []dp.Event{
			dp.GaussianEvent{Multiplier: 4, Count: 2},
			dp.Composed{Count: 2000, Event: dp.Poisson{Rate: 0.01, Event: dp.GaussianEvent{Multiplier: 1.1, Count: 1}}},
		}},
		dp.Poisson{Rate: 0.1, Event: dp.PureEvent{Epsilon: 0.5, Count: 1}},
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
	//   Composed[Gaussian(multiplier=4, count=2), Composed(count=2000, Poisson(rate=0.01, Gaussian(multiplier=1.1, count=1)))]
	//   Poisson(rate=0.1, Pure(epsilon=0.5, count=1))
	// DP-SGD alone: ε = 2.381
}
