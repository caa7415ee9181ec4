package run_test

import (
	"math"
	"testing"

	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
)

// BenchmarkRunCora is one whole run (training every stage plus the final
// prediction, data loading excluded) of each method with its defaults on
// cora, split ratio:0.1:0.2 (ratio:0.6:0.2 and δ = 1e-4 at node level):
// the number to set against the Python originals' wall-clock time per run.
//
//	go test ./methods -run '^$' -bench RunCora -benchtime 3x
func BenchmarkRunCora(b *testing.B) {
	raw, err := graphio.Load("cora", testutil.DataDir(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, method string
		level        methods.Level
		eps          float64
		split        string
		args         []string
	}{
		{"mlp", "mlp", methods.None, math.Inf(1), "ratio:0.1:0.2", nil},
		{"gcn", "gcn", methods.None, math.Inf(1), "ratio:0.1:0.2", nil},
		{"gap-edge-eps1", "gap", methods.Edge, 1, "ratio:0.1:0.2", nil},
		{"progap-edge-eps1", "progap", methods.Edge, 1, "ratio:0.1:0.2", nil},
		{"gcon-edge-eps1", "gcon", methods.Edge, 1, "ratio:0.1:0.2", nil},
		{"caribou-edge-eps1", "caribou", methods.Edge, 1, "ratio:0.1:0.2", nil},
		{"dpmlp-node-eps8", "mlp", methods.Node, 8, "ratio:0.6:0.2", nil},
		// cora's largest out-degree is 168: the public bound must cover it
		{"gap-node-eps8", "gap", methods.Node, 8, "ratio:0.6:0.2", []string{"--max-degree", "168"}},
		{"progap-node-eps8", "progap", methods.Node, 8, "ratio:0.6:0.2", []string{"--max-degree", "168"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := methodtest.Split(b, raw, tc.split)
			m := newMethod(b, tc.method, tc.args...)
			if err := m.Validate(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ctx := &methods.Context{Graph: g, Dataset: "cora", Level: tc.level, Epsilon: tc.eps, Seed: uint64(i + 1)}
				if tc.level == methods.Node {
					ctx.Delta, ctx.DeltaRule = 1e-4, methods.DeltaGiven
				}
				if _, err := m.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
