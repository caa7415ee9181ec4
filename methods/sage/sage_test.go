package sage

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
	"github.com/dpgnn/dpgnn/trainers"
)

// maxDegree is the largest degree of the symmetrised test graph.
func maxDegree(t *testing.T) int {
	g := methodtest.Graph(t, "ratio:0.5:0.25")
	d := 0
	adj := g.Adj
	for _, v := range adjDegrees(adj.Indptr) {
		d = max(d, v)
	}
	return d
}

func adjDegrees(indptr []int) []int {
	out := make([]int, len(indptr)-1)
	for i := range out {
		out[i] = indptr[i+1] - indptr[i]
	}
	return out
}

// TestSageNodeLevel: at node level with a public bound D above the graph's
// degrees, sage trains, its report meets the budget, its plan's noise std
// is z·R·2·C with R = 1 + D (K = 1, undirected), and its ledger holds
// exactly the plan's steps of Occurrences{R, 2, …}; without privacy it
// learns the graph.
func TestSageNodeLevel(t *testing.T) {
	d := maxDegree(t) + 2
	for _, tc := range []struct {
		level methods.Level
		eps   float64
		min   float64
	}{{methods.None, math.Inf(1), 0.6}, {methods.Node, 8, 0}} {
		cfg := DefaultConfig()
		cfg.Flags = degree.DefaultFlags(d)
		cfg.Epochs, cfg.BatchSize = 5, 32
		m := New(cfg)
		g := methodtest.Graph(t, "ratio:0.5:0.25")
		ctx := &methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Delta: 1e-4, Seed: 3, Selection: trainers.SelectLast}
		out, err := m.Run(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.level, err)
		}
		correct := 0
		for _, u := range g.Split.Test {
			if out.Pred[u] == g.Labels[u] {
				correct++
			}
		}
		if acc := float64(correct) / float64(len(g.Split.Test)); acc < tc.min {
			t.Errorf("%s: test accuracy %.3f, want ≥ %.2f", tc.level, acc, tc.min)
		}
		if tc.level == methods.None {
			continue
		}
		rep := out.Privacy
		if rep == nil || rep.Epsilon == nil || *rep.Epsilon > tc.eps*(1+1e-9) {
			t.Fatalf("report %+v, want ε ≤ %g", rep, tc.eps)
		}
		z, r := rep.Noise["multiplier"], float64(1+d)
		if got, want := rep.Noise["std"], z*r*2*cfg.Clip; math.Abs(got/want-1) > 1e-12 || rep.Noise["occurrences"] != r {
			t.Errorf("noise std %g with R=%g, want z·R·2·C = %g with R = %g", got, rep.Noise["occurrences"], want, r)
		}
		steps := int(rep.Noise["steps"])
		if len(rep.Ledger) != 1 || !strings.Contains(rep.Ledger[0], fmt.Sprintf("Composed(count=%d, Occurrences(R=%d, change=2", steps, 1+d)) {
			t.Errorf("ledger %v, want the dpsgd Occurrences steps", rep.Ledger)
		}
		if entries := ctx.Ledger().Entries(); len(entries) != steps {
			t.Errorf("ledger has %d releases, the plan %d steps", len(entries), steps)
		}
	}
}

// TestSageRefusals: a public bound below the graph's degrees is refused
// before anything is released without naming the data's degrees; node
// level without a bound and a private selection are refused.
func TestSageRefusals(t *testing.T) {
	d := maxDegree(t)
	for _, tc := range []struct {
		name, bound string
		d           int
		sel         string
		want        string
	}{
		{"below the graph", "public", d - 1, trainers.SelectLast, "--max-degree"},
		{"no bound", "none", d, trainers.SelectLast, "needs a degree bound"},
		{"private selection", "public", d + 1, trainers.SelectPrivate, "--selection private"},
	} {
		cfg := DefaultConfig()
		cfg.Flags = degree.Flags{MaxDegree: tc.d, DegreeBound: tc.bound}
		cfg.Epochs = 1
		ctx := &methods.Context{Graph: methodtest.Graph(t, "ratio:0.5:0.25"), Level: methods.Node, Epsilon: 8, Delta: 1e-4, Seed: 3, Selection: tc.sel}
		_, err := New(cfg).Run(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
		if len(ctx.Ledger().Entries()) != 0 {
			t.Errorf("%s: released before refusing", tc.name)
		}
	}
}
