package gap

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"

	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
)

func newGAP(t *testing.T, args ...string) *GAP {
	t.Helper()
	m := New(DefaultConfig())
	methodtest.Configure(t, m, args...)
	return m
}

// TestGAPRunsAtEveryLevelWithinBudget trains GAP briefly at each level on
// a small graph: the privacy report's ε stays within the budget, the noise
// is there, and the method learns something (well above the 1/3 chance of
// three classes).
func TestGAPRunsAtEveryLevelWithinBudget(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 300, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.9, Signal: 1.5}, 5, "ratio:0.5:0.25", 1)
	for _, tc := range []struct {
		level methods.Level
		eps   float64
		min   float64
	}{{methods.Edge, 8, 0.6}, {methods.Node, 8, 0.4}} {
		t.Run(string(tc.level), func(t *testing.T) {
			m := newGAP(t, "--hops", "2", "--epochs", "20", "--encoder-epochs", "20", "--batch-size", "32", "--max-degree", "16")
			out, err := m.Run(&methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Delta: 1e-5, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			p := out.Privacy
			if p == nil || p.Epsilon == nil || *p.Epsilon > tc.eps || p.Noise["multiplier"] <= 0 {
				t.Fatalf("privacy report %+v", p)
			}
			ok := 0
			for _, i := range g.Split.Test {
				if out.Pred[i] == g.Labels[i] {
					ok++
				}
			}
			if acc := float64(ok) / float64(len(g.Split.Test)); acc < tc.min {
				t.Fatalf("test accuracy %.3f, want ≥ %.2f", acc, tc.min)
			}
		})
	}
}

// TestCrossFitRowsAreOutOfFold: model f trains on every training node but
// fold f; a training node's row comes from the one model that never saw it,
// every other row is the mean over the k models.
func TestCrossFitRowsAreOutOfFold(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 4, Features: 4, AvgDegree: 4, Homophily: 0.9, Signal: 1}, 2, "ratio:0.5:0.25", 1)
	const k = 4
	seen := make([]map[int]bool, k)
	// Model f puts all its mass on class f.
	x0, err := crossFit(&methods.Context{Graph: g, Seed: 9}, k, func(f int, cf *methods.Context) ([]float64, error) {
		seen[f] = map[int]bool{}
		for _, v := range cf.Graph.Split.Train {
			seen[f][v] = true
		}
		z := make([]float64, g.N*g.NumClasses)
		for v := 0; v < g.N; v++ {
			z[v*g.NumClasses+f] = 60
		}
		return z, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Split.Train) != 60 {
		t.Fatalf("split changed under crossFit: %d training nodes", len(g.Split.Train))
	}
	train := map[int]bool{}
	for _, v := range g.Split.Train {
		train[v] = true
		from := -1
		for c := 0; c < k; c++ {
			if x0.Dense[v*k+c] > 0.999 {
				from = c
			}
		}
		if from < 0 || seen[from][v] {
			t.Fatalf("training node %d: row %v from model %d, which trained on it", v, x0.Dense[v*k:(v+1)*k], from)
		}
		for f := 0; f < k; f++ {
			if f != from && !seen[f][v] {
				t.Fatalf("training node %d held out of models %d and %d", v, from, f)
			}
		}
	}
	for v := 0; v < g.N; v++ {
		if train[v] {
			continue
		}
		for c := 0; c < k; c++ {
			if math.Abs(x0.Dense[v*k+c]-0.25) > 1e-9 {
				t.Fatalf("node %d: row %v, want the mean of the 4 models", v, x0.Dense[v*k:(v+1)*k])
			}
		}
	}
}

// TestGAPCrossFitEncoderRuns: the cross-fitted encoder gives probability
// rows of width C and GAP trains on them.
func TestGAPCrossFitEncoderRuns(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 200, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.9, Signal: 2}, 5, "ratio:0.5:0.25", 1)
	ctx := &methods.Context{Graph: g, Level: methods.Edge, Epsilon: 8, Seed: 4}
	m := newGAP(t, "--encoder-folds", "3", "--encoder-epochs", "20", "--epochs", "20")
	setup, err := m.cfg.SetupAP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x0, width, err := m.encodeCrossFit(ctx, setup, 0, dp.NewSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if width != g.NumClasses || x0.F != g.NumClasses {
		t.Fatalf("X0 width %d, want %d classes", width, g.NumClasses)
	}
	for v := 0; v < g.N; v++ {
		s := 0.0
		for _, p := range x0.Dense[v*width : (v+1)*width] {
			s += p
		}
		if math.Abs(s-1) > 1e-9 {
			t.Fatalf("row %d sums to %v, not a probability vector", v, s)
		}
	}
	out, err := m.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Privacy; p == nil || p.Epsilon == nil || *p.Epsilon > 8 {
		t.Fatalf("privacy report %+v", out.Privacy)
	}
	ok := 0
	for _, i := range g.Split.Test {
		if out.Pred[i] == g.Labels[i] {
			ok++
		}
	}
	if acc := float64(ok) / float64(len(g.Split.Test)); acc < 0.6 {
		t.Fatalf("test accuracy %.3f with a cross-fitted encoder", acc)
	}
}

