package layers

import (
	"fmt"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
)

// CGL is CARIBOU's contractive graph layer (Zheng et al. 2025, eq. 4):
//
//	CGL(X) = C_L·(α₁·Â X + α₂·Mean(X)) + β·X⁽⁰⁾,   α₂ = 1 − α₁,
//
// with Â = D̃^{-1/2}(A+I)D̃^{-1/2} the GCN-normalised adjacency of an
// undirected graph, Mean(X) the matrix whose every row is the column mean
// of X, and X⁽⁰⁾ a fixed input. It has no weights. D̃ is diagonal with
// D̃_uu = t(d_u) = max(d_u, D) + 1, d_u the undirected degree and D ≥ 0 a
// public degree floor (Floor; D = 0 is the usual D + I of CARIBOU eq. 4).
// The floor replaces a minimum-degree assumption: a node below it is
// normalised as if it had degree D, so no graph has to be refused for a
// low degree, and the sensitivities in cgl_sensitivity.go hold for every
// graph (removing an edge or a node lowers degrees, which a refusal
// threshold on the minimum degree could not follow).
//
// ‖Â‖₂ ≤ 1 for every floor: Â = S·Â₀·S with Â₀ the unfloored matrix
// (‖Â₀‖₂ = 1, Prop. 7) and S = diag(√((d_u+1)/t(d_u))), whose entries are
// in (0, 1]. Mean is an orthogonal projection, so X ↦ CGL(X) is
// C_L-Lipschitz in the Frobenius norm: for C_L < 1 the layer is a
// contraction, which is what makes the privacy cost of K noisy layers
// converge in K (dp.CNIFactor).
type CGL struct {
	// Adj is Â (symmetric, N×N; one self-loop per node, so a row's stored
	// entries are its undirected degree plus one).
	Adj *graphs.CSR
	// Lipschitz is C_L ∈ [0, 1]; Alpha1 is α₁ ∈ [0, 1]; Beta is β ≥ 0.
	Lipschitz, Alpha1, Beta float64
	// Floor is the public degree floor D of the normalisation (0: none).
	Floor int
}

// NewCGL builds the layer over an undirected graph a without a degree
// floor: NewCGLFloored(a, 0, …).
func NewCGL(a *graphs.CSR, lipschitz, alpha1, beta float64) (*CGL, error) {
	return NewCGLFloored(a, 0, lipschitz, alpha1, beta)
}

// NewCGLFloored builds the layer over an undirected graph a with the degrees
// of the normalisation floored at floor ≥ 0 (a public bound, never read
// from a): Â_uw = 1/√(t(d_u)·t(d_w)) for every edge and u = w, t(d) =
// max(d, floor) + 1. a's pattern is symmetrised and its self-loops dropped
// before Â is formed, so d_u is the undirected degree. With floor 0 it is
// GCN normalisation, bit for bit.
func NewCGLFloored(a *graphs.CSR, floor int, lipschitz, alpha1, beta float64) (*CGL, error) {
	if err := CheckCGL(lipschitz, alpha1, beta); err != nil {
		return nil, err
	}
	if floor < 0 {
		return nil, fmt.Errorf("degree floor %d: want ≥ 0", floor)
	}
	s := graphs.RemoveSelfLoops(graphs.Symmetrize(a))
	s.Data = nil // the pattern: an unweighted graph
	adj := graphs.GCNNorm(s)
	if floor > 0 {
		inv := make([]float64, adj.Rows)
		for i, e := range adj.Degrees() {
			inv[i] = 1 / math.Sqrt(float64(max(e-1, floor)+1)) // e − 1: the row's self-loop
		}
		for i := 0; i < adj.Rows; i++ {
			for k := adj.Indptr[i]; k < adj.Indptr[i+1]; k++ {
				adj.Data[k] = inv[i] * inv[adj.Indices[k]]
			}
		}
	}
	return &CGL{Adj: adj, Lipschitz: lipschitz, Alpha1: alpha1, Beta: beta, Floor: floor}, nil
}

// CheckCGL validates CGL's coefficients: 0 ≤ C_L ≤ 1 (C_L = 1 is not a
// contraction: the accounting then composes linearly), 0 ≤ α₁ ≤ 1, β ≥ 0.
func CheckCGL(lipschitz, alpha1, beta float64) error {
	switch {
	case !(lipschitz >= 0 && lipschitz <= 1):
		return fmt.Errorf("Lipschitz constant C_L = %g: want 0 ≤ C_L ≤ 1 (< 1 for a contraction)", lipschitz)
	case !(alpha1 >= 0 && alpha1 <= 1):
		return fmt.Errorf("α₁ = %g: want 0 ≤ α₁ ≤ 1 (α₂ = 1 − α₁)", alpha1)
	case !(beta >= 0) || math.IsInf(beta, 1):
		return fmt.Errorf("β = %g: want a finite β ≥ 0", beta)
	}
	return nil
}

// Apply writes CGL(x) into out (all row-major N×d; out must not alias x).
func (c *CGL) Apply(x, x0 []float64, d int, out []float64) {
	n := c.Adj.Rows
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	c.Adj.MulDense(x, d, out)
	a1, a2 := c.Lipschitz*c.Alpha1, c.Lipschitz*(1-c.Alpha1)
	parallel.Rows(n, n*d, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o, r := out[i*d:(i+1)*d], x0[i*d:(i+1)*d]
			for j := range o {
				o[j] = a1*o[j] + a2*mean[j] + c.Beta*r[j]
			}
		}
	})
}

