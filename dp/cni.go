package dp

import (
	"fmt"
	"math"
)

// Contractive noisy iteration (CNI): X^(k+1) = Π_𝒦(φ_{k+1}(X^(k)) + Z^(k)),
// Z^(k) ~ N(0, σ²I), 𝒦 convex, φ_k γ-Lipschitz for k ≥ 2 (φ_1 any
// Lipschitz map) and sup_x ‖φ_k(x) − φ′_k(x)‖ ≤ s for neighbouring inputs.
// Only the last iterate X^(K) is released. Bok et al. (2024, Thm C.5), as
// generalised in CARIBOU (Zheng et al. 2025, Thm 5/6): X^(K) is μ-GDP with
//
//	μ = (s/σ)·√g(γ, K),   g(γ, K) = (1 − γ^K)(1 + γ) / ((1 + γ^K)(1 − γ)),
//
// against μ = (s/σ)·√K for K separately released noisy steps: the cost
// converges to (1 + γ)/(1 − γ) as K grows instead of growing linearly.

// CNIFactor is min{K, g(γ, K)}: the effective number of Gaussian releases
// of K contractive noisy steps. For γ ≥ 1 (no contraction) it is K.
func CNIFactor(gamma float64, hops int) (float64, error) {
	if hops < 1 {
		return 0, fmt.Errorf("contractive noisy iteration: %d steps, want at least 1", hops)
	}
	if !(gamma >= 0) || math.IsInf(gamma, 1) {
		return 0, fmt.Errorf("contractive noisy iteration: Lipschitz constant %g, want ≥ 0", gamma)
	}
	k := float64(hops)
	if gamma >= 1 {
		return k, nil
	}
	gk := math.Pow(gamma, k)
	return math.Min(k, (1-gk)*(1+gamma)/((1+gk)*(1-gamma))), nil
}

// CNIEvent is the release of the last iterate of K contractive noisy steps
// with Lipschitz constant γ and noise multiplier z (noise std z·s): μ-GDP
// with μ = √g/z, the same as one Gaussian release with multiplier z/√g, so
// every accountant composes it exactly (RDP α·g/(2z²); GDP μ).
func CNIEvent(multiplier, gamma float64, hops int) (GaussianEvent, error) {
	g, err := CNIFactor(gamma, hops)
	if err != nil {
		return GaussianEvent{}, err
	}
	if err := CheckMultiplier(multiplier); err != nil {
		return GaussianEvent{}, err
	}
	return GaussianEvent{Multiplier: multiplier / math.Sqrt(g), Count: 1}, nil
}

// CNIShifts is the shifted-interpolation construction behind the bound
// (Bok et al. 2024; CARIBOU App. C.2), for a sensitivity s: the
// interpolation weights λ_k, the distance bounds z_k (‖X^(k) − X̃^(k)‖ ≤
// z_k) and the shifts a_k, k = 1..K (index k−1), from
//
//	λ_k = γ^{K−k}(1 − γ²) / (1 − γ^{K−k+2} − γ^k + γ^K),
//	z_0 = 0,  a_{k+1} = λ_{k+1}(γ·z_k + s),  z_{k+1} = (1 − λ_{k+1})(γ·z_k + s),
//
// (the first step's Lipschitz constant does not matter since z_0 = 0). The
// privacy loss is that of Gaussian shifts with Σ a_k² = g(γ, K)·s², and
// λ_K = 1, z_K = 0. Exposed so the closed forms can be checked; γ < 1.
func CNIShifts(gamma, s float64, hops int) (lambda, z, a []float64, err error) {
	if hops < 1 || !(gamma >= 0 && gamma < 1) {
		return nil, nil, nil, fmt.Errorf("CNIShifts: want K ≥ 1 and 0 ≤ γ < 1, got K=%d γ=%g", hops, gamma)
	}
	kk := float64(hops)
	lambda, z, a = make([]float64, hops), make([]float64, hops), make([]float64, hops)
	prev := 0.0
	for i := 0; i < hops; i++ {
		k := float64(i + 1)
		lambda[i] = math.Pow(gamma, kk-k) * (1 - gamma*gamma) / (1 - math.Pow(gamma, kk-k+2) - math.Pow(gamma, k) + math.Pow(gamma, kk))
		step := gamma*prev + s
		a[i] = lambda[i] * step
		z[i] = (1 - lambda[i]) * step
		prev = z[i]
	}
	return lambda, z, a, nil
}
