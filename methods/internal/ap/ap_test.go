package ap

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods/run"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/methods"
)

func apWithUnit(t *testing.T, unit string) *Config {
	t.Helper()
	a := DefaultConfig()
	a.Hops, a.TrainEpochs = 2, 10
	if err := methods.ParseConfigFlags(&a, []string{"--edge-unit", unit}); err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	return &a
}

// TestEdgeUnit: with undirected units one edge {i,j} changes two rows, so a
// NAP call has sensitivity √2 (std z·√2 for the same multiplier z) and δ auto
// counts undirected edges; with directed units (the papers' convention) the
// report states the ε an undirected edge actually gets, which exceeds the
// budget.
func TestEdgeUnit(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 200, Classes: 2, Features: 4, AvgDegree: 6, Homophily: 0.8, Signal: 1}, 3)
	ctx := &methods.Context{Graph: g, Level: methods.Edge, Epsilon: 1, Delta: 1e-5, Seed: 1}
	events := func(k int) func(z float64) []dp.Event {
		return func(z float64) []dp.Event { return []dp.Event{dp.GaussianEvent{Multiplier: z, Count: k}} }
	}
	releases := func(k int) func(z float64) []dp.Planned {
		return func(z float64) []dp.Planned { return []dp.Planned{{What: "NAP", Event: events(k)(z)[0]}} }
	}
	plan := func(unit string) (*APSetup, *run.Calibrated) {
		a := apWithUnit(t, unit)
		s, err := a.SetupAP(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Plan(ctx, s, releases(a.Hops), nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		return s, c
	}
	sd, cd := plan(run.EdgeDirected)
	su, cu := plan(run.EdgeUndirected)

	n := float64(g.N)
	if sd.Sensitivity != 1 || sd.Units.Possible != n*(n-1) || sd.Units.Unit != "directed edge" {
		t.Errorf("directed: sensitivity %g, units %+v; want 1, %g possible directed edges", sd.Sensitivity, sd.Units, n*(n-1))
	}
	if su.Sensitivity != math.Sqrt2 || su.Units.Possible != n*(n-1)/2 || su.Units.Unit != "undirected edge" {
		t.Errorf("undirected: sensitivity %g, units %+v; want √2, %g possible pairs", su.Sensitivity, su.Units, n*(n-1)/2)
	}
	// The papers' δ convention counts the (private) edges.
	for _, tc := range []struct {
		s    *APSetup
		want int
	}{{sd, g.Adj.NNZ()}, {su, g.Adj.NNZ() / 2}} {
		d, src, err := tc.s.Units.Paper()
		if want, _ := dp.DeltaAuto(tc.want); err != nil || d != want || !strings.Contains(src, "private") {
			t.Errorf("paper δ = %g (%q, %v), want %g from %d edges, named private", d, src, err, want, tc.want)
		}
	}
	if math.Abs(cu.Multiplier-cd.Multiplier) > 1e-12*cd.Multiplier {
		t.Errorf("multipliers differ for the same ε, δ, K: %g vs %g", cu.Multiplier, cd.Multiplier)
	}
	if got, want := cu.Plan.Noise["nap_std"], math.Sqrt2*cd.Plan.Noise["nap_std"]; math.Abs(got-want) > 1e-9*want {
		t.Errorf("undirected NAP std %g, want √2 × %g", got, cd.Plan.Noise["nap_std"])
	}
	epsU, err := dp.EpsilonOf("gdp", events(2)(cd.Multiplier/math.Sqrt2), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !(epsU > 1.2) {
		t.Errorf("ε of an undirected edge under directed calibration = %g, want well above the budget 1", epsU)
	}
	if n := strings.Join(cd.Plan.Notes, ". "); !strings.Contains(n, "directed edge") || !strings.Contains(n, fmt.Sprintf("ε = %.6g", epsU)) {
		t.Errorf("directed report notes %q do not state the undirected ε %.6g", n, epsU)
	}
	if n := strings.Join(cu.Plan.Notes, ". "); !strings.Contains(n, "undirected edge") {
		t.Errorf("undirected report notes %q do not name the unit", n)
	}

	node := *ctx
	node.Level = methods.Node
	if _, err := apWithUnit(t, run.EdgeUndirected).SetupAP(&node); err == nil || !strings.Contains(err.Error(), "--edge-unit") {
		t.Errorf("node level with --edge-unit undirected: err = %v, want a refusal naming the flag", err)
	}
	a := DefaultConfig()
	a.Hops, a.TrainEpochs = 2, 10
	_ = methods.ParseConfigFlags(&a, []string{"--edge-unit", "both"})
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), `EdgeUnit (--edge-unit) must be directed or undirected, got "both"`) {
		t.Errorf("--edge-unit both: err = %v", err)
	}
}

