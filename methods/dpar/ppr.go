package dpar

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/parallel"
)

// SparseVec is a sparse vector of length Len: Values[k] is the entry at
// Indices[k], and Indices are strictly increasing.
type SparseVec struct {
	Len     int
	Indices []int
	Values  []float64
}

// Dense returns v as a dense slice of length v.Len.
func (v SparseVec) Dense() []float64 {
	d := make([]float64, v.Len)
	for k, i := range v.Indices {
		d[i] = v.Values[k]
	}
	return d
}

// ISTAParams are the parameters of the ℓ1-regularised approximate
// personalised PageRank solved by ISTA (Fountoulakis et al. 2019, Alg. 3;
// DPAR §3.1 calls them α, ρ, γ).
type ISTAParams struct {
	Alpha   float64 // teleport probability α of the lazy walk, in (0, 1)
	Rho     float64 // ℓ1 regularisation ρ > 0 (larger: sparser, less mass)
	Tol     float64 // stopping tolerance γ ≥ 0: stop once max|∇f| ≤ (1+γ)·ρ·α
	MaxIter int     // iteration cap ≥ 1; reaching it is an error unless KeepLast
	// KeepLast makes reaching MaxIter return the last iterate (non-negative,
	// as every iterate is) instead of an error: for a mechanism whose
	// guarantee does not rest on convergence (DPAR clips the vector), so
	// that it does not refuse some inputs and accept their neighbours.
	KeepLast bool
}

// DPARISTAParams returns the ISTA parameters of DPAR's experiments (DPAR §4
// Setup): α = 0.25, ρ = 1e-4, γ = 1e-4, with a cap of 10,000 iterations (a
// few hundred suffice at these values).
func DPARISTAParams() ISTAParams {
	return ISTAParams{Alpha: 0.25, Rho: 1e-4, Tol: 1e-4, MaxIter: 10000}
}

// Validate reports whether the parameters are usable, naming the bad one.
func (p ISTAParams) Validate() error {
	if !(p.Alpha > 0 && p.Alpha < 1) {
		return fmt.Errorf("dpar: ISTA teleport alpha must lie in (0, 1), got %g", p.Alpha)
	}
	if !(p.Rho > 0) || math.IsInf(p.Rho, 1) {
		return fmt.Errorf("dpar: ISTA regularisation rho must be positive and finite, got %g", p.Rho)
	}
	if !(p.Tol >= 0) || math.IsInf(p.Tol, 1) {
		return fmt.Errorf("dpar: ISTA tolerance gamma must be non-negative and finite, got %g", p.Tol)
	}
	if p.MaxIter < 1 {
		return fmt.Errorf("dpar: ISTA iteration cap must be at least 1, got %d", p.MaxIter)
	}
	return nil
}

// ISTA is a prepared ISTA solver for one graph: the adjacency with a
// self-loop on every node and its degrees. Solve is safe for concurrent use
// (it only reads the prepared graph).
type ISTA struct {
	adj    *graphs.CSR
	deg    []float64
	params ISTAParams
	trace  func(p, g []float64) // tests only: called after every iteration
}

// NewISTA prepares ISTA on the undirected, unweighted adjacency a (square,
// symmetric, every stored value 1). As in DPAR's code, every node gets a
// self-loop of weight 1 unless it already has one, and the degree d_i is
// the number of entries of row i including that self-loop. Preparation
// costs O(nnz); it returns an error for an invalid a or params.
func NewISTA(a *graphs.CSR, params ISTAParams) (*ISTA, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	adj, deg, err := pprAdjacency(a, "ISTA")
	if err != nil {
		return nil, err
	}
	return &ISTA{adj: adj, deg: deg, params: params}, nil
}

// ISTAPPR is NewISTA followed by one Solve: the approximate PPR vector of
// source and the number of iterations.
func ISTAPPR(a *graphs.CSR, source int, params ISTAParams) (SparseVec, int, error) {
	s, err := NewISTA(a, params)
	if err != nil {
		return SparseVec{}, 0, err
	}
	return s.Solve(source)
}

// N returns the number of nodes of the prepared graph.
func (s *ISTA) N() int { return s.adj.Rows }

