package attacks

import (
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/caribou"
	_ "github.com/dpgnn/dpgnn/methods/dpar"
	_ "github.com/dpgnn/dpgnn/methods/gap"
	_ "github.com/dpgnn/dpgnn/methods/gcn"
	_ "github.com/dpgnn/dpgnn/methods/gcon"
	_ "github.com/dpgnn/dpgnn/methods/mlp"
	_ "github.com/dpgnn/dpgnn/methods/progap"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/pflag"
)

// testGraph is a small csbm graph with a ratio split.
func testGraph(t testing.TB, nodes int, signal float64, seed uint64) *graphs.Graph {
	t.Helper()
	return graphstest.CSBM(t, gen.CSBMConfig{Nodes: nodes, Classes: 3, Features: 16, AvgDegree: 6, Homophily: 0.9, Signal: signal}, seed, "ratio:0.5:0.3", seed)
}

// train runs the named method on g with its flags set from args.
func train(t testing.TB, g *graphs.Graph, name string, level methods.Level, eps float64, args ...string) *methods.Outcome {
	t.Helper()
	m, err := methods.New(name)
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	methods.BindConfig(fs, m.Config())
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if level == methods.None {
		eps = math.Inf(1)
	}
	ctx := &methods.Context{Graph: g, Dataset: "csbm", Level: level, Epsilon: eps, DeltaRule: methods.DeltaAuto,
		Selection: trainers.SelectBest, Seed: 1, Recorder: trainers.Nop{}}
	out, err := m.Run(ctx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestAUCKnownCases: the AUC is the fraction of (positive, negative) pairs
// ranked correctly, ties counting one half.
func TestAUCKnownCases(t *testing.T) {
	for _, c := range []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{0.9, 0.8, 0.3}, []float64{0.5, 0.2}, 5.0 / 6},
		{[]float64{1, 1}, []float64{1, 0}, 0.75},
		{[]float64{0, 0.1}, []float64{0.5, 0.6}, 0},
		{[]float64{2}, []float64{2}, 0.5},
	} {
		if got := trainers.AUC(c.pos, c.neg); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("AUC(%v, %v) = %v, want %v", c.pos, c.neg, got, c.want)
		}
	}
}

// TestQueryReproducesScores: a query with the graph's own features over
// the run's graph gives the released model's posteriors again when the
// method draws no noise at inference — the query path is the model's
// inference, not an approximation of it.
func TestQueryReproducesScores(t *testing.T) {
	g := testGraph(t, 200, 1, 3)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gcn", []string{"--epochs", "20"}},
		{"mlp", []string{"--epochs", "20"}},
		{"gap", []string{"--epochs", "10", "--encoder-epochs", "10"}},
		{"gap", []string{"--epochs", "10", "--encoder-layers", "0"}},
		{"progap", []string{"--epochs", "10", "--hops", "2"}},
		{"caribou", []string{"--epochs", "10", "--encoder-epochs", "10", "--hops", "3"}},
		{"gcon", []string{"--encoder-epochs", "20"}},
		{"dpar", []string{"--epochs", "10"}},
	} {
		out := train(t, g, tc.name, methods.None, 0, tc.args...)
		if len(out.Scores) != g.N*g.NumClasses || out.Query == nil || out.QueryOn == nil {
			t.Fatalf("%s %v: %d scores, query set: %v", tc.name, tc.args, len(out.Scores), out.Query != nil)
		}
		p, err := out.Query(g.X)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.name, tc.args, err)
		}
		var worst float64
		for i := range p {
			worst = math.Max(worst, math.Abs(p[i]-out.Scores[i]))
		}
		if worst > 1e-9 {
			t.Errorf("%s %v: query differs from the released posteriors by %.3g", tc.name, tc.args, worst)
		}
		pred := trainers.Argmax(out.Scores, g.N, g.NumClasses)
		if a := trainers.Accuracy(pred, out.Pred, allNodes(g.N)); a < 0.99 {
			t.Errorf("%s %v: the scores' argmax agrees with the predictions on %.3f of the nodes", tc.name, tc.args, a)
		}
	}
}

