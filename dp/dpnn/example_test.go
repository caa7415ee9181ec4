package dpnn_test

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"

	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// An MLP trained with DP-SGD on node features: the training path is built
// in recording mode so the layers record what ghost norms need, BuildSGD
// adds the clipping and noise nodes, and every Step draws a Poisson batch
// and returns the privatised gradient for Adam.
func Example_dpsgdMLP() {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 600, Classes: 3, Features: 16, AvgDegree: 4, Homophily: 0.8, Signal: 3}, 1)
	train := make([]int, 0, 400)
	for i := 0; i < 400; i++ {
		train = append(train, i)
	}
	const epochs, batch = 5, 50
	q := float64(batch) / float64(len(train))
	steps := dpnn.Steps(epochs, q)
	// Noise for (ε, δ) = (4, 1e-3) over exactly the steps we run.
	z, err := dp.CalibrateNoise(4, 1e-3, "rdp", func(z float64) []dp.Event {
		return []dp.Event{dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	capacity := dpnn.DefaultCapacity(q, len(train))

	m := nn.NewModel(1)
	var logits *G.Node
	var ce *nn.CrossEntropy
	var sgd *dpnn.SGD
	var xb *layers.FeatureBatch
	err = nn.Build(func() error {
		mlp, err := layers.NewMLP(m, "mlp", layers.MLPConfig{Dims: []int{16, 32, 3},
			Activation: layers.ReLU, Norm: layers.NormGroup, PlainLast: true})
		if err != nil {
			return err
		}
		if xb, err = layers.NewFeatureBatch(m, g.X, capacity, "X.batch"); err != nil {
			return err
		}
		m.StartRecording()
		batchLogits := xb.MLP(mlp)
		m.StopRecording()
		all, err := layers.NewFeatures(m, g.X, "X")
		if err != nil {
			return err
		}
		logits = all.MLP(mlp)
		if ce, err = nn.NewCrossEntropy(m, batchLogits, "loss"); err != nil {
			return err
		}
		sgd, err = dpnn.BuildSGD(m, ce.PerRow, dpnn.SGDConfig{Clip: 1, Multiplier: z, Rate: q,
			Samples: len(train), Capacity: capacity}, dp.NewSource(7), []*G.Node{logits})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	pos, labels := make([]int, capacity), make([]int, capacity)
	for i := range pos {
		pos[i] = i
	}
	fill := func(samples []int) error { // load the sampled nodes' rows
		rows := make([]int, len(samples))
		for k, s := range samples {
			rows[k], labels[k] = train[s], g.Labels[train[s]]
		}
		if err := xb.Fill(rows); err != nil {
			return err
		}
		sgd.Groups.Singletons(len(samples))
		return ce.SetRows(pos[:len(samples)], labels)
	}
	opt := nn.NewAdam(0.01, 0)
	for t := 0; t < steps; t++ {
		grads, _, err := sgd.Step(fill)
		if err != nil {
			fmt.Println(err)
			return
		}
		opt.Step(m.ParamValues(), grads)
	}
	if err := m.Evaluate(); err != nil {
		fmt.Println(err)
		return
	}
	pred := trainers.Argmax(nn.Values(logits), g.N, 3)
	test := make([]int, 0, 200)
	for i := 400; i < 600; i++ {
		test = append(test, i)
	}
	acct, _ := dp.NewRDP()
	_ = acct.Compose(dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps})
	eps, _ := acct.Epsilon(1e-3)
	fmt.Printf("%d steps, noise multiplier %.3f, ε = %.3f\n", steps, z, math.Floor(eps*1000)/1000)
	fmt.Println("test accuracy above 0.6:", trainers.Accuracy(pred, g.Labels, test) > 0.6)
	// Output:
	// 40 steps, noise multiplier 1.069, ε = 3.999
	// test accuracy above 0.6: true
}
