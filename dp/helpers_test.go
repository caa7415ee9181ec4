package dp

import (
	"math"
	"sort"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// relClose reports |got−want| ≤ tol·|want| (purely relative, unlike
// testutil.Close, which also accepts an absolute tolerance and is too lax
// for tiny values).
func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func assertRel(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !relClose(got, want, tol) {
		t.Errorf("%s = %.12g, want %.12g (rel tol %g, rel err %.3g)", name, got, want, tol, math.Abs(got-want)/math.Abs(want))
	}
}

// assertAbs fails unless |got−want| ≤ tol.
func assertAbs(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (abs tol %g)", name, got, want, tol)
	}
}

// ksPValue returns the Kolmogorov–Smirnov statistic D of the sample against
// the continuous CDF and its asymptotic p-value (Stephens' correction,
// Numerical Recipes §14.3).
func ksPValue(sample []float64, cdf func(float64) float64) (d, p float64) {
	x := append([]float64(nil), sample...)
	sort.Float64s(x)
	n := float64(len(x))
	for i, v := range x {
		f := cdf(v)
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	sn := math.Sqrt(n)
	lambda := (sn + 0.12 + 0.11/sn) * d
	return d, kolmogorovQ(lambda)
}

// kolmogorovQ is Q_KS(λ) = 2 Σ_{k≥1} (−1)^{k−1} exp(−2k²λ²).
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1
	}
	var s float64
	sign := 1.0
	for k := 1; k <= 200; k++ {
		term := sign * 2 * math.Exp(-2*float64(k*k)*lambda*lambda)
		s += term
		if math.Abs(term) < 1e-16 {
			break
		}
		sign = -sign
	}
	return math.Max(0, math.Min(1, s))
}

// chiSquarePValue returns the p-value of Pearson's χ² statistic for observed
// counts against expected probabilities.
func chiSquarePValue(observed []int, probs []float64) float64 {
	var n int
	for _, o := range observed {
		n += o
	}
	var stat float64
	for i, o := range observed {
		e := probs[i] * float64(n)
		stat += (float64(o) - e) * (float64(o) - e) / e
	}
	return distuv.ChiSquared{K: float64(len(observed) - 1)}.Survival(stat)
}

func meanVar(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}

// checkMoments asserts the sample mean and variance are within k standard
// errors of the claimed values, given the law's fourth central moment m4.
func checkMoments(t *testing.T, name string, x []float64, mean, variance, m4 float64) {
	t.Helper()
	const k = 4
	n := float64(len(x))
	m, v := meanVar(x)
	if se := math.Sqrt(variance / n); math.Abs(m-mean) > k*se {
		t.Errorf("%s: sample mean %.6g, want %.6g ± %.3g", name, m, mean, k*se)
	}
	if se := math.Sqrt((m4 - variance*variance) / n); math.Abs(v-variance) > k*se {
		t.Errorf("%s: sample variance %.6g, want %.6g ± %.3g", name, v, variance, k*se)
	}
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
func itoa(n int) string     { return strconv.Itoa(n) }
