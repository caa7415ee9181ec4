package layers

import (
	"fmt"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// NAP is normalise–aggregate–perturb (GAP, ProGAP):
//
//	NAP(Z)_i = Σ_j A_ji · Z_j/‖Z_j‖₂ + N(0, σ²·I)
//
// for every node i, with Z of shape (N, h). Rows are L2-normalised (zero rows
// stay zero), summed over in-neighbours with the sparse op, and Gaussian
// noise is added to every entry of every row. Nothing follows the noise.
// With edge-level DP one directed edge changes one row by at most 1 (L2
// sensitivity 1); with out-degrees bounded by D one node changes at most D
// rows (sensitivity √D). Std is the noise multiplier times that
// sensitivity.
//
// The aggregate is a release: a method computes it once per stage with a
// Runner and caches it, so the adjacency is read exactly as often as the
// accountant is told (Adj.Calls counts the products).
type NAP struct {
	Name  string
	Adj   *nn.Sparse // Aᵀ: row i lists the in-neighbours of i
	Noise *nn.Noise
}

// NewNAP builds a NAP layer over the adjacency a (row j = out-neighbours of
// j; it is transposed here) with noise std std drawn from src.
func NewNAP(name string, a *graphs.CSR, std float64, src nn.NormalSource) *NAP {
	return &NAP{Name: name, Adj: nn.NewSparse(name+".Aᵀ", a.Transpose()),
		Noise: &nn.Noise{Name: name, Std: std, Src: src}}
}

// Forward adds the NAP nodes for input z (N, h) and returns the noisy
// aggregate (N, h).
func (n *NAP) Forward(z *G.Node) *G.Node {
	s := z.Shape()
	if len(s) != 2 || s[0] != n.Adj.A.Cols {
		panic(fmt.Sprintf("layers: NAP %s over %d nodes got input %v", n.Name, n.Adj.A.Cols, s))
	}
	h := G.Must(nn.RowNormalize(z))
	h = G.Must(nn.SpMM(n.Adj, h))
	return G.Must(nn.AddNoise(h, n.Noise))
}

func (n *NAP) String() string {
	return fmt.Sprintf("NAP(%s: normalise → Σ in-neighbours → +N(0, %.4g²))", n.Name, n.Noise.Std)
}

// JumpingKnowledge concatenates the given (N, h_k) embeddings along the
// features and L2-normalises each row (ProGAP's JK with `cat`, followed by
// the row normalisation its code applies before the head).
func JumpingKnowledge(hs ...*G.Node) *G.Node {
	h := hs[0]
	if len(hs) > 1 {
		h = nn.ConcatCols(hs...)
	}
	return G.Must(nn.RowNormalize(h))
}
