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

// The statistical helpers live in internal/testutil (one implementation,
// shared with the method packages' tests): CheckMoments and ExactBinom are
// called from there; these names are kept for the tests that used them.
var (
	ksPValue        = testutil.KSPValue
	chiSquarePValue = testutil.ChiSquarePValue
	meanVar         = testutil.MeanVar
)

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
func itoa(n int) string     { return strconv.Itoa(n) }
