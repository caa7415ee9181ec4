package walk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// wordSource returns fixed words in turn.
type wordSource struct {
	w []uint64
	i int
}

func (s *wordSource) Uint64() uint64 { w := s.w[s.i%len(s.w)]; s.i++; return w }

// TestExactDrawCategoricalExtremes: the extreme words never draw an
// index of probability 0 (the all-ones word used to map to u = 1, above
// every cumulative sum, and fell through to the last index), and a
// probability-1 index is always drawn.
func TestExactDrawCategoricalExtremes(t *testing.T) {
	probs := [][]float64{{1, 0}, {0, 1}, {0, 1, 0}, {0.5, 0.5, 0}, {0.3, 0.7, 0}, {0.1, 0.2, 0.3, 0.4}}
	for _, w := range []uint64{0, 1, 1<<63 - 1, 1 << 63, ^uint64(0) - 1<<12, ^uint64(0) - 1, ^uint64(0)} {
		for _, p := range probs {
			j := drawCategorical(&wordSource{w: []uint64{w}}, p)
			if j < 0 || j >= len(p) || p[j] == 0 {
				t.Errorf("word %#x, p = %v: drew index %d", w, p, j)
			}
		}
	}
}

// TestExactDrawCategoricalLaw: each index is drawn with its
// probability, within 5σ over 10⁶ draws.
func TestExactDrawCategoricalLaw(t *testing.T) {
	p := []float64{0.05, 0.2, 0, 0.5, 0.25}
	const n = 1_000_000
	src := rand.NewPCG(3, 4)
	c := make([]int, len(p))
	for range n {
		c[drawCategorical(src, p)]++
	}
	for i, pi := range p {
		sd := math.Sqrt(n * pi * (1 - pi))
		if d := math.Abs(float64(c[i]) - n*pi); d > 5*sd+1 {
			t.Errorf("index %d: %d of %d draws, want %.0f ± %.0f", i, c[i], n, n*pi, 5*sd)
		}
	}
}
