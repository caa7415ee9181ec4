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
func Argmax(logits []float64, n, c int) []int { return ArgmaxInto(nil, logits, n, c) }

// ArgmaxInto is Argmax writing into dst when it has room for n rows (the
// per-epoch monitoring reuses one buffer), into a new slice otherwise.
func ArgmaxInto(dst []int, logits []float64, n, c int) []int {
	out := dst
	if cap(out) < n {
		out = make([]int, n)
	}
	out = out[:n]
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

// AUC is the area under the ROC curve of scores for positives against
// negatives: the probability that a random positive scores above a random
// negative, ties counting one half (NaN when either side is empty).
func AUC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	type s struct {
		v   float64
		pos bool
	}
	all := make([]s, 0, len(pos)+len(neg))
	for _, v := range pos {
		all = append(all, s{v, true})
	}
	for _, v := range neg {
		all = append(all, s{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Mann–Whitney: sum of the positives' mid-ranks.
	rankSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].pos {
				rankSum += mid
			}
		}
		i = j
	}
	np, nn := float64(len(pos)), float64(len(neg))
	return (rankSum - np*(np+1)/2) / (np * nn)
}
