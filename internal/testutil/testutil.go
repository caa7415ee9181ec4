// Package testutil holds helpers shared by dpgnn's tests: locating the real
// datasets, comparing floats with tolerances, and the statistics of tests
// of a mechanism's law (goodness-of-fit p-values, moment checks, binomial
// bands for cell probabilities), each written once for every package.
package testutil

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// DataDir returns the directory of the shared real datasets: $DPGNN_DATA if
// set, else ../shared/datasets relative to the repository root (found by
// walking up from the working directory to go.mod). It skips the test with a
// message when neither exists.
func DataDir(t testing.TB) string {
	t.Helper()
	d, ok := SharedDatasets()
	if !ok {
		t.Skip("real datasets not found: set DPGNN_DATA or place them at ../shared/datasets beside the repository")
	}
	return d
}

// SharedDatasets is DataDir's lookup for tests that do without the real
// datasets: the directory, or false when neither place exists.
func SharedDatasets() (string, bool) {
	if d := os.Getenv("DPGNN_DATA"); d != "" {
		if _, err := os.Stat(d); err == nil {
			return d, true
		}
	}
	if root, ok := RepoRoot(); ok {
		d := filepath.Join(root, "..", "shared", "datasets")
		if _, err := os.Stat(d); err == nil {
			return d, true
		}
	}
	return "", false
}

// RepoRoot walks up from the working directory to the directory holding go.mod.
func RepoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Close reports whether a and b agree within an absolute or relative tolerance.
func Close(a, b, tol float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= tol || d <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// AssertClose fails the test when got and want differ by more than tol
// (absolute or relative).
func AssertClose(t testing.TB, name string, got, want, tol float64) {
	t.Helper()
	if !Close(got, want, tol) {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", name, got, want, tol)
	}
}

// KSPValue returns the Kolmogorov–Smirnov statistic D of the sample against
// the continuous CDF and its asymptotic p-value (Stephens' correction,
// Numerical Recipes §14.3).
func KSPValue(sample []float64, cdf func(float64) float64) (d, p float64) {
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

// ChiSquarePValue returns the p-value of Pearson's χ² statistic for observed
// counts against expected probabilities.
func ChiSquarePValue(observed []int, probs []float64) float64 {
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

// MeanVar returns the sample mean and the unbiased sample variance of x
// (len(x) ≥ 2).
func MeanVar(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}

// CheckMoments fails the test unless the sample mean and variance of x are
// within 4 standard errors of the claimed mean and variance, given the
// law's fourth central moment m4 (the variance estimate's standard error
// is sqrt((m4 − variance²)/n)).
func CheckMoments(t testing.TB, name string, x []float64, mean, variance, m4 float64) {
	t.Helper()
	const k = 4
	n := float64(len(x))
	m, v := MeanVar(x)
	if se := math.Sqrt(variance / n); !(math.Abs(m-mean) <= k*se) {
		t.Errorf("%s: sample mean %.6g, want %.6g ± %.3g", name, m, mean, k*se)
	}
	if se := math.Sqrt((m4 - variance*variance) / n); !(math.Abs(v-variance) <= k*se) {
		t.Errorf("%s: sample variance %.6g, want %.6g ± %.3g", name, v, variance, k*se)
	}
}

// ExactBinom fails the test unless count successes out of n draws are
// within 5 binomial standard deviations of n·p (plus one for the count's
// discreteness): the band the samplers' exactness tests use for a cell
// probability p the accounting relies on.
func ExactBinom(t testing.TB, name string, count, n int, p float64) {
	t.Helper()
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	if d := math.Abs(float64(count) - mean); !(d <= 5*sd+1) {
		t.Errorf("%s: %d of %d, want %.1f ± %.1f (5σ); off by %.1fσ", name, count, n, mean, 5*sd, d/sd)
	}
}

// Softmax returns exp(u_i/scale)/Σ_j exp(u_j/scale): the exponential
// mechanism's selection probabilities at that scale.
func Softmax(u []float64, scale float64) []float64 {
	p := make([]float64, len(u))
	var sum float64
	for i, v := range u {
		p[i] = math.Exp(v / scale)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}
