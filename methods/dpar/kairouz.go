package dpar

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
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
// amplification). It serves only DPAR's paper accounting (--accounting
// paper), whose report states the ε proven for the resulting noise
// (APPRMechanism.Cost compares it with the exact optimal composition and
// warns where the simplified rule claims more); prefer an RDP or GDP
// accountant for a guarantee you rely on. Totals are in nats; k ≥ 1.
func KairouzStepBudget(totalEps, totalDelta float64, k int) (stepEps, stepDelta float64, err error) {
	if err := dp.CheckPositiveFinite("total epsilon", totalEps); err != nil {
		return 0, 0, err
	}
	if err := dp.CheckDelta(totalDelta); err != nil {
		return 0, 0, err
	}
	if err := dp.CheckCount("number of composed mechanisms", k); err != nil {
		return 0, 0, err
	}
	return kairouzH(totalEps, totalDelta, k), totalDelta / (2 * float64(k)), nil
}

// kairouzH is h_k(ε_g) = ε_g / (2·sqrt(k·ln(e + ε_g/δ_g))), strictly
// increasing in ε_g.
func kairouzH(eg, dg float64, k int) float64 {
	return eg / (2 * math.Sqrt(float64(k)*math.Log(math.E+eg/dg)))
}

// KairouzTotalEpsilon inverts KairouzStepBudget: the total ε of k
// (stepEps, totalDelta/(2k))-DP mechanisms under the same simplified
// composition, i.e. the ε_g with h_k(ε_g) = stepEps.
//
// It never reports less than that root: h_k is strictly increasing, so
// "h_k(ε_g) ≥ stepEps" is a monotone predicate that holds exactly at and
// above the root, and dp.SearchAbove returns a value at which it holds
// (within a relative 1e-13 of the root, never below it). The claim is the
// simplified rule's, with its small-ε caveat (KairouzStepBudget).
func KairouzTotalEpsilon(stepEps, totalDelta float64, k int) (float64, error) {
	if err := dp.CheckPositiveFinite("per-mechanism epsilon", stepEps); err != nil {
		return 0, err
	}
	if err := dp.CheckDelta(totalDelta); err != nil {
		return 0, err
	}
	if err := dp.CheckCount("number of composed mechanisms", k); err != nil {
		return 0, err
	}
	eg, err := dp.SearchAbove(func(eg float64) bool { return kairouzH(eg, totalDelta, k) >= stepEps }, 0, stepEps, 1e-13)
	if err != nil {
		return 0, fmt.Errorf("dpar: composition inverse for epsilon %g: %w", stepEps, err)
	}
	return eg, nil
}
