package dpnn

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// TagObjectivePerturbation labels the loss-graph nodes of objective
// perturbation for inspection.
const TagObjectivePerturbation = nn.DPTagPrefix + "objective-perturbation"

// ObjectivePerturbation adds to m's graph the perturbation terms of
// objective perturbation (Chaudhuri et al. 2011; GCON Eq. 13):
//
//	(1/n1)·⟨B, Θ⟩ + (Λ'/2)·‖Θ‖²_F
//
// where theta is the (d, c) parameter node, b the d×c noise matrix
// (row-major; it becomes an input node "B"), n1 the number of loss rows the
// data term averages over, and lambdaPrime ≥ 0 the extra quadratic
// coefficient. It returns the scalar node to add to the loss. Every node it
// builds is labelled TagObjectivePerturbation. Its gradient with respect to
// Θ is B/n1 + Λ'Θ.
func ObjectivePerturbation(m *nn.Model, theta *G.Node, b []float64, lambdaPrime float64, n1 int) (*G.Node, error) {
	if m == nil || theta == nil {
		return nil, fmt.Errorf("dp: objective perturbation needs a model and a parameter node")
	}
	s := theta.Shape()
	if s.Dims() != 2 {
		return nil, fmt.Errorf("dp: objective perturbation needs a matrix parameter, got shape %v", s)
	}
	d, c := s[0], s[1]
	if len(b) != d*c {
		return nil, fmt.Errorf("dp: noise matrix has %d values, want %d×%d", len(b), d, c)
	}
	if err := dp.CheckCount("n1", n1); err != nil {
		return nil, err
	}
	if !(lambdaPrime >= 0) || math.IsInf(lambdaPrime, 1) {
		return nil, fmt.Errorf("dp: Λ' must be non-negative and finite, got %v", lambdaPrime)
	}
	var out *G.Node
	err := m.TagNew(TagObjectivePerturbation, func() error {
		return nn.Build(func() error {
			bn := m.Input("B", append([]float64(nil), b...), d, c)
			inner := G.Must(G.Sum(G.Must(G.HadamardProd(bn, theta))))
			lin := G.Must(G.Mul(inner, G.NewConstant(1/float64(n1), G.WithName("1/n1"))))
			m.Tag(lin, TagObjectivePerturbation, "(1/n1)⟨B,Θ⟩")
			out = lin
			if lambdaPrime > 0 {
				sq := G.Must(G.Sum(G.Must(G.Square(theta))))
				quad := G.Must(G.Mul(sq, G.NewConstant(lambdaPrime/2, G.WithName("Λ'/2"))))
				m.Tag(quad, TagObjectivePerturbation, "(Λ'/2)‖Θ‖²")
				out = G.Must(G.Add(lin, quad))
			}
			m.Tag(out, TagObjectivePerturbation)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("dp: objective perturbation: %w", err)
	}
	return out, nil
}
