package layers

import (
	"path/filepath"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// coraAdj is cora's adjacency (2708 nodes, 10556 entries) from the shared
// datasets; the benchmark is skipped without them.
func coraAdj(b *testing.B) *graphs.CSR {
	b.Helper()
	g, err := graphio.LoadNPZ(filepath.Join(testutil.DataDir(b), "cora.npz"))
	if err != nil {
		b.Fatal(err)
	}
	return g.Adj
}

// BenchmarkAggregate times Aggregate on cora with 64 columns in each mode:
// forward alone (an evaluation path) and forward with the gradient of
// Σ out (a training step's share).
//
//	go test ./layers -run '^$' -bench Aggregate -benchmem
func BenchmarkAggregate(b *testing.B) {
	a := coraAdj(b)
	nb, err := NewNeighbours("cora", a)
	if err != nil {
		b.Fatal(err)
	}
	const k = 64
	for _, mode := range []Aggr{Sum, Mean, Max} {
		m := nn.NewModel(1)
		x := m.NewParam("x", nn.Uniform(1), a.Cols, k)
		var y *G.Node
		err := nn.Build(func() error {
			var err error
			if y, err = Aggregate(m, nb, x.Node, mode); err != nil {
				return err
			}
			loss := G.Must(nn.SumAll(nn.RowSums(y)))
			return m.Compile(loss, []*G.Node{y})
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mode.String()+"/forward", func(b *testing.B) {
			for b.Loop() {
				if err := m.Evaluate(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode.String()+"/step", func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
