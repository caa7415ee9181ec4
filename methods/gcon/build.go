package gcon

import (
	"math/rand/v2"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// BuildModel builds GCON's perturbed objective as an expression graph for
// `dpgnn inspect`: scores Z·Θ over the training rows, the per-column convex
// loss averaged over n1, (Λ/2)‖Θ‖², and the objective-perturbation terms
// (1/n1)⟨B,Θ⟩ + (Λ'/2)‖Θ‖² from dp. The training run minimises exactly this
// objective with the Newton solver; here the encoder output is a seeded
// random placeholder (row-normalised), so nothing is trained.
func (m *GCON) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	g := ctx.Graph
	c, d1 := g.NumClasses, m.cfg.EncoderHidden
	r := rand.New(rand.NewPCG(ctx.Seed, 0x9c0))
	x := make([]float64, g.N*d1)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	NormalizeRows(x, g.N, d1)
	rows := g.Split.Train
	labels := make([]int, len(rows))
	for k, i := range rows {
		labels[k] = g.Labels[i]
	}
	pp, err := m.perturbedProblem(ctx, x, d1, rows, labels)
	if err != nil {
		return nil, err
	}
	model, _, err := m.objectiveModel(ctx.Seed, pp.zt, pp.y, pp.z, g.N, pp.n1, pp.d, c, pp.cal, pp.b)
	return model, err
}

// objectiveModel builds Eq. 13 as a gorgonia loss over Θ (d×c): scores of
// the n1 training rows zt (n1×d) against targets y (n1×c), the per-column
// loss averaged over n1, (Λ/2)‖Θ‖², and dp's objective-perturbation terms
// (1/n1)⟨B,Θ⟩ + (Λ'/2)‖Θ‖². Its output is the score matrix of all n rows
// of z. `dpgnn inspect` shows it and --solver adam minimises it.
func (m *GCON) objectiveModel(seed uint64, zt, y, z []float64, n, n1, d, c int, cal Calibration, b []float64) (*nn.Model, *nn.Param, error) {
	model := nn.NewModel(seed)
	var theta *nn.Param
	err := nn.Build(func() error {
		theta = model.NewParam("gcon.Θ", nn.Uniform(0.1), d, c)
		scores := G.Must(G.Mul(model.Input("Z.train", zt, n1, d), theta.Node))
		yn := model.Input("Y.train", y, n1, c)
		var per *G.Node
		if m.loss == PseudoHuber {
			// (δ²/c)(√(1+((x−y)/δ)²) − 1)
			u := G.Must(G.Mul(G.Must(G.Sub(scores, yn)), G.NewConstant(1/m.cfg.HuberDelta)))
			root := G.Must(G.Sqrt(G.Must(G.Add(G.Must(G.Square(u)), G.NewConstant(1.0)))))
			per = G.Must(G.Mul(G.Must(G.Sub(root, G.NewConstant(1.0))), G.NewConstant(m.cfg.HuberDelta*m.cfg.HuberDelta/float64(c))))
		} else {
			// (softplus(x) − y·x)/c
			per = G.Must(G.Sub(G.Must(G.Softplus(scores)), G.Must(G.HadamardProd(yn, scores))))
			per = G.Must(G.Mul(per, G.NewConstant(1/float64(c))))
		}
		data := G.Must(G.Mul(G.Must(G.Sum(per)), G.NewConstant(1/float64(n1), G.WithName("1/n1"))))
		reg := G.Must(G.Mul(G.Must(G.Sum(G.Must(G.Square(theta.Node)))), G.NewConstant(cal.Lambda/2, G.WithName("Λ/2"))))
		pert, err := dpnn.ObjectivePerturbation(model, theta.Node, b, cal.LambdaPrime, n1)
		if err != nil {
			return err
		}
		loss := G.Must(G.Add(G.Must(G.Add(data, reg)), pert))
		all := G.Must(G.Mul(model.Input("Z", z, n, d), theta.Node))
		return model.Compile(loss, []*G.Node{all})
	})
	if err != nil {
		return nil, nil, err
	}
	return model, theta, nil
}

var _ run.Builder = (*GCON)(nil)
