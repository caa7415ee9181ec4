package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// TestWatchPathMatchesFullEvaluation: training a module while monitoring
// only the validation and training rows (the watch path) selects the same
// epoch, reports the same validation accuracy and ends with the same
// predictions, bit for bit, as evaluating every node after every epoch —
// with BatchNorm, dropout and input dropout in full-batch training, and
// with GroupNorm under DP-SGD.
func TestWatchPathMatchesFullEvaluation(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 300, Classes: 3, Features: 12, AvgDegree: 4, Homophily: 0.8, Signal: 0.6}, 3, "ratio:0.1:0.5", 2)
	for _, tc := range []struct {
		name    string
		norm    layers.NormKind
		private bool
	}{{"full-batch", layers.NormBatch, false}, {"dp-sgd", layers.NormGroup, true}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := ModuleTraining{Epochs: 15, LR: 0.02, Private: tc.private, Clip: 1, Multiplier: 1, Rate: 0.3, Ledger: "dpsgd"}
			tr.Plan = &dp.Plan{Releases: []dp.Planned{{Name: "dpsgd", Event: dp.PoissonGaussianEvent{Rate: 0.3, Multiplier: 1, Steps: tr.SGDSteps()}}}}
			build := func() *Module {
				var p *layers.MLP
				cfg := layers.MLPConfig{Dims: []int{12, 16, 3}, Activation: layers.SELU, Norm: tc.norm,
					Dropout: 0.3, InputDropout: 0.2, PlainLast: true}
				mod, err := BuildModule(7, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train),
					func(mm *nn.Model, in []*layers.Features, _ bool) (*G.Node, []*G.Node, error) {
						if p == nil {
							var err error
							if p, err = layers.NewMLP(mm, "mlp", cfg); err != nil {
								return nil, nil, err
							}
						}
						return in[0].MLP(p), nil, nil
					})
				if err != nil {
					t.Fatal(err)
				}
				return mod
			}
			ctx := &methods.Context{Graph: g, Level: methods.Edge, Seed: 7}
			if tc.private {
				ctx.Level = methods.Node
			}
			for _, traced := range []bool{false, true} {
				// A traced run keeps the training accuracy per epoch, so
				// its watch path covers the training nodes as well.
				var fullTrace, watchedTrace strings.Builder
				recorder := func(w *strings.Builder) trainers.Recorder {
					if traced {
						return trainers.NewTrace(w)
					}
					return trainers.Nop{}
				}
				full := build()
				task, err := full.Prepare(ctx, tr, dp.NewSource(9))
				if err != nil {
					t.Fatal(err)
				}
				want, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: tr.Epochs, Recorder: recorder(&fullTrace)})
				if err != nil {
					t.Fatal(err)
				}

				watched := build()
				watch, err := watched.watchPath(g.Split, g.N, traced)
				if err != nil || watch == nil {
					t.Fatalf("no watch path (err %v) for %d monitored of %d nodes", err, len(g.Split.Val)+len(g.Split.Train), g.N)
				}
				task, err = watched.prepare(ctx, tr, dp.NewSource(9), watch)
				if err != nil {
					t.Fatal(err)
				}
				got, err := trainers.FullBatch(task, g.Labels, g.Split, trainers.LoopConfig{Epochs: tr.Epochs, Recorder: recorder(&watchedTrace)})
				if err != nil {
					t.Fatal(err)
				}
				if got.BestEpoch != want.BestEpoch || got.ValAcc != want.ValAcc || !slices.Equal(got.Pred, want.Pred) {
					t.Fatalf("traced %v: watched: best epoch %d, val %.4f; full evaluation: %d, %.4f (predictions equal: %v)",
						traced, got.BestEpoch, got.ValAcc, want.BestEpoch, want.ValAcc, slices.Equal(got.Pred, want.Pred))
				}
				if fullTrace.String() != watchedTrace.String() || traced != strings.Contains(fullTrace.String(), "train_acc") {
					t.Fatalf("traced %v: the traces differ or lack the training accuracy:\n%.300s\n%.300s", traced, fullTrace.String(), watchedTrace.String())
				}
				// and the watch path really skips the other nodes
				p, err := watch.Predict()
				if err != nil {
					t.Fatal(err)
				}
				skipped := 0
				for _, v := range p {
					if v < 0 {
						skipped++
					}
				}
				want2 := g.N - len(g.Split.Val)
				if traced {
					want2 = len(g.Split.Test)
				}
				if skipped != want2 {
					t.Fatalf("traced %v: watch path evaluated %d nodes, want %d", traced, g.N-skipped, g.N-want2)
				}
			}
		})
	}
}

