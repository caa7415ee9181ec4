package trainers

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Accuracy is the fraction of idx whose prediction equals the label
// (NaN for an empty index list).
func Accuracy(pred, labels, idx []int) float64 {
	if len(idx) == 0 {
		return math.NaN()
	}
	ok := 0
	for _, i := range idx {
		if pred[i] == labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(idx))
}

// MicroF1 is the micro-averaged F1 over classes of single-label
// predictions on idx. Every prediction is one positive for one class, so
// micro precision = micro recall = accuracy; it is computed from the
// pooled confusion counts all the same, as a check on the label handling.
func MicroF1(pred, labels, idx []int) float64 {
	if len(idx) == 0 {
		return math.NaN()
	}
	tp, fp, fn := 0, 0, 0
	for _, i := range idx {
		if pred[i] == labels[i] {
			tp++
		} else {
			fp++ // counted for the predicted class
			fn++ // and missed for the true class
		}
	}
	p := float64(tp) / float64(tp+fp)
	r := float64(tp) / float64(tp+fn)
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Argmax returns the index of the largest entry of each row of a row-major
// (n, c) matrix.
func Argmax(logits []float64, n, c int) []int {
	out := make([]int, n)
	for i := 0; i < n; i++ {
		row := logits[i*c : (i+1)*c]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// Summary describes repeated measurements of one metric. CI95 is the
// half-width of a 95% percentile-bootstrap interval of the mean (1,000
// resamples), reported as max(mean−lo, hi−mean).
type Summary struct {
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	CI95   float64   `json:"ci95"`
	Values []float64 `json:"values"`
}

// Summarize computes mean, sample standard deviation and the bootstrap CI of
// values; the resampling is seeded so summaries are reproducible.
func Summarize(values []float64, seed uint64) Summary {
	s := Summary{Values: append([]float64{}, values...)}
	n := len(values)
	if n == 0 {
		s.Mean, s.Std, s.CI95 = math.NaN(), math.NaN(), math.NaN()
		return s
	}
	for _, v := range values {
		s.Mean += v
	}
	s.Mean /= float64(n)
	if n > 1 {
		for _, v := range values {
			s.Std += (v - s.Mean) * (v - s.Mean)
		}
		s.Std = math.Sqrt(s.Std / float64(n-1))
	}
	const resamples = 1000
	rng := rand.New(rand.NewPCG(seed, 0xb0075742))
	means := make([]float64, resamples)
	for b := range means {
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += values[rng.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	sort.Float64s(means)
	lo, hi := means[int(0.025*resamples)], means[int(0.975*resamples)-1]
	s.CI95 = math.Max(s.Mean-lo, hi-s.Mean)
	return s
}
