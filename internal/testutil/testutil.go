// Package testutil holds helpers shared by dpgnn's tests: locating the real
// datasets and comparing floats with tolerances.
package testutil

import (
	"math"
	"os"
	"path/filepath"
	"testing"
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