func allNodes(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// TestLinkTellerNonPrivateGCN: against a non-private GCN, whose posterior
// of u moves with the features of its neighbours only, the influence
// scores separate edges from non-edges almost perfectly. A broken
// influence (X′ not used, or the wrong row scaled) gives 0.5.
func TestLinkTellerNonPrivateGCN(t *testing.T) {
	g := testGraph(t, 300, 1, 5)
	out := train(t, g, "gcn", methods.None, 0, "--epochs", "50")
	res, err := LinkTeller(g, out.Query, LinkTellerConfig{Nodes: 150, Candidates: allNodes(g.N), Influence: DefaultInfluence, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GCN: AUC %.3f over %d edges and %d non-edges among %d nodes, %d queries", res.AUC, res.Edges, res.NonEdges, res.Nodes, res.Queries)
	if res.AUC < 0.9 || res.Edges < 20 || res.NonEdges != res.Edges {
		t.Fatalf("AUC %.3f over %d edges / %d non-edges, want ≥ 0.9 and balanced", res.AUC, res.Edges, res.NonEdges)
	}
	// The same attack with a query that ignores its features: chance.
	fixed := func(*graphs.Features) ([]float64, error) { return out.Query(g.X) }
	res0, err := LinkTeller(g, fixed, LinkTellerConfig{Nodes: 150, Candidates: allNodes(g.N), Influence: DefaultInfluence, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res0.AUC != 0.5 {
		t.Fatalf("a query that ignores X′ gives AUC %.3f, want 0.5", res0.AUC)
	}
}

// TestLinkTellerPrivate: with strong edge-level privacy (GAP and CARIBOU at
// ε = 0.5) every query re-runs the aggregation with fresh noise, and the
// influence scores are noise: AUC near 0.5. The queries' cost is charged:
// one release per query, composed beyond the run's claim.
func TestLinkTellerPrivate(t *testing.T) {
	g := testGraph(t, 300, 1, 5)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gap", []string{"--epochs", "20", "--encoder-epochs", "20"}},
		{"caribou", []string{"--epochs", "20", "--encoder-epochs", "20", "--hops", "4"}},
	} {
		out := train(t, g, tc.name, methods.Edge, 0.5, tc.args...)
		res, err := LinkTeller(g, out.Query, LinkTellerConfig{Nodes: 150, Candidates: allNodes(g.N), Influence: DefaultInfluence, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		total, alone, err := out.QueryCost.Epsilon()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s ε=0.5: AUC %.3f (%d edges), %d queries cost ε = %.3g alone, %.3g with the run", tc.name, res.AUC, res.Edges, res.Queries, alone, total)
		if math.Abs(res.AUC-0.5) > 0.15 {
			t.Errorf("%s: AUC %.3f, want within 0.15 of 0.5", tc.name, res.AUC)
		}
		if out.QueryCost.Queries() != res.Queries || !(alone > 0.5) || !(total > alone) {
			t.Errorf("%s: %d queries charged (attack made %d), ε %.3g alone and %.3g in all, want both above the run's 0.5", tc.name, out.QueryCost.Queries(), res.Queries, alone, total)
		}
	}
}

// TestQueryFreshNoise: a private GAP's queries each draw fresh noise (two
// queries with the same features differ), are recorded in the run's
// ledger, and cost exactly what composing their Gaussian releases with the
// run's gives; a query path that charged a query without drawing its noise
// would fail the ledger check.
func TestQueryFreshNoise(t *testing.T) {
	g := testGraph(t, 200, 1, 3)
	out := train(t, g, "gap", methods.Edge, 1, "--epochs", "10", "--encoder-epochs", "10", "--hops", "2")
	p1, err := out.Query(g.X)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := out.Query(g.X)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(p1, p2) {
		t.Fatal("two queries with the same features gave the same posteriors: the noise was reused or skipped")
	}
	total, alone, err := out.QueryCost.Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	z := out.Privacy.Noise["nap_std"] // sensitivity 1 (directed edges)
	wantTotal, err := dp.EpsilonOf("gdp", []dp.Event{dp.GaussianEvent{Multiplier: z, Count: 2 * 3}}, out.Privacy.Delta)
	if err != nil {
		t.Fatal(err)
	}
	wantAlone, err := dp.EpsilonOf("gdp", []dp.Event{dp.GaussianEvent{Multiplier: z, Count: 2 * 2}}, out.Privacy.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(total-wantTotal) > 1e-9 || math.Abs(alone-wantAlone) > 1e-9 || *out.Privacy.Epsilon > 1 {
		t.Fatalf("2 queries: ε %v alone, %v with the run; want %v and %v", alone, total, wantAlone, wantTotal)
	}
	out.QueryCost.Charge() // a query that released nothing
	if _, _, err := out.QueryCost.Epsilon(); err == nil {
		t.Fatal("a charged query without its releases passed the ledger check")
	}
}

// TestMIAOverfit: G-MIA against a non-private GCN trained long without
// regularisation on a graph with many weak features (it memorises its
// members: accuracy about 0.97 on them, 0.76 on non-members) tells members
// from non-members better than chance (AUC about 0.73); the split is
// balanced and disjoint.
func TestMIAOverfit(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 600, Classes: 3, Features: 128, AvgDegree: 6, Homophily: 0.9, Signal: 0.3}, 7)
	trainer := func(sub *graphs.Graph, role string) (*methods.Outcome, error) {
		return train(t, sub, "gcn", methods.None, 0, "--epochs", "200", "--weight-decay", "0", "--dropout", "0", "--hidden", "64"), nil
	}
	res, err := MIA(g, trainer, MIAConfig{Seed: 1, Classifier: ClassifierConfig{Hidden: []int{100, 50}, Epochs: 40, LR: 0.01, Batch: 32}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Split
	t.Logf("G-MIA: AUC %.3f (shadow %.3f); target accuracy %.3f on members, %.3f on non-members; %d per class",
		res.AUC, res.ShadowAUC, res.TargetTrainAcc, res.TargetOutAcc, s.PerClass)
	seen := map[int]bool{}
	for _, l := range [][]int{s.TargetTrain, s.TargetOut, s.ShadowTrain, s.ShadowOut} {
		if len(l) != s.PerClass*g.NumClasses {
			t.Fatalf("split part of %d nodes, want %d", len(l), s.PerClass*g.NumClasses)
		}
		for _, v := range l {
			if seen[v] {
				t.Fatalf("node %d in two parts of the split", v)
			}
			seen[v] = true
		}
	}
	if res.AUC < 0.6 || res.TargetTrainAcc < res.TargetOutAcc+0.1 {
		t.Fatalf("AUC %.3f against an overfit GCN (accuracy %.3f on members, %.3f on non-members), want ≥ 0.6", res.AUC, res.TargetTrainAcc, res.TargetOutAcc)
	}
}

// TestMIAStandardize: a model whose posteriors are uniform up to 1e-4,
// with members' largest posterior 1e-4 higher than non-members', leaks
// membership perfectly; the standardised attack finds it (AUC ≥ 0.95 on
// the target). On the raw sorted posteriors G-MIA's classifier barely
// moves from its initialisation: its scores order the nodes by accident
// (logged, not asserted: 0 here, ties at 0.5 for GCON on cora).
func TestMIAStandardize(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 600, Classes: 3, Features: 8, AvgDegree: 4, Homophily: 0.9, Signal: 1}, 3)
	split, err := SplitMIA(g, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	trainer := func(sub *graphs.Graph, role string) (*methods.Outcome, error) {
		members := split.TargetTrain
		if role == "shadow" {
			members = split.ShadowTrain
		}
		c := g.NumClasses
		p := make([]float64, g.N*c)
		for v := 0; v < g.N; v++ {
			for k := 0; k < c; k++ {
				p[v*c+k] = 1 / float64(c)
			}
			p[v*c] += 1e-5 * float64(v%7) / 7 // spread unrelated to membership
		}
		for _, v := range members {
			p[v*c+1] += 1e-4
			p[v*c+2] -= 1e-4
		}
		q := func(*graphs.Features) ([]float64, error) { return p, nil }
		return &methods.Outcome{QueryOn: func(*graphs.Graph) (methods.QueryFunc, *methods.QueryCost, error) { return q, nil, nil }}, nil
	}
	cls := ClassifierConfig{Hidden: []int{100, 50}, Epochs: 20, LR: 0.01, Batch: 32}
	raw, err := MIA(g, trainer, MIAConfig{Seed: 1, Classifier: cls})
	if err != nil {
		t.Fatal(err)
	}
	std, err := MIA(g, trainer, MIAConfig{Seed: 1, Classifier: cls, Standardize: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AUC sorted %.3f (shadow %.3f), standardized %.3f (shadow %.3f)", raw.AUC, raw.ShadowAUC, std.AUC, std.ShadowAUC)
	if std.AUC < 0.95 {
		t.Errorf("standardized attack AUC %.3f, want ≥ 0.95 on a perfect membership signal", std.AUC)
	}
}

// TestEpsilonBound: well-separated scores certify a positive ε; scores from
// one distribution certify nothing much.
func TestEpsilonBound(t *testing.T) {
	var a, b, c []float64
	for i := range 400 {
		a = append(a, float64(i))
		b = append(b, float64(i)+1000)
		c = append(c, float64((i*7919)%400))
	}
	sep, err := EpsilonBound(b, a, 1e-5, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	same, err := EpsilonBound(a, c, 1e-5, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sep.EpsilonLB < 3 || same.EpsilonLB > 0.5 {
		t.Fatalf("ε_lb %v for separated scores, %v for identical ones", sep.EpsilonLB, same.EpsilonLB)
	}
	if _, err := EpsilonBound(a[:10], c, 1e-5, 0.95, 1); err == nil {
		t.Fatal("a bound from 10 member scores")
	}
}
