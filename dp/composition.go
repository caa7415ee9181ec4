package dp

import (
	"errors"
	"fmt"
	"math"
)

// KairouzStepBudget returns the per-mechanism budget (stepEps, stepDelta)
// that DPAR (Zhang et al., WWW 2024; Theorems 1 and 3) derives from the
// simplified "optimal composition" of Kairouz, Oh & Viswanath (2017) for k
// mechanisms to compose to (totalEps, totalDelta):
//
//	stepEps   = h_k(totalEps) = totalEps / (2·sqrt(k·ln(e + totalEps/totalDelta)))
//	stepDelta = totalDelta / (2k)
//
// Kairouz et al. state this simplified sufficient condition for small total
// ε; DPAR applies it far outside that range (total ε of 5–44 before
// amplification). It is here to reproduce DPAR; prefer an RDP or GDP
// accountant for a guarantee you rely on.
//
// It and its inverse KairouzTotalEpsilon serve only DPAR's paper
// accounting (methods/dpar), and stay in dp all the same: the inverse is
// one of dp's conservative bisections (bisect, rounding to the safe side),
// which is dp's own and not exported — moving the pair under the method
// would mean a second bisection outside dp or a new exported search. They
// are a general composition rule (Kairouz, Oh & Viswanath), not DPAR's.
func KairouzStepBudget(totalEps, totalDelta float64, k int) (stepEps, stepDelta float64, err error) {
	if err := CheckPositiveFinite("total epsilon", totalEps); err != nil {
		return 0, 0, err
	}
	if err := CheckDelta(totalDelta); err != nil {
		return 0, 0, err
	}
	if err := CheckCount("number of composed mechanisms", k); err != nil {
		return 0, 0, err
	}
	return kairouzH(totalEps, totalDelta, k), totalDelta / (2 * float64(k)), nil
}

func kairouzH(eg, dg float64, k int) float64 {
	return eg / (2 * math.Sqrt(float64(k)*math.Log(math.E+eg/dg)))
}

// KairouzTotalEpsilon inverts KairouzStepBudget: the total ε of k
// (stepEps, totalDelta/(2k))-DP mechanisms under the same simplified
// composition, i.e. the ε_g with h_k(ε_g) = stepEps (h_k is strictly
// increasing). It bisects to a relative 1e-13 and returns the upper end of
// the bracket (never below the true root).
func KairouzTotalEpsilon(stepEps, totalDelta float64, k int) (float64, error) {
	if err := CheckPositiveFinite("per-mechanism epsilon", stepEps); err != nil {
		return 0, err
	}
	if err := CheckDelta(totalDelta); err != nil {
		return 0, err
	}
	if err := CheckCount("number of composed mechanisms", k); err != nil {
		return 0, err
	}
	eg, err := bisect(func(eg float64) (bool, error) { return kairouzH(eg, totalDelta, k) >= stepEps, nil },
		0, stepEps, safeAbove, bisectOpts{relTol: 1e-13, maxHi: math.MaxFloat64})
	if errors.Is(err, errNoSafeValue) {
		return 0, fmt.Errorf("dp: composition inverse for epsilon %g not found", stepEps)
	}
	return eg, err
}