// Solve runs ISTA from source (DPAR §3.1, the authors' code's element-wise
// update written as g ← g + H·Δ) and returns the approximate PPR vector p
// (its positive entries) and the number of iterations. With Q = αI +
// ((1−α)/2)(I − D^{-1/2} A D^{-1/2}) it is proximal gradient with unit step
// on
//
//	F(p) = ½ pᵀ D^{-1/2} Q D^{-1/2} p − α p_s/d_s + ρα‖p‖₁,
//	g(p) = ((1+α)/2) D^{-1} p − ((1−α)/2) D^{-1} A D^{-1} p − α D^{-1} e_s,
//
// starting at p = 0, g = −α e_s/d_s:
//
//	while max_i |g_i| > (1+γ)ρα:
//	    S = {i : p_i − g_i ≥ ρα};  Δ_i = −(g_i + ρα) on S, 0 elsewhere
//	    p ← p + Δ;  g ← g + ((1+α)/2) D^{-1} Δ − ((1−α)/2) D^{-1} A D^{-1} Δ
//
// The iterates are non-negative and non-decreasing with Σp ≤ 1; as ρ → 0, p
// tends to the PPR vector with teleport 2α/(1+α) (ExactPPR), i.e. the
// lazy-walk PPR with teleport α. Each iteration costs O(|T| + vol(S)), where
// T (the nodes with p ≠ 0 or g ≠ 0) is the support and its neighbourhood:
// nothing per iteration depends on N (the call allocates O(N) once).
func (s *ISTA) Solve(source int) (SparseVec, int, error) {
	n := s.adj.Rows
	if source < 0 || source >= n {
		return SparseVec{}, 0, fmt.Errorf("dpar: ISTA source %d is out of range [0, %d)", source, n)
	}
	alpha, ra := s.params.Alpha, s.params.Rho*s.params.Alpha
	stop := (1 + s.params.Tol) * ra
	p := make([]float64, n)
	g := make([]float64, n)
	seen := make([]bool, n)
	touched := []int{source} // every i with p_i ≠ 0 or g_i ≠ 0 (and maybe a few zeros)
	seen[source] = true
	g[source] = -alpha / s.deg[source]
	var set []int
	var delta []float64
	for it := 0; ; it++ {
		if maxAbsAt(g, touched) <= stop {
			return collectPositive(p, touched), it, nil
		}
		if it == s.params.MaxIter {
			if s.params.KeepLast {
				return collectPositive(p, touched), it, nil
			}
			return SparseVec{}, it, fmt.Errorf("dpar: ISTA from source %d did not converge in %d iterations", source, it)
		}
		// S and Δ from the iterate before the update (i ∉ T has p_i − g_i = 0 < ρα).
		set, delta = set[:0], delta[:0]
		for _, i := range touched {
			if p[i]-g[i] >= ra {
				set = append(set, i)
				delta = append(delta, -(g[i] + ra))
			}
		}
		// g += H·Δ, scattered from S over its rows (A is symmetric).
		for k, l := range set {
			p[l] += delta[k]
			w := delta[k] / s.deg[l]
			g[l] += 0.5 * (1 + alpha) * w
			for _, j := range s.adj.Indices[s.adj.Indptr[l]:s.adj.Indptr[l+1]] {
				if !seen[j] {
					seen[j] = true
					touched = append(touched, j)
				}
				g[j] -= 0.5 * (1 - alpha) * w / s.deg[j]
			}
		}
		if s.trace != nil {
			s.trace(p, g)
		}
	}
}

func maxAbsAt(x []float64, idx []int) float64 {
	m := 0.0
	for _, i := range idx {
		m = math.Max(m, math.Abs(x[i]))
	}
	return m
}

// collectPositive returns the positive entries of p among idx, sorted.
func collectPositive(p []float64, idx []int) SparseVec {
	ids := make([]int, 0, len(idx))
	for _, i := range idx {
		if p[i] > 0 {
			ids = append(ids, i)
		}
	}
	slices.Sort(ids)
	vals := make([]float64, len(ids))
	for k, i := range ids {
		vals[k] = p[i]
	}
	return SparseVec{Len: len(p), Indices: ids, Values: vals}
}

