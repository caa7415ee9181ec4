package dp

import (
	"math"
	"strconv"
	"testing"

	"github.com/dpgnn/dpgnn/internal/testutil"
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

// The goodness-of-fit tests live in internal/testutil (the dpar package uses them too).
var (
	ksPValue        = testutil.KSPValue
	chiSquarePValue = testutil.ChiSquarePValue
)

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
