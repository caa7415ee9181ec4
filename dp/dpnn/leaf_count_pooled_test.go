package dpnn_test

import "testing"

// TestPooledCount: CrossEntropy's Count leaf in the per-row loss of the
// pooled construction (pooledRelease, position_test.go, weights 0.5):
// "pooled-count-minus-n" multiplies ℓ_k by Count − n. Refused or Δ ≤ 1.
func TestPooledCount(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	for _, mode := range []string{"pooled-none", "pooled-count-minus-n"} {
		fG, lG := pooledSignedRows(n, v, 100, false)
		fG2, lG2 := pooledSignedRows(n, v, 100, true)
		a, errA := pooledRelease(t, n, f, fG, lG, false, mode)
		b, errB := pooledRelease(t, n, f, fG2, lG2, true, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}
