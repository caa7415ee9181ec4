package gcn

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

func benchEpoch(b *testing.B, g *graphs.Graph) {
	benchEpochWith(b, g, "per-class:20:500:1000", Config{Hidden: 16, TrainEpochs: 1, LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5})
}

func benchEpochWith(b *testing.B, g *graphs.Graph, split string, cfg Config) {
	g = methodtest.Split(b, g, split)
	m := New(cfg)
	n, err := m.buildNet(g, 1, run.WatchRows(g.Split, g.N, false))
	if err != nil {
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
	methodtest.Steady(b, epoch)
}

// BenchmarkGCNEpochCoraML is one training step plus one evaluation pass
// (on the frozen path, waited for) of the 2-layer GCN on cora_ml (2,995 nodes, 2,879 sparse features).
func BenchmarkGCNEpochCoraML(b *testing.B) {
	g, err := graphio.Load("cora_ml", testutil.DataDir(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	benchEpoch(b, g)
}

// BenchmarkGCNEpochCSBM is the same on the embedded default graph.
func BenchmarkGCNEpochCSBM(b *testing.B) {
	benchEpoch(b, gen.CSBM(gen.DefaultCSBM(), 1))
}

// BenchmarkGCNEpochFile is an epoch of `dpgnn train gcn` with its defaults
// (hidden 64, dropout 0.5) and split ratio:0.1:0.2 on the graph in the npz
// file $DPGNN_BENCH_GRAPH, e.g. a 10⁵- or 10⁶-node graph from `dpgnn data
// generate` (docs/performance.md's scale table); skipped without it.
func BenchmarkGCNEpochFile(b *testing.B) {
	benchEpochWith(b, methodtest.BenchGraph(b), "ratio:0.1:0.2", DefaultConfig())
}
