package dp

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
)

// Gumbel is the Gumbel noise distribution with location 0 and scale Scale:
// CDF exp(−exp(−x/Scale)), mean γ·Scale (γ the Euler–Mascheroni constant),
// variance π²Scale²/6. The zero Scale adds no noise.
type Gumbel struct {
	Scale float64 // β ≥ 0, in the units of the scores
}

// Validate reports whether the configuration is usable.
func (g Gumbel) Validate() error { return CheckNonNegativeFinite("Gumbel scale", g.Scale) }

func (g Gumbel) draw(src *Source) float64 {
	return -g.Scale * math.Log(-math.Log(src.Uniform()))
}

// Draw returns one Gumbel(0, Scale) draw from src (Scale must be valid and
// src non-nil: a programming error otherwise).
func (g Gumbel) Draw(src *Source) float64 { return g.draw(src) }

// Sample returns n independent Gumbel(0, Scale) draws (−Scale·ln(−ln U) with
// U uniform on the open interval (0, 1)).
func (g Gumbel) Sample(n int, src *Source) ([]float64, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errNilSource
	}
	if n < 0 {
		return nil, fmt.Errorf("dp: negative sample count %d", n)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = g.draw(src)
	}
	return x, nil
}

// GumbelTopK is the one-shot Gumbel top-K selection (Durfee & Rogers 2019;
// DPAR's DP-APPR-EM, Algorithm 1): it adds independent Gumbel(scale) noise
// to every score and returns the indices of the k largest noisy scores, in
// decreasing order of noisy score. Every candidate gets noise, including
// zero scores: restricting the candidates would break DP.
//
// With scale = 2Δ/ε₀ for scores of sensitivity Δ, the selection has the law
// of k rounds of the ε₀-DP exponential mechanism without replacement; its
// cost is GumbelTopKEpsilon, and GumbelTopKScale calibrates the scale.
// scale = 0 gives the exact (non-private) top k.
func GumbelTopK(scores []float64, k int, scale float64, src *Source) ([]int, error) {
	if err := CheckNonNegativeFinite("Gumbel scale", scale); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errNilSource
	}
	if k < 1 || k > len(scores) {
		return nil, fmt.Errorf("dp: top-k needs 1 ≤ k ≤ %d candidates, got k=%d", len(scores), k)
	}
	g := Gumbel{Scale: scale}
	h := make(scoredHeap, 0, k)
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("dp: top-k score %d is %g, want a finite number", i, s)
		}
		v := s
		if scale > 0 {
			v += g.draw(src)
		}
		switch {
		case len(h) < k:
			heap.Push(&h, scored{v, i})
		case h.less(h[0], scored{v, i}):
			h[0] = scored{v, i}
			heap.Fix(&h, 0)
		}
	}
	sort.Slice(h, func(a, b int) bool { return h.less(h[b], h[a]) })
	out := make([]int, k)
	for i, s := range h {
		out[i] = s.index
	}
	return out, nil
}

type scored struct {
	value float64
	index int
}

// scoredHeap is a min-heap: the root is the smallest kept value (ties: the
// larger index is smaller, so lower indices win ties).
type scoredHeap []scored

func (h scoredHeap) less(a, b scored) bool {
	if a.value != b.value {
		return a.value < b.value
	}
	return a.index > b.index
}
func (h scoredHeap) Len() int           { return len(h) }
func (h scoredHeap) Less(i, j int) bool { return h.less(h[i], h[j]) }
func (h scoredHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// GumbelTopKEpsilon returns ε' such that one-shot Gumbel top-k with noise
// scale `scale` on scores of sensitivity `sensitivity` is (ε', delta)-DP
// (Durfee & Rogers 2019, as DPAR's Corollary 1 states it; DPAR Theorem 1):
//
//	ε₀ = 2·sensitivity/scale     (per-round exponential-mechanism ε)
//	ε' = min{ k·ε₀, k·ε₀·tanh(ε₀/2) + ε₀·sqrt(2k·ln(1/δ)) }
//
// This is DPAR's code form; the paper writes the same bound with its ε = ε₀/2
// (scale = sensitivity/ε and a leading factor 2). Mixing the paper's scale
// with the code's formula would under-count by a factor 2, which is why this
// function takes the scale itself. delta = 0 gives the basic bound k·ε₀.
func GumbelTopKEpsilon(scale, sensitivity float64, k int, delta float64) (float64, error) {
	if err := CheckPositiveFinite("Gumbel scale", scale); err != nil {
		return 0, err
	}
	if err := CheckPositiveFinite("score sensitivity", sensitivity); err != nil {
		return 0, err
	}
	if err := CheckCount("top-k size k", k); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return 0, fmt.Errorf("dp: delta must lie in [0, 1), got %g", delta)
	}
	return gumbelCost(2*sensitivity/scale, k, delta), nil
}

func gumbelCost(eps0 float64, k int, delta float64) float64 {
	kf := float64(k)
	basic := kf * eps0
	if delta == 0 {
		return basic
	}
	adv := kf*eps0*math.Tanh(eps0/2) + eps0*math.Sqrt(2*kf*math.Log(1/delta))
	return math.Min(basic, adv)
}

// GumbelTopKScale is the inverse of GumbelTopKEpsilon: the smallest Gumbel
// noise scale (to a relative 1e-12) whose one-shot top-k cost is at most
// (eps, delta). It bisects on the scale (the cost is decreasing in it) and
// returns the conservative end, whose cost was computed as
// GumbelTopKEpsilon computes it, so GumbelTopKEpsilon(result) ≤ eps.
func GumbelTopKScale(eps, delta float64, k int, sensitivity float64) (float64, error) {
	if err := CheckPositiveFinite("epsilon", eps); err != nil {
		return 0, err
	}
	if err := CheckPositiveFinite("score sensitivity", sensitivity); err != nil {
		return 0, err
	}
	if err := CheckCount("top-k size k", k); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return 0, fmt.Errorf("dp: delta must lie in [0, 1), got %g", delta)
	}
	// The cost is decreasing in the scale β (ε₀ = 2·sensitivity/β), and
	// each β is checked as GumbelTopKEpsilon computes its cost. cost(ε₀) ≤
	// k·ε₀, so β = 2·sensitivity·k/eps is feasible (up to rounding, which the
	// bracket's growth upwards absorbs); cost(ε₀) ≥ ε₀·c with c>0, so the
	// root is above 2·sensitivity·c/eps.
	b0 := 2 * sensitivity * float64(k) / eps
	if !(b0/2 > 0 && b0 <= math.MaxFloat64) {
		return 0, fmt.Errorf("dp: Gumbel scale for epsilon=%g, k=%d and sensitivity %g is outside the float64 range", eps, k, sensitivity)
	}
	beta, err := bisect(func(b float64) (bool, error) { return gumbelCost(2*sensitivity/b, k, delta) <= eps, nil },
		b0/2, b0, safeAbove, bisectOpts{relTol: 1e-13, minLo: math.SmallestNonzeroFloat64, maxHi: math.MaxFloat64})
	if err != nil {
		return 0, fmt.Errorf("dp: Gumbel scale for epsilon=%g not found: %w", eps, err)
	}
	return beta, nil
}
