package gcn

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/nn"
)

func benchEpoch(b *testing.B, g *graphs.Graph) {
	spec, _ := graphs.ParseSplit("per-class:20:500:1000")
	g, err := graphs.ApplySplit(g, spec, 1)
	if err != nil {
		b.Fatal(err)
	}
	m := New(Config{Hidden: 16, TrainEpochs: 1, LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5})
	n, err := m.buildNet(g, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	if err := n.ce.SetRows(g.Split.Train, g.Labels); err != nil {
		b.Fatal(err)
	}
	task := n.task(nn.NewAdam(0.01, 5e-4))
	epoch := func() {
		if _, err := task.TrainEpoch(); err != nil {
			b.Fatal(err)
		}
		if _, err := task.MonitorPredict(); err != nil {
			b.Fatal(err)
		}
	}
	// The first epoch allocates the machines' buffers and the optimiser's
	// moments; -benchmem then shows the steady state.
	epoch()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		epoch()
	}
}

// BenchmarkGCNEpochCoraML is one training step plus one evaluation pass
// (on the frozen path, waited for) of the 2-layer GCN on cora_ml (2,995 nodes, 2,879 sparse features).
func BenchmarkGCNEpochCoraML(b *testing.B) {
	g, err := graphs.Load("cora_ml", testutil.DataDir(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	benchEpoch(b, g)
}

// BenchmarkGCNEpochCSBM is the same on the embedded default graph.
func BenchmarkGCNEpochCSBM(b *testing.B) {
	benchEpoch(b, graphs.CSBM(graphs.DefaultCSBM(), 1))
}
