package asgl

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
)

// TestTrainingPathRefusesMisgroupedExample: a discriminator's DP-SGD is
// built over generated examples (dpnn.Private): a step whose fill tags
// every root's pairs with that root trains and is recorded by the
// construction, exactly once, as the plan's HypergeomGaussian step under
// the player's name. Tagging every pair of the batch with the first root
// (the one-line mistake, Sample: 0) gives that example more rows than a
// root's walks can make and is refused before the step runs, naming the
// example, and records nothing; a tag outside the chunk is refused too.
// The old path (dpnn.BuildSGD's Step, groups set by SetPairs) trained on
// both. What the framework cannot see is a pair tagged with another root
// of the chunk within the row budget (two roots' pairs swapped): which
// pairs are a root's is the method's claim (privatePlayer's doc comment).
func TestTrainingPathRefusesMisgroupedExample(t *testing.T) {
	g, cfg, m, p := calibratedTiny(t)
	perRoot := 2 * cfg.Paths // a discriminator root: N real pairs and N fakes
	for _, tc := range []struct {
		name string
		tag  func(k int) int
		want string // "" trains
	}{
		{"each root's pairs tagged with it", func(k int) int { return k }, ""},
		{"every pair tagged with the first root", func(int) int { return 0 }, "more than its declared"},
		{"a tag outside the chunk", func(k int) int { return k + cfg.DiscBatch }, "sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := dp.NewLedger()
			pl, err := m.newPlayer(1, ledgerDisc, layers.Discriminator, g.N, cfg.DiscBatch, cfg.DiscBatch, perRoot, &p.disc, nil, p.Plan, ledger, dp.NewSource(2))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = pl.sgd.StepExamples(func(b *dpnn.Batch) error {
				var pairs []layers.GANPair
				for k, root := range b.Examples {
					for j := range perRoot {
						pairs = append(pairs, layers.GANPair{U: root, V: (root + 1 + j) % g.N, Sign: 1, Target: float64(j % 2), Weight: 1, Sample: tc.tag(k)})
					}
				}
				return pl.p.SetPairs(pairs, b.Tags, len(b.Examples))
			})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				step, _ := p.disc.Step()
				if e := ledger.Entries(); len(e) != 1 || e[0].Name != ledgerDisc || e[0].Event.String() != step.String() {
					t.Fatalf("ledger after one step: %v, want one %s step %v", e, ledgerDisc, step)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if e := ledger.Entries(); len(e) != 0 {
				t.Fatalf("a refused step recorded %v", e)
			}
		})
	}
}

// TestPlayerRecorderRefusedBeforeSteps: a private player built under a
// plan that does not declare its name, or declares its steps at another
// noise, and a noiseless player recording an event its plan does not
// declare, are refused when built — before any step is drawn.
func TestPlayerRecorderRefusedBeforeSteps(t *testing.T) {
	g, cfg, m, p := calibratedTiny(t)
	half := p.disc
	half.Multiplier /= 2
	halfEv, err := half.Event()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		plan   *dp.Plan
		hg     *dp.HypergeomGaussian
		record dp.Event
		want   string
	}{
		{"disc undeclared", &dp.Plan{Releases: []dp.Planned{{Name: "other", Event: halfEv}}}, &p.disc, nil, "does not declare"},
		{"disc at half the noise", &dp.Plan{Releases: []dp.Planned{{Name: ledgerDisc, Event: halfEv}}}, &p.disc, nil, ledgerDisc},
		{"noiseless generator undeclared", p.Plan, nil, infiniteEvent(1), "does not declare"},
	} {
		ledger := dp.NewLedger()
		name := ledgerDisc
		if tc.hg == nil {
			name = ledgerGen + ".unplanned"
		}
		pl, err := m.newPlayer(1, name, layers.Discriminator, g.N, cfg.DiscBatch, cfg.DiscBatch, 2*cfg.Paths, tc.hg, tc.record, tc.plan, ledger, dp.NewSource(2))
		if err == nil || pl != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: player %v, err = %v, want %q", tc.name, pl, err, tc.want)
		}
		if n := len(ledger.Entries()); n != 0 {
			t.Errorf("%s: %d releases recorded", tc.name, n)
		}
	}
}

// TestPlanStepsAreLoopSteps: the training loop refuses, before its first
// step, a plan that declares another number of discriminator or generator
// steps than it takes (one epoch more than calibrated for), for the
// private players and for the paper's noiseless generators; nothing is
// recorded.
func TestPlanStepsAreLoopSteps(t *testing.T) {
	g, d := tinySigned(t, 40)
	for _, args := range [][]string{nil, {"--accounting", "paper"}} {
		m := New(tinyConfig(d))
		if args != nil {
			if err := methods.ParseConfigFlags(&m.cfg, args); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context(g, 4)
		p, err := m.calibrate(ctx, g.N)
		if err != nil {
			t.Fatal(err)
		}
		m.cfg.TrainEpochs++
		r, err := m.newRun(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.train(); err == nil || !strings.Contains(err.Error(), "the training loop takes") {
			t.Errorf("%v: err = %v", args, err)
		}
		if n := len(ctx.Ledger().Entries()); n != 0 {
			t.Errorf("%v: %d releases recorded", args, n)
		}
	}
}

// calibratedTiny is ASGL on a 40-node signed graph, calibrated at node
// level for ε = 4.
func calibratedTiny(t *testing.T) (*graphs.Graph, Config, *ASGL, *privacy) {
	t.Helper()
	g, d := tinySigned(t, 40)
	cfg := tinyConfig(d)
	m := New(cfg)
	p, err := m.calibrate(context(g, 4), g.N)
	if err != nil {
		t.Fatal(err)
	}
	return g, cfg, m, p
}
