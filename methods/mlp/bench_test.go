package mlp

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
)

// benchDPEpoch times one epoch of DP-MLP (node level, ε = 8, its defaults:
// a DP-SGD pass over the training nodes in Poisson batches of 64) on g
// under split; the final prediction is not included.
func benchDPEpoch(b *testing.B, g *graphs.Graph, split string, delta float64) {
	g = methodtest.Split(b, g, split)
	m := New(DefaultConfig())
	// Enough epochs that the benchmark never runs out of planned steps.
	m.cfg.TrainEpochs = 1 << 20
	ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Delta: delta, DeltaRule: methods.DeltaGiven, Seed: 1}
	mod, tr, _, src, err := m.dpTask(ctx)
	if err != nil {
		b.Fatal(err)
	}
	task, err := mod.Prepare(ctx, tr, src)
	if err != nil {
		b.Fatal(err)
	}
	steps := tr.SGDSteps() / tr.Epochs
	epoch := func() {
		if _, err := task.TrainEpoch(); err != nil {
			b.Fatal(err)
		}
	}
	methodtest.Steady(b, epoch)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
}

// BenchmarkDPMLPEpochCoraML is one DP-MLP epoch on cora_ml, split
// ratio:0.6:0.2 (28 steps).
func BenchmarkDPMLPEpochCoraML(b *testing.B) {
	g, err := graphio.Load("cora_ml", testutil.DataDir(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	benchDPEpoch(b, g, "ratio:0.6:0.2", 1e-4)
}

// BenchmarkDPMLPEpochFile is one DP-MLP epoch, split ratio:0.1:0.2 and
// δ = 1e-7, on the graph in the npz file $DPGNN_BENCH_GRAPH (e.g. a 10⁵-
// or 10⁶-node graph from `dpgnn data generate`: docs/performance.md's
// scale table); skipped without it.
func BenchmarkDPMLPEpochFile(b *testing.B) {
	benchDPEpoch(b, methodtest.BenchGraph(b), "ratio:0.1:0.2", 1e-7)
}
