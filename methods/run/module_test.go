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
			tr := ModuleTraining{Epochs: 15, LR: 0.02, Private: tc.private, Clip: 1, Multiplier: 1, Rate: 0.3}
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