// pprAdjacency checks that a is a square, symmetric, unweighted adjacency
// and returns it with a self-loop on every node (graphs.AddSelfLoops with weight 1: the input is checked unweighted, so an existing loop already has weight 1)
// and the degrees (entries per row).
func pprAdjacency(a *graphs.CSR, op string) (*graphs.CSR, []float64, error) {
	if a == nil {
		return nil, nil, fmt.Errorf("dpar: %s needs an adjacency, got nil", op)
	}
	if err := a.Validate(); err != nil {
		return nil, nil, fmt.Errorf("dpar: %s adjacency: %w", op, err)
	}
	if a.Rows != a.Cols || a.Rows == 0 {
		return nil, nil, fmt.Errorf("dpar: %s needs a non-empty square adjacency, got %d×%d", op, a.Rows, a.Cols)
	}
	for k, v := range a.Data {
		if v != 1 {
			return nil, nil, fmt.Errorf("dpar: %s needs an unweighted adjacency, but stored entry %d has weight %g", op, k, v)
		}
	}
	if !graphs.IsSymmetric(a) {
		return nil, nil, fmt.Errorf("dpar: %s needs a symmetric (undirected) adjacency (see Symmetrize)", op)
	}
	m := graphs.AddSelfLoops(a, 1)
	deg := make([]float64, m.Rows)
	for i := range deg {
		deg[i] = float64(m.Indptr[i+1] - m.Indptr[i])
	}
	return m, deg, nil
}

// ExactPPR returns the personalised PageRank vector of source with teleport
// alpha, p = α(I − (1−α) A D^{-1})^{-1} e_s, by power iteration
// p ← α e_s + (1−α) A D^{-1} p from p = e_s until ‖Δp‖₁ ≤ tol, and the
// number of iterations. A and D are as in NewISTA (self-loops added,
// degrees counting them), so ISTA with parameter α converges to
// ExactPPR(a, s, 2α/(1+α), ...) as ρ → 0 (DPAR §3.1 cites ISTA for this
// approximation). It costs O(nnz) per iteration and is meant for
// cross-checks; the error after stopping is at most tol·(1−α)/α in ℓ1.
func ExactPPR(a *graphs.CSR, source int, alpha, tol float64, maxIter int) ([]float64, int, error) {
	if !(alpha > 0 && alpha <= 1) {
		return nil, 0, fmt.Errorf("dpar: PPR teleport alpha must lie in (0, 1], got %g", alpha)
	}
	if !(tol > 0) || math.IsInf(tol, 1) {
		return nil, 0, fmt.Errorf("dpar: PPR tolerance must be positive and finite, got %g", tol)
	}
	if maxIter < 1 {
		return nil, 0, fmt.Errorf("dpar: PPR iteration cap must be at least 1, got %d", maxIter)
	}
	adj, deg, err := pprAdjacency(a, "ExactPPR")
	if err != nil {
		return nil, 0, err
	}
	n := adj.Rows
	if source < 0 || source >= n {
		return nil, 0, fmt.Errorf("dpar: PPR source %d is out of range [0, %d)", source, n)
	}
	p := make([]float64, n)
	p[source] = 1
	next := make([]float64, n)
	scaled := make([]float64, n)
	for it := 1; it <= maxIter; it++ {
		for j := range p {
			scaled[j] = p[j] / deg[j]
		}
		// (A D^{-1} p)_i = Σ_j A_ij p_j/d_j, gathered over row i.
		parallel.Rows(n, adj.NNZ(), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s := 0.0
				for _, j := range adj.Indices[adj.Indptr[i]:adj.Indptr[i+1]] {
					s += scaled[j]
				}
				next[i] = (1 - alpha) * s
			}
		})
		next[source] += alpha
		diff := 0.0
		for i := range p {
			diff += math.Abs(next[i] - p[i])
		}
		p, next = next, p
		if diff <= tol {
			return p, it, nil
		}
	}
	return nil, maxIter, fmt.Errorf("dpar: PPR from source %d did not converge to %g in %d iterations", source, tol, maxIter)
}
