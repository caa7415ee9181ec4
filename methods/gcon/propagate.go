package gcon

import (
	"fmt"
	"github.com/dpgnn/dpgnn/layers"

	"github.com/dpgnn/dpgnn/graphs"
)

// Hygiene returns the simple undirected graph GCON's proof assumes (step 0
// of Alg. 1, pitfall P9): A ← A ∨ Aᵀ, binary, zero diagonal, no duplicates.
func Hygiene(a *graphs.CSR) *graphs.CSR {
	s := graphs.RemoveSelfLoops(graphs.Symmetrize(a))
	s = s.Clone()
	s.Data = nil // binary
	return s
}

// Transition returns Ã = D^{-1}(A + I) of the simple graph of a: row i holds
// 1/(k_i+1) at column i and at each neighbour (an isolated node has
// Ã_ii = 1). Row i depends only on node i's own edges.
func Transition(a *graphs.CSR) *graphs.CSR { return graphs.RowNorm(Hygiene(a)) }

// Concat returns Z = (1/s)[Z_{m_1} | … | Z_{m_s}] (Eq. 11), n × s·k.
func Concat(at *graphs.CSR, x []float64, k int, alpha float64, steps []int) ([]float64, error) {
	n, s := at.Rows, len(steps)
	d := s * k
	z := make([]float64, n*d)
	for b, m := range steps {
		zm, err := layers.PPR(at, x, k, alpha, m)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				z[i*d+b*k+j] = zm[i*k+j] / float64(s)
			}
		}
	}
	return z, nil
}

// OneHop returns the private-inference features of Eq. 16 (Alg. 4):
// [R̂_{m_1}X | … | R̂_{m_s}X] with R̂ = I for m = 0 and (1−α_I)Ã + α_I·I
// otherwise (one hop whatever m is), scaled by 1/s like training (a
// uniform factor that leaves the argmax alone). Row v depends only on row
// v of Ã — node v's own edges — and on the features.
func OneHop(at *graphs.CSR, x []float64, k int, alphaI float64, steps []int) ([]float64, error) {
	n, s := at.Rows, len(steps)
	if len(x) != n*k {
		return nil, fmt.Errorf("gcon: features have %d values, want %d×%d", len(x), n, k)
	}
	ax := make([]float64, n*k)
	at.MulDense(x, k, ax)
	d := s * k
	z := make([]float64, n*d)
	for b, m := range steps {
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				v := x[i*k+j]
				if m != 0 {
					v = (1-alphaI)*ax[i*k+j] + alphaI*v
				}
				z[i*d+b*k+j] = v / float64(s)
			}
		}
	}
	return z, nil
}

// NormalizeRows scales every row of the n×k matrix x to unit L2 norm in
// place; zero rows stay zero (only ‖x_i‖ ≤ 1 is needed). It is
// layers.NormalizeRows (which also keeps rows whose squares underflow at
// norm 1).
func NormalizeRows(x []float64, n, k int) { layers.NormalizeRows(x[:n*k], k) }

// CenterColumns subtracts every column's mean over the n rows of x in
// place. GCON's columns have no intercept, so with strong regularisation a
// shared offset in the encodings turns into a class-size prior: the
// largest (pseudo-)class wins everywhere. Centring the edge-free encodings
// removes that offset before the rows are normalised; it reads no edge.
func CenterColumns(x []float64, n, k int) {
	if n == 0 {
		return
	}
	mean := make([]float64, k)
	for i := 0; i < n; i++ {
		for j, v := range x[i*k : (i+1)*k] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		r := x[i*k : (i+1)*k]
		for j := range r {
			r[j] -= mean[j]
		}
	}
}