// TestGAPCrossFitOnlyWithoutNodePrivacy: each fold's DP-SGD run would need
// its own accounting, so node level refuses --encoder-folds; so do k = 1 and
// a run without an encoder.
func TestGAPCrossFitOnlyWithoutNodePrivacy(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 100, Classes: 2, Features: 4, AvgDegree: 4, Homophily: 0.9, Signal: 1}, 1, "ratio:0.5:0.25", 1)
	m := newGAP(t, "--encoder-folds", "3", "--epochs", "2", "--encoder-epochs", "2")
	if _, err := m.Run(&methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Seed: 1}); err == nil || !strings.Contains(err.Error(), "encoder-folds") {
		t.Fatalf("node level with --encoder-folds: err = %v", err)
	}
	for _, args := range [][]string{{"--encoder-folds", "1"}, {"--encoder-folds", "3", "--encoder-layers", "0"}} {
		m := New(DefaultConfig())
		if err := methods.ParseConfigFlags(m.Config(), args); err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "EncoderFolds (--encoder-folds) ") {
			t.Errorf("%v: err = %v, want an error naming EncoderFolds (--encoder-folds)", args, err)
		}
	}
}

// TestNodeQueriesNotCovered: a query shows every node's posterior, the
// removed node's own included, and that posterior reads the node's own
// aggregation row (a change up to its in-degree, beyond the √D the NAP
// noise is calibrated for), so node-level queries are recorded but not
// covered (ε = ∞), while edge-level ones are charged and finite.
func TestNodeQueriesNotCovered(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 3, Features: 8, AvgDegree: 4, Homophily: 0.9, Signal: 1.5}, 5, "ratio:0.5:0.25", 1)
	for _, tc := range []struct {
		level   methods.Level
		covered bool
	}{{methods.Edge, true}, {methods.Node, false}} {
		m := newGAP(t, "--hops", "1", "--epochs", "2", "--encoder-epochs", "2", "--batch-size", "16", "--max-degree", "16")
		out, err := m.Run(&methods.Context{Graph: g, Level: tc.level, Epsilon: 8, Delta: 1e-5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		q, cost, err := out.QueryOn(g)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q(g.X); err != nil {
			t.Fatal(err)
		}
		total, alone, err := cost.Epsilon()
		if err != nil {
			t.Fatalf("%s: %v", tc.level, err)
		}
		if got := !math.IsInf(total, 1) && !math.IsInf(alone, 1); got != tc.covered || (tc.covered && !(alone > 0)) {
			t.Errorf("%s: one query costs ε %g alone, %g in all; want covered = %v (uncovered: %q)", tc.level, alone, total, tc.covered, cost.Uncovered)
		}
	}
}

// TestLevelDefaults: an automatic --encoder-layers is 0 without privacy
// (--privacy none or ε = ∞) and 2 in a private run or with
// --encoder-folds, an explicit value wins, and a run with the automatic
// value is bit for bit (predictions and reported ε) the run with the
// resolved value given explicitly — at the private levels the old default,
// two encoder layers, so their plans are unchanged.
func TestLevelDefaults(t *testing.T) {
	for _, tc := range []struct {
		private bool
		args    []string
		want    int
	}{
		{false, nil, 0},
		{true, nil, 2},
		{false, []string{"--encoder-folds", "3"}, 2},
		{false, []string{"--encoder-layers", "1"}, 1},
		{true, []string{"--encoder-layers", "0"}, 0},
	} {
		if got := newGAP(t, tc.args...).at(tc.private).cfg.EncoderLayers; got != tc.want {
			t.Errorf("private %v %v: %d encoder layers, want %d", tc.private, tc.args, got, tc.want)
		}
	}
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 200, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.9, Signal: 1.5}, 5, "ratio:0.5:0.25", 1)
	short := []string{"--epochs", "3", "--encoder-epochs", "3", "--batch-size", "32", "--max-degree", "16"}
	for _, tc := range []struct {
		level    methods.Level
		eps      float64
		explicit string
	}{{methods.None, math.Inf(1), "0"}, {methods.Edge, math.Inf(1), "0"}, {methods.Edge, 4, "2"}, {methods.Node, 4, "2"}} {
		var preds [2][]int
		var eps [2]float64
		for i, args := range [][]string{short, append(slices.Clone(short), "--encoder-layers", tc.explicit)} {
			out, err := newGAP(t, args...).Run(&methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Delta: 1e-5, Seed: 3})
			if err != nil {
				t.Fatalf("%s ε=%g %v: %v", tc.level, tc.eps, args, err)
			}
			preds[i] = out.Pred
			if out.Privacy != nil && out.Privacy.Epsilon != nil {
				eps[i] = *out.Privacy.Epsilon
			}
		}
		if !slices.Equal(preds[0], preds[1]) || eps[0] != eps[1] {
			t.Errorf("%s ε=%g: automatic (ε %v) ran differently from --encoder-layers %s (ε %v)", tc.level, tc.eps, eps[0], tc.explicit, eps[1])
		}
	}
	for _, args := range [][]string{{"--encoder-layers", "-2"}, {"--encoder-layers", "0", "--encoder-folds", "3"}} {
		m := New(DefaultConfig())
		if err := methods.ParseConfigFlags(m.Config(), args); err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