// TestDropoutFor: -1 resolves by level (0.7 between layers and 0.5 on the
// raw features without noise, 0 under DP-SGD), given values pass through,
// and values outside [0, 1) other than -1 are refused.
func TestDropoutFor(t *testing.T) {
	m := DefaultModules()
	m.Dropout, m.InDropout = AutoDropout, AutoDropout
	for _, c := range []struct {
		level          methods.Level
		between, input float64
	}{{methods.None, 0.7, 0.5}, {methods.Edge, 0.7, 0.5}, {methods.Node, 0, 0}} {
		if b, in := m.DropoutFor(c.level); b != c.between || in != c.input {
			t.Errorf("auto at %v: %g, %g; want %g, %g", c.level, b, in, c.between, c.input)
		}
	}
	m.Dropout, m.InDropout = 0.3, 0.1
	if b, in := m.DropoutFor(methods.Node); b != 0.3 || in != 0.1 {
		t.Errorf("given 0.3, 0.1 at node level: %g, %g", b, in)
	}
	for _, bad := range []string{"--dropout 1", "--dropout -0.5", "--input-dropout -2"} {
		c := DefaultConfig()
		err := methods.ParseConfigFlags(&c, strings.Fields(bad))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), "-1: automatic") {
			t.Errorf("%s: error %v, want a refusal naming -1: automatic", bad, err)
		}
	}
}

// TestPublicBoundRefusal: at node level with --degree-bound public, SetupAP
// refuses an input above D with a text that is the same for every such
// input — spread graphs whose largest out-degree is 30 or 90, with 30 or
// 90 nodes above the bound — and names neither statistic: no "raise it"
// towards a value read off the data, a *degree.BoundError inside.
func TestPublicBoundRefusal(t *testing.T) {
	a := apFor(t, "--max-degree", "10")
	var first string
	for _, nu := range []int{30, 90} {
		g := splitAll(t, gen.SpreadGraph(nu, 12, 1))
		g.Name = "spread"
		cnt, mx := degree.Excess(g.Adj, 10)
		if cnt == 0 {
			t.Fatalf("spread(%d): no node above the bound", nu)
		}
		_, err := a.SetupAP(&methods.Context{Graph: g, Dataset: g.Name, Level: methods.Node, Epsilon: 8, Delta: 1e-5, Seed: 1})
		var be *degree.BoundError
		if !errors.As(err, &be) {
			t.Fatalf("spread(%d): err = %v, want a *degree.BoundError", nu, err)
		}
		msg := err.Error()
		for _, private := range []string{fmt.Sprint(mx), fmt.Sprintf("%d node", cnt), "largest", "raise it"} {
			if strings.Contains(msg, private) {
				t.Errorf("spread(%d): refusal %q contains %q", nu, msg, private)
			}
		}
		if !strings.Contains(msg, "--max-degree 10") || !strings.Contains(msg, "without looking at the data") {
			t.Errorf("spread(%d): refusal %q does not name the bound and the advice", nu, msg)
		}
		if first == "" {
			first = msg
		} else if msg != first {
			t.Errorf("refusals differ with the input: %q vs %q", first, msg)
		}
		if _, err := a.QueryAdj(methods.Node, g, nil); !errors.As(err, &be) {
			t.Errorf("spread(%d): query refusal %v, want a *degree.BoundError", nu, err)
		}
	}
}
