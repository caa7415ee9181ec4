package attacks

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
)

// MinBoundScores is the fewest scores on each side EpsilonBound accepts:
// a fifth of them choose the threshold, the rest evaluate it, and each
// part needs dp.MinAuditRuns.
const MinBoundScores = 5 * dp.MinAuditRuns

// Bound is an ε lower bound from attack scores (EpsilonBound).
type Bound struct {
	// EpsilonLB is the bound (nats): with probability at least Confidence,
	// no (ε, Delta)-DP training run with ε < EpsilonLB could have produced
	// these counts in the attack game.
	EpsilonLB  float64 `json:"epsilon_lb"`
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	Statistic  string  `json:"statistic"`
	// The test on the evaluation scores: FP of Negatives non-members called
	// members, FN of Positives members called non-members, and the rates'
	// Clopper–Pearson upper bounds.
	FP        int     `json:"fp"`
	Negatives int     `json:"negatives"`
	FN        int     `json:"fn"`
	Positives int     `json:"positives"`
	FPRUpper  float64 `json:"fpr_upper"`
	FNRUpper  float64 `json:"fnr_upper"`
}

// EpsilonBound is an empirical ε lower bound from an attack's scores of
// members (edges, training nodes) and non-members, with dp.Audit's
// machinery on one-dimensional outputs: after a seeded shuffle of each
// side, the first fifth choose a threshold and its orientation, and the
// rest give the false-positive and false-negative counts whose
// Clopper–Pearson upper bounds (at the given confidence, union bound)
// turn into ε_lb = max{ln((1−δ−FNR)/FPR), ln((1−δ−FPR)/FNR)}.
//
// The bound is about the attack game, where each challenge is a member or
// not by a fair coin and everything else about it is exchangeable: then
// an (ε, δ)-DP training run keeps every test within those rates. Real
// edges and non-edges, or a split's members and non-members, differ in
// more than membership (degrees, features, labels), so a bound above the
// claim is a signal to examine, not on its own a proof of a bug.
//
// It fails with fewer than MinBoundScores scores on either side.
func EpsilonBound(members, nonMembers []float64, delta, confidence float64, seed uint64) (*Bound, error) {
	if len(members) < MinBoundScores || len(nonMembers) < MinBoundScores {
		return nil, fmt.Errorf("ε lower bound: %d member and %d non-member scores, need %d of each", len(members), len(nonMembers), MinBoundScores)
	}
	rng := rand.New(rand.NewPCG(seed, 0x626f756e64))
	side := func(s []float64) [][]float64 {
		s = slices.Clone(s)
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		out := make([][]float64, len(s))
		for i := range s {
			out[i] = s[i : i+1 : i+1]
		}
		return out
	}
	r, err := dp.Audit(side(members), side(nonMembers), dp.AuditConfig{Confidence: confidence, Delta: delta, EstimateFraction: 0.2})
	if err != nil {
		return nil, err
	}
	return &Bound{EpsilonLB: r.EpsilonLB, Confidence: r.Confidence, Delta: r.Delta,
		FP: r.FP, Negatives: r.Negatives, FN: r.FN, Positives: r.Positives, FPRUpper: r.FPRUpper, FNRUpper: r.FNRUpper,
		Statistic: fmt.Sprintf("attack score with a threshold chosen on a fifth of the scores (%d members, %d non-members); counts from the other %d and %d",
			r.EstimatePositives, r.EstimateNegatives, r.Positives, r.Negatives)}, nil
}
