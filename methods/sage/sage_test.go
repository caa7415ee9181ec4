package sage

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
	"github.com/dpgnn/dpgnn/methods/run"
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

// withoutNode is g − v at node level: v's edges, feature row, label and
// split membership removed, its id kept (isolated).
func withoutNode(g *graphs.Graph, v int) *graphs.Graph {
	gp := g.WithAdj(graphs.RemoveNode(g.Adj, v))
	x := *g.X
	x.Dense = slices.Clone(g.X.Dense)
	clear(x.Dense[v*x.F : (v+1)*x.F])
	gp.X, gp.Labels = &x, slices.Clone(g.Labels)
	gp.Labels[v] = 0
	drop := func(ids []int) []int { return slices.DeleteFunc(slices.Clone(ids), func(i int) bool { return i == v }) }
	gp.Split = graphs.Split{Train: drop(g.Split.Train), Val: drop(g.Split.Val), Test: drop(g.Split.Test)}
	return gp
}

// TestSageAudit: `dpgnn audit sage` replays one DP-SGD step over the
// rooted subgraphs of G and of G − v, v the training node of largest
// degree. The claim is one step's Occurrences{R, 2, Poisson{q,
// Gaussian{z}}} at the run's calibrated z with R = 1 + D — strictly above
// the ε of the same noise read as one example per unit (SGDAudit's
// assumption, which would under-state what G − v may change); every
// released value is compared (none is indexed by node, none left out); the
// replay on G − v is built from G − v (one example fewer: v's own deleted;
// with the same noise source the release differs from G's, so the examples
// that read v changed); and the empirical lower bound of 300 + 300
// releases stays at or below the claim.
func TestSageAudit(t *testing.T) {
	g := methodtest.Graph(t, "ratio:0.5:0.25")
	d := maxDegree(t) + 2
	cfg := DefaultConfig()
	cfg.Flags = degree.DefaultFlags(d)
	cfg.Hidden, cfg.BatchSize = 8, 32
	s := &Sage{cfg: cfg}
	ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Delta: 1e-4, Seed: 3, Selection: trainers.SelectLast}
	target, err := New(cfg).(run.Auditor).AuditTarget(ctx, run.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(ctx, len(g.Split.Train))
	if err != nil {
		t.Fatal(err)
	}
	cal, err := run.PlanSGD(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := run.ClaimedEpsilon(dp.Occurrences{R: 1 + d, Change: 2, Event: dp.Poisson{Rate: p.Rate(), Event: dp.GaussianEvent{Multiplier: cal.Multiplier, Count: 1}}}, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	// The same noise read as one example per unit (SGDAudit's assumption):
	// std z·R·2·C over one example's change 2C, multiplier z·R.
	one, err := run.ClaimedEpsilon(dp.PoissonGaussianEvent{Rate: p.Rate(), Multiplier: cal.Multiplier * float64(1+d), Steps: 1}, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	if target.Claimed != want || !(want > one) || target.Delta != 1e-4 {
		t.Errorf("claimed ε %v at δ %v, want %v (R = %d) at 1e-4, above the one-example reading %v", target.Claimed, target.Delta, want, 1+d, one)
	}
	if nodes, err := target.CoordinateNodes(g.N); err != nil || nodes != nil || target.OwnRow != "" || !strings.Contains(target.What, fmt.Sprintf("R=%d", 1+d)) {
		t.Errorf("coordinates %v (%v), OwnRow %q, What %q: want every value compared and R=%d stated", nodes, err, target.OwnRow, target.What, 1+d)
	}

	deg := graphs.Symmetrize(g.Adj).Degrees()
	v := g.Split.Train[0]
	for _, u := range g.Split.Train {
		if deg[u] > deg[v] {
			v = u
		}
	}
	gp := withoutNode(g, v)
	ctxp := *ctx
	ctxp.Graph = gp
	priv, _, err := run.PrivateNet(&ctxp, s)
	if err != nil {
		t.Fatal(err)
	}
	if priv.Cfg.N != len(g.Split.Train)-1 {
		t.Errorf("G − v has %d examples, want %d (v's own deleted)", priv.Cfg.N, len(g.Split.Train)-1)
	}
	var samples [2][][]float64
	for side, h := range []*graphs.Graph{g, gp} {
		rel, err := target.Prepare(h)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			out, err := rel(dp.NewSource(uint64(i)))
			if err != nil {
				t.Fatal(err)
			}
			samples[side] = append(samples[side], out)
		}
	}
	if slices.Equal(samples[0][0], samples[1][0]) {
		t.Errorf("the release on G − v equals G's under the same source: the removed node's examples were not replayed")
	}
	// The examples the audit says v changed: every training node within
	// Hops of v (v's own deleted, the others' balls lose v), none on G − v
	// that G lacks but the modified ones.
	dist := map[int]int{v: 0}
	sym := graphs.Symmetrize(g.Adj)
	for frontier := []int{v}; len(frontier) > 0; {
		var next []int
		for _, u := range frontier {
			for q := sym.Indptr[u]; q < sym.Indptr[u+1]; q++ {
				if w := sym.Indices[q]; dist[u] < cfg.Hops {
					if _, ok := dist[w]; !ok {
						dist[w] = dist[u] + 1
						next = append(next, w)
					}
				}
			}
		}
		frontier = next
	}
	within := 0
	for _, u := range g.Split.Train {
		if _, ok := dist[u]; ok {
			within++
		}
	}
	a, err := target.Examples(g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := target.Examples(gp)
	if err != nil {
		t.Fatal(err)
	}
	if gone, added := run.ChangedExamples(a, b); gone != within || added != within-1 || target.Covered != 1+d || len(a) != len(g.Split.Train) {
		t.Errorf("the audit counts %d of %d examples changed (%d new on G − v), covering %d; want the %d training nodes within %d hops of v (%d new), covering R = %d",
			gone, len(a), added, target.Covered, within, cfg.Hops, within-1, 1+d)
	}
	res, err := dp.Audit(samples[0], samples[1], dp.AuditConfig{Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	if res.EpsilonLB > target.Claimed {
		t.Errorf("empirical ε_lb %v above the claim %v (%s)", res.EpsilonLB, target.Claimed, res.Statistic)
	}
	t.Logf("v = %d (degree %d), claimed ε %.3f (one-example reading: %.3f), ε_lb %.3f", v, deg[v], target.Claimed, one, res.EpsilonLB)
}