func (c *CGL) String() string {
	floor := ""
	if c.Floor > 0 {
		floor = fmt.Sprintf(", degrees floored at %d", c.Floor)
	}
	return fmt.Sprintf("CGL(C_L=%g, α₁=%g, β=%g%s: C_L·(α₁·ÂX + α₂·Mean X) + β·X⁰)", c.Lipschitz, c.Alpha1, c.Beta, floor)
}

// ProjectRows projects every row of the N×d matrix x onto the unit ball,
// x_u ← x_u / max(1, ‖x_u‖₂): the projection Π_𝒦 onto the convex set 𝒦 of
// row-wise unit balls, which is 1-Lipschitz (the contractive noisy
// iteration needs exactly this; a rescaling onto the sphere is neither
// convex nor 1-Lipschitz near 0).
func ProjectRows(x []float64, d int) { rescaleRows(x, d, 1) }

// NormalizeRows rescales every non-zero row of the N×d matrix x onto the
// unit sphere (GAP's F.normalize). As PCMP's row step (PCMP.Normalize) it
// is not covered by the convergent analysis.
func NormalizeRows(x []float64, d int) { rescaleRows(x, d, 0) }

// rescaleRows divides every row whose squared norm exceeds floor (> 0) by
// its norm.
func rescaleRows(x []float64, d int, floor float64) {
	n := len(x) / d
	rootFloor := math.Sqrt(floor)
	parallel.Rows(n, len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := x[i*d : (i+1)*d]
			s := 0.0
			for _, v := range r {
				s += v * v
			}
			n := vec.Norm2(r, s) // √s, or the scaled norm if s underflowed
			if n > rootFloor && n > 0 {
				f := 1 / n
				for j := range r {
					r[j] *= f
				}
			}
		}
	})
}

// PCMP is perturbed contractive message passing (CARIBOU Alg. 1, with
// line 17 projecting X^(k+1) and zero-mean noise):
//
//	X ← X⁽⁰⁾;  K times:  X ← Π_𝒦(CGL(X) + N(0, Std²·I))
//
// Every layer draws fresh noise with the same std; only X^(K) is returned.
// The intermediate embeddings X^(1..K−1) live in one reused buffer and are
// never returned, logged or traced: the convergent bound holds only for the
// last hop (the hidden-state model). X⁽⁰⁾ must lie in 𝒦 (rows of norm ≤ 1),
// which the sensitivity bounds assume; Release refuses it otherwise.
type PCMP struct {
	Layer *CGL
	Hops  int
	Std   float64
	Src   nn.NormalSource
	// Normalize rescales rows onto the sphere instead of projecting them
	// (GAP's code path; not covered by the contractive analysis).
	Normalize bool
	// Rec, if set, records every Release that drew noise (one release of
	// the K noisy hops, only X^(K) being released) in the run's privacy
	// ledger: the *dp.Recorder of the plan's release (nn.Releaser, so
	// layers does not import dp).
	Rec nn.Releaser
}

// Release runs the K noisy layers over x0 (N×d, rows of norm ≤ 1) and
// returns X^(K).
func (p *PCMP) Release(x0 []float64, d int) ([]float64, error) {
	n := p.Layer.Adj.Rows
	if d <= 0 || len(x0) != n*d {
		return nil, fmt.Errorf("PCMP over %d nodes: input has %d values, want %d×%d", n, len(x0), n, d)
	}
	if p.Hops < 1 {
		return nil, fmt.Errorf("PCMP: %d hops, want at least 1", p.Hops)
	}
	for i := 0; i < n; i++ {
		r := x0[i*d : (i+1)*d]
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		if !(vec.Norm2(r, s) <= 1+1e-9) {
			// which row, and its norm, are the data's: the message names
			// the bound only
			return nil, fmt.Errorf("PCMP: a row of X⁽⁰⁾ lies outside the unit ball the sensitivity bounds assume (an input the normalisation should have kept within it)")
		}
	}
	x := append([]float64(nil), x0...)
	h := make([]float64, n*d)
	noise := make([]float64, n*d)
	for k := 0; k < p.Hops; k++ {
		p.Layer.Apply(x, x0, d, h)
		if p.Std > 0 {
			fillNormal(p.Src, noise)
			for i, z := range noise {
				h[i] += p.Std * z
			}
		}
		if p.Normalize {
			NormalizeRows(h, d)
		} else {
			ProjectRows(h, d)
		}
		x, h = h, x
	}
	if p.Std > 0 && p.Rec != nil {
		p.Rec.Record()
	}
	return x, nil
}

// fillNormal fills dst with standard normals from src (all at once when the
// source can).
func fillNormal(src nn.NormalSource, dst []float64) {
	if f, ok := src.(interface{ FillNormal([]float64) }); ok {
		f.FillNormal(dst)
		return
	}
	for i := range dst {
		dst[i] = src.Normal()
	}
}

func (p *PCMP) String() string {
	rows := "Π unit ball"
	if p.Normalize {
		rows = "normalise rows"
	}
	return fmt.Sprintf("PCMP(%d × [%s → +N(0, %.4g²) → %s]; only X^(K) released)", p.Hops, p.Layer, p.Std, rows)
}
