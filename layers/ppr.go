package layers

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
)

// PPRConverge as the number of steps makes PPR iterate until the largest
// change of an entry falls below PPRTol (at most pprMaxIter steps).
const PPRConverge = -1

// PPRTol is the max-abs change at which a PPRConverge propagation stops.
const PPRTol = 1e-12

// pprMaxIter caps a PPRConverge propagation. Stopping at any step count M
// computes exactly the M-step propagation, so callers whose guarantees
// hold for every finite M (GCON's sensitivity, Lemma 2) keep them.
const pprMaxIter = 100000

// PPR returns the personalised-PageRank propagation of the n×k row-major
// matrix x over the transition matrix w (n×n, e.g. graphs.RowNorm(A), the
// random walk with self-loops): Z₀ = X and
//
//	Z ← (1−α)·W Z + α·X
//
// repeated steps times (steps = PPRConverge: until converged), so
// Z_m = Σ_{p<m} α((1−α)W)^p X + ((1−α)W)^m X. It is GCON's R_m X (Eq. 4)
// and DPAR's inference propagation (Eq. 4 of DPAR, the power iteration of
// PPRGo). The product runs in parallel over rows; the result is new.
func PPR(w *graphs.CSR, x []float64, k int, alpha float64, steps int) ([]float64, error) {
	if w == nil {
		return nil, fmt.Errorf("layers: PPR propagation needs a transition matrix, got nil")
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("layers: PPR propagation matrix: %w", err)
	}
	if w.Rows != w.Cols {
		return nil, fmt.Errorf("layers: PPR propagation needs a square matrix, got %d×%d", w.Rows, w.Cols)
	}
	if k < 1 || len(x) != w.Rows*k {
		return nil, fmt.Errorf("layers: PPR propagation needs X of shape %d×k with k ≥ 1, got %d values for k = %d", w.Rows, len(x), k)
	}
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("layers: PPR teleport α must lie in [0, 1], got %v", alpha)
	}
	if steps < 0 && steps != PPRConverge {
		return nil, fmt.Errorf("layers: PPR propagation steps must be ≥ 0 (or PPRConverge), got %d", steps)
	}
	z := slices.Clone(x)
	iters := steps
	if steps == PPRConverge {
		iters = pprMaxIter
	}
	if iters == 0 {
		return z, nil
	}
	tmp := make([]float64, len(x))
	for range iters {
		w.MulDense(z, k, tmp)
		var diff float64
		for i := range tmp {
			v := (1-alpha)*tmp[i] + alpha*x[i]
			diff = math.Max(diff, math.Abs(v-z[i]))
			z[i] = v
		}
		if steps == PPRConverge && diff < PPRTol {
			break
		}
	}
	return z, nil
}