// TestModuleDPSGDRecorder: a noisy module records each step through the
// recorder of its plan's release — exactly SGDSteps() of them pass
// Plan.Check — and a module whose plan does not declare its ledger name,
// declares it at another rate or multiplier, or is missing, is refused by
// Prepare before it trains or draws (nothing recorded).
func TestModuleDPSGDRecorder(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.6}, 3, "ratio:0.3:0.3", 2)
	tr := ModuleTraining{Epochs: 2, LR: 0.02, Private: true, Clip: 1, Multiplier: 1.2, Rate: 0.25, Ledger: "dpsgd.classifier"}
	planOf := func(name string, q, z float64) *dp.Plan {
		return &dp.Plan{Releases: []dp.Planned{{Name: name, Event: dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: tr.SGDSteps()}}}}
	}
	for _, tc := range []struct {
		name string
		plan *dp.Plan
		want string // "" trains
	}{
		{"as planned", planOf("dpsgd.classifier", 0.25, 1.2), ""},
		{"undeclared name", planOf("dpsgd", 0.25, 1.2), "does not declare"},
		{"another multiplier", planOf("dpsgd.classifier", 0.25, 0.6), "multiplier=0.6"},
		{"another rate", planOf("dpsgd.classifier", 0.5, 1.2), "rate=0.5"},
		{"no plan", nil, "no privacy plan"},
	} {
		tr := tr
		tr.Plan = tc.plan
		mod, err := BuildModule(7, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train), MLPBody("mlp", layers.MLPConfig{Dims: []int{6, 8, 3}, Activation: layers.SELU, PlainLast: true}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Seed: 7}
		res, err := mod.Train(ctx, tr, dp.NewSource(9))
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
			}
			if n := len(ctx.Ledger().Entries()); n != 0 {
				t.Errorf("%s: %d steps recorded by a refused module", tc.name, n)
			}
			continue
		}
		if err != nil || len(res.Pred) != g.N {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := tc.plan.Check(ctx.Ledger()); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestPrivateSelectionNeedsPlannedRelease: a module trained with
// --selection private builds the selection's recorder from its plan and is
// refused before it trains when the plan declares no selection (or one at
// another ε); with the planned selection it records exactly one.
func TestPrivateSelectionNeedsPlannedRelease(t *testing.T) {
	g := graphstest.CSBM(t, gen.CSBMConfig{Nodes: 120, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.8, Signal: 0.6}, 3, "ratio:0.3:0.3", 2)
	tr := ModuleTraining{Epochs: 2, LR: 0.02, Private: true, Clip: 1, Multiplier: 1.2, Rate: 0.25, Ledger: "dpsgd"}
	sgd := dp.Planned{Name: "dpsgd", Event: dp.PoissonGaussianEvent{Rate: 0.25, Multiplier: 1.2, Steps: tr.SGDSteps()}}
	sel := func(eps float64) dp.Planned {
		return dp.Planned{Name: LedgerSelection, Event: dp.PureEvent{Epsilon: eps, Count: 1}}
	}
	for _, tc := range []struct {
		name string
		rel  []dp.Planned
		ok   bool
	}{
		{"planned", []dp.Planned{sgd, sel(0.5)}, true},
		{"no selection planned", []dp.Planned{sgd}, false},
		{"selection at another ε", []dp.Planned{sgd, sel(1)}, false},
	} {
		tr := tr
		tr.Plan = &dp.Plan{Releases: tc.rel}
		mod, err := BuildModule(7, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train), MLPBody("mlp", layers.MLPConfig{Dims: []int{6, 8, 3}, Activation: layers.SELU, PlainLast: true}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Seed: 7, Selection: trainers.SelectPrivate, SelectionEpsilon: 0.5}
		_, err = mod.Train(ctx, tr, dp.NewSource(9))
		if tc.ok {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if err := tr.Plan.Check(ctx.Ledger()); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "selection") || len(ctx.Ledger().Entries()) != 0 {
			t.Errorf("%s: err = %v, %d releases recorded", tc.name, err, len(ctx.Ledger().Entries()))
		}
	}
}
