package docstest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
)

// linkToy is a link-prediction method written as a user of the framework
// would (docs/extending.md names this file and runs it as `dpgnn train
// linktoy`, so it is registered in this package, whose tests run the
// guide's commands): two parameter groups — an edge-free node encoder trained without
// noise on features and labels (public at edge level), and a scorer of node
// pairs trained with DP-SGD, each training edge one sample (edge level) —
// its own task (held-out edges against random pairs, AUC), a privacy plan
// and a ledger. It proves that a method outside node classification fits.
type linkToy struct {
	GroupEpochs int `flag:"epochs" help:"epochs of each group"` // the method is its own Config
}

func (*linkToy) Name() string               { return "linktoy" }
func (*linkToy) Short() string              { return "toy link prediction (a test)" }
func (*linkToy) Levels() []methods.Level    { return []methods.Level{methods.None, methods.Edge} }
func (*linkToy) DefaultSplit(string) string { return "ratio:0.5:0.2" }
func (m *linkToy) Config() any              { return m }
func (m *linkToy) Validate() error          { return methods.CheckFields(m, methods.Epochs(&m.GroupEpochs)) }
func (m *linkToy) Epochs() int              { return 2 * m.GroupEpochs }
func (*linkToy) Task() mrun.Task            { return mrun.LinkPrediction{TestFraction: 0.1} }
func body(in, out int) layers.MLPConfig {
	return layers.MLPConfig{Dims: []int{in, 32, out}, Activation: layers.ReLU, PlainLast: true}
}
func (m *linkToy) train(e int) mrun.ModuleTraining {
	return mrun.ModuleTraining{Epochs: e, LR: 0.01}
}

func (m *linkToy) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	// Group 1, no noise: node embeddings from features and labels only.
	enc, err := mrun.BuildModule(ctx.Seed, []*graphs.Features{g.X}, []string{"X"}, m.train(m.GroupEpochs), len(g.Split.Train), mrun.MLPBody("enc", body(g.X.F, g.NumClasses)))
	if err != nil {
		return nil, err
	}
	if _, err := enc.Train(ctx, m.train(m.GroupEpochs), nil); err != nil {
		return nil, err
	}
	// Group 2, DP-SGD: one row h_u ⊙ h_v per pair, each training edge a sample.
	pairs := mrun.NewLinkPairs(g, ctx.Seed)
	tr := m.train(m.GroupEpochs)
	q := mrun.NodeRate(64, pairs.Train)
	steps := dpnn.Steps(tr.Epochs, q)
	cal, err := mrun.Calibrate(ctx, mrun.EdgeUnits(g.N, true, nil), "rdp",
		func(z float64) []dp.Planned { return []dp.Planned{mrun.SGDRelease(q, steps, 1, z)} },
		func(z float64) map[string]float64 { return mrun.SGDNoise(q, steps, 1, z) })
	if err != nil {
		return nil, err
	}
	tr.Private, tr.Multiplier, tr.Clip, tr.Rate, tr.Ledger = ctx.Private(), cal.Multiplier, 1, q, "dpsgd"
	tr.Plan = cal.Plan // the steps' recorder is built from the plan's "dpsgd" release
	tr.Samples, tr.Targets = pairs.Samples()
	x := pairs.Hadamard(nn.Values(enc.Outputs[0]), g.NumClasses)
	scorer, err := mrun.BuildModule(ctx.Seed+1, []*graphs.Features{x}, []string{"pair"}, tr, pairs.Train, mrun.MLPBody("score", body(x.F, 2)))
	if err != nil {
		return nil, err
	}
	noise, err := ctx.NoiseSource("linktoy")
	if err != nil {
		return nil, err
	}
	if _, err := scorer.Train(ctx, tr, noise); err != nil {
		return nil, err
	}
	logits, score := nn.Values(scorer.Logits), make([]float64, x.N)
	for k := range score {
		score[k] = logits[2*k+1] - logits[2*k]
	}
	rep, err := mrun.Report(ctx, cal.Plan)
	if err != nil {
		return nil, err
	}
	return &methods.Outcome{Extra: map[string]float64{"test_auc": pairs.TestAUC(score)}, Privacy: rep}, nil
}

func init() { methods.Register(func() methods.Method { return &linkToy{GroupEpochs: 30} }) }

// TestLinkToyTrainsThroughTheCLI: the toy link-prediction method registers,
// trains through `dpgnn train` at edge level and without privacy, reports
// an AUC well above chance and, when private, a privacy report built from
// its plan and ledger.
func TestLinkToyTrainsThroughTheCLI(t *testing.T) {
	for _, args := range [][]string{{"--privacy", "none"}, {"--privacy", "edge", "--epsilon", "8", "--delta", "1e-5"}} {
		out, _, err := runCLIStreams(t, append([]string{"train", "linktoy", "--epochs", "20", "--runs", "2", "--json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Metrics map[string]struct {
				Mean float64 `json:"mean"`
			} `json:"metrics"`
			Report *struct {
				Epsilon float64 `json:"epsilon"`
				Uses    []struct {
					Kind string `json:"kind"`
				} `json:"uses"`
			} `json:"privacy_report"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		auc := r.Metrics["test_auc"].Mean
		t.Logf("%v: test AUC %.3f", args, auc)
		if !(auc > 0.58) {
			t.Errorf("%v: test AUC %.3f, want well above 0.5", args, auc)
		}
		if args[1] == "edge" && (r.Report == nil || r.Report.Epsilon > 8 || fmt.Sprint(r.Report.Uses) == "[]") {
			t.Errorf("edge level: privacy report %+v", r.Report)
		}
	}
}
