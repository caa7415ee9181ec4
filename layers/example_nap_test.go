package layers_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// A 2-hop NAP + MLP model with an edge-level budget: the noise for two
// aggregations is calibrated to (ε, δ) = (4, 1e-4) with the exact Gaussian
// accountant, the two hops are released once through a Runner (the only
// reads of the adjacency), and an MLP is trained on the features and the
// cached hops — post-processing, free at edge level.
func Example_napMLP() {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 800, Classes: 3, Features: 8, AvgDegree: 12, Homophily: 0.9, Signal: 0.6}, 2)
	spec, _ := graphs.ParseSplit("ratio:0.5:0.25")
	g, _ = graphs.ApplySplit(g, spec, 1)
	const hops = 2
	// sensitivity 1 per edge
	sigma, err := dp.CalibrateNoise(4, 1e-4, "gdp", func(z float64) []dp.Event { return []dp.Event{dp.GaussianEvent{Multiplier: z, Count: hops}} })
	if err != nil {
		fmt.Println(err)
		return
	}

	// Release: X̃_k = NAP(X̃_{k−1}), X̃_0 = X.
	agg := nn.NewModel(1)
	nap := layers.NewNAP("nap", g.Adj, sigma, dp.NewSource(3))
	var released []*G.Node
	_ = nn.Build(func() error {
		x := agg.Input("X", g.X.Dense, g.N, g.X.F)
		for k := 0; k < hops; k++ {
			x = nap.Forward(x)
			released = append(released, x)
		}
		return nil
	})
	run, _ := agg.NewRunner(released...)
	if err := run.Run(); err != nil {
		fmt.Println(err)
		return
	}
	cat := make([]float64, 0, g.N*g.X.F*(hops+1))
	for i := 0; i < g.N; i++ { // rows: [X_i, X̃1_i, X̃2_i]
		cat = append(cat, g.X.Dense[i*g.X.F:(i+1)*g.X.F]...)
		for _, r := range released {
			cat = append(cat, nn.Values(r)[i*g.X.F:(i+1)*g.X.F]...)
		}
	}

	// Train an MLP on the cached, already private inputs.
	m := nn.NewModel(4)
	var logits *G.Node
	var ce *nn.CrossEntropy
	_ = nn.Build(func() error {
		mlp, err := layers.NewMLP(m, "mlp", layers.MLPConfig{Dims: []int{g.X.F * (hops + 1), 32, 3},
			Activation: layers.SELU, Norm: layers.NormBatch, PlainLast: true})
		if err != nil {
			return err
		}
		logits = mlp.Forward(m.Input("Xcat", cat, g.N, g.X.F*(hops+1)))
		if ce, err = nn.NewCrossEntropy(m, logits, "loss"); err != nil {
			return err
		}
		return m.Compile(ce.Mean, []*G.Node{logits})
	})
	_ = ce.SetRows(g.Split.Train, g.Labels)
	task := &trainers.ModelTask{Model: m, Logits: logits, Opt: nn.NewAdam(0.01, 0)}
	res, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("σ = %.3f for ε = 4 over %d hops; adjacency read %d times\n", sigma, hops, nap.Adj.Calls)
	fmt.Println("test accuracy above 0.6:", trainers.Accuracy(res.Pred, g.Labels, g.Split.Test) > 0.6)
	// Output:
	// σ = 1.356 for ε = 4 over 2 hops; adjacency read 2 times
	// test accuracy above 0.6: true
}
