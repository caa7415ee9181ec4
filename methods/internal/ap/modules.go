package ap

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// The encoder and classification modules of GAP (Sajadmanesh et al. 2023,
// §4), which CARIBOU reuses around its own aggregation: an encoder trained
// on features and labels only, whose row-normalised embedding is the
// aggregation's input, and a classifier over several cached embeddings.

// Modules holds the hyperparameters of the encoder and classification
// modules (widths, depths, optimiser, dropout, norm) and of their DP-SGD
// training at node level, which every method built from GAP's modules
// shares.
type Modules struct {
	Hidden      int     `flag:"hidden" help:"hidden width"`
	BaseLayers  int     `flag:"base-layers" help:"layers of each base MLP (GAP: one per hop; ProGAP: one per input of a stage)"`
	HeadLayers  int     `flag:"head-layers" help:"layers of the head MLP over the concatenated hops"`
	TrainEpochs int     `flag:"epochs" help:"training epochs of each module / stage"`
	LR          float64 `flag:"lr" help:"Adam learning rate"`
	Dropout     float64 `flag:"dropout" help:"dropout probability (between layers, as in GAP's code); -1: automatic, 0.7 where the modules train\nwithout noise (edge level, non-private) and 0 under DP-SGD (node level)"`
	InDropout   float64 `flag:"input-dropout" help:"dropout probability on the raw node features entering the first MLP (not in the papers' code; no privacy effect);\n-1: automatic, 0.5 without noise and 0 under DP-SGD"`
	BatchSize   int     `flag:"batch-size" help:"node level: expected Poisson batch size B (q = B/N_train)"`
	Clip        float64 `flag:"clip" help:"node level: per-sample gradient clipping bound C"`
	Norm        string  `flag:"norm" help:"norm layer: auto (batchnorm at edge level and without privacy, the methods' default at node level), none, batchnorm or groupnorm"`
	WeightDecay float64 `flag:"weight-decay" help:"Adam L2 weight decay"`
}

// DefaultModules is the GAP paper's setting: width 16, one-layer base and
// head MLPs, 100 epochs at learning rate 0.01, no dropout or weight decay,
// the level's norm, and DP-SGD batches of 256 clipped at 1. Methods start
// from it and set what their own validation selected.
func DefaultModules() Modules {
	return Modules{Hidden: 16, BaseLayers: 1, HeadLayers: 1, TrainEpochs: 100, LR: 0.01, BatchSize: 256, Clip: 1, Norm: "auto"}
}

// AutoDropout is the value of --dropout and --input-dropout that
// DropoutFor resolves by level.
const AutoDropout = -1

// Validate checks the module hyperparameters.
func (a *Modules) Validate() error {
	prob := func(p *float64) methods.FieldCheck {
		return methods.Require(p, *p == AutoDropout || (*p >= 0 && *p < 1), "must be in [0, 1) (or -1: automatic), got %v", *p)
	}
	return methods.CheckFields(a, methods.Width(&a.Hidden),
		methods.Depth(&a.BaseLayers), methods.Depth(&a.HeadLayers), methods.Epochs(&a.TrainEpochs),
		methods.PositiveF(&a.LR), prob(&a.Dropout), prob(&a.InDropout),
		methods.Positive(&a.BatchSize), methods.PositiveF(&a.Clip))
}

// DropoutFor resolves --dropout and --input-dropout for a level: a value
// in [0, 1) is used as given; automatic (-1) is 0.7 between layers and 0.5
// on the raw features where the modules train without noise (edge level
// and non-private: full-batch Adam on public features and labels), and 0
// for both under DP-SGD (node level). On cora, 70 / 10 / 20, dropout
// lifted validation accuracy at edge level by 2–3 points and cost 15–20
// under DP-SGD (docs/results.md, "Defaults").
func (a *Modules) DropoutFor(level methods.Level) (between, input float64) {
	between, input = a.Dropout, a.InDropout
	if between == AutoDropout {
		between = 0.7
		if level == methods.Node {
			between = 0
		}
	}
	if input == AutoDropout {
		input = 0.5
		if level == methods.Node {
			input = 0
		}
	}
	return between, input
}

// NormFor resolves --norm for a level: auto is BatchNorm at edge level and
// without privacy (the modules train on public features and labels) and
// nodeAuto at node level, where DP-SGD forbids layers that mix samples;
// an explicit batchnorm is refused at node level.
func (a *Modules) NormFor(level methods.Level, nodeAuto layers.NormKind) (layers.NormKind, error) {
	if a.Norm == "auto" || a.Norm == "" {
		if level == methods.Node {
			return nodeAuto, nil
		}
		return layers.NormBatch, nil
	}
	k, err := layers.ParseNorm(a.Norm)
	if err != nil {
		return k, err
	}
	if level == methods.Node && k == layers.NormBatch {
		return k, fmt.Errorf("--norm batchnorm mixes samples and cannot be trained with DP-SGD; use groupnorm or none")
	}
	return k, nil
}

// Prepare is the set-up every method built from these modules shares
// (GAP, CARIBOU), written once: the method's privacy set-up on ctx's graph
// (which adjacency its aggregation reads, the degree bound, the
// sensitivity), its calibration on that set-up, and the norm layer for the
// level (NormFor, none at node level unless --norm says).
func Prepare[S any](ctx *methods.Context, a *Modules, setup func(*methods.Context) (S, error), calibrate func(*methods.Context, S) (*run.Calibrated, error)) (S, *run.Calibrated, layers.NormKind, error) {
	var none S
	s, err := setup(ctx)
	if err != nil {
		return none, nil, 0, err
	}
	c, err := calibrate(ctx, s)
	if err != nil {
		return none, nil, 0, err
	}
	norm, err := a.NormFor(ctx.Level, layers.NormNone)
	return s, c, norm, err
}

// Ledger names of the encoder's and the classifier's DP-SGD releases.
const (
	LedgerEncoder    = "dpsgd.encoder"
	LedgerClassifier = "dpsgd.classifier"
)

// Training is how a module of an aggregation-perturbation method trains:
// full batch at edge level and without privacy, DP-SGD (Poisson rate,
// clip, multiplier z) at node level; ledger names its DP-SGD release in
// plan, the run's plan (nil only where nothing is trained: step counts).
func (a *Modules) Training(ctx *methods.Context, plan *dp.Plan, rate, z float64, epochs int, ledger string) run.ModuleTraining {
	return run.ModuleTraining{Epochs: epochs, LR: a.LR, WeightDecay: a.WeightDecay, Private: ctx.Level == methods.Node,
		Multiplier: z, Clip: a.Clip, Rate: rate, Ledger: ledger, Plan: plan}
}

// ModuleSteps is the number of DP-SGD steps of the encoder (0 without one)
// and of the classifier at node level (0, 0 at other levels).
func (a *Modules) ModuleSteps(ctx *methods.Context, rate float64, encoder bool, encoderEpochs int) (tEnc, tCls int) {
	if ctx.Level != methods.Node {
		return 0, 0
	}
	if encoder {
		tEnc = a.Training(ctx, nil, rate, 0, encoderEpochs, LedgerEncoder).SGDSteps()
	}
	return tEnc, a.Training(ctx, nil, rate, 0, a.TrainEpochs, LedgerClassifier).SGDSteps()
}

// ModuleReleases are the planned DP-SGD releases of the classifier and
// (with tEnc > 0) the encoder at node level, at multiplier z; nothing at
// other levels. ModuleNoise adds their noise entries to a plan's record.
func (a *Modules) ModuleReleases(ctx *methods.Context, rate, z float64, tEnc, tCls int) []dp.Planned {
	if ctx.Level != methods.Node {
		return nil
	}
	rel := []dp.Planned{{Name: LedgerClassifier, What: fmt.Sprintf("classifier DP-SGD: %d Poisson steps at rate %.4g, clip %g", tCls, rate, a.Clip),
		Event: dp.PoissonGaussianEvent{Rate: rate, Multiplier: z, Steps: tCls}}}
	if tEnc > 0 {
		rel = append(rel, dp.Planned{Name: LedgerEncoder, What: fmt.Sprintf("encoder DP-SGD: %d Poisson steps at rate %.4g, clip %g", tEnc, rate, a.Clip),
			Event: dp.PoissonGaussianEvent{Rate: rate, Multiplier: z, Steps: tEnc}})
	}
	return rel
}

// ModuleNoise records the DP-SGD noise of ModuleReleases.
func (a *Modules) ModuleNoise(rec map[string]float64, rate, z float64, tEnc, tCls int) {
	rec["sgd_std"], rec["rate"], rec["encoder_steps"], rec["classifier_steps"] = z*a.Clip, rate, float64(tEnc), float64(tCls)
}

// Widths returns the layer widths in, hidden×(layers−1), out (out defaults
// to hidden).
func Widths(in, hidden, layers int, out ...int) []int {
	d := []int{in}
	for i := 1; i < layers; i++ {
		d = append(d, hidden)
	}
	if len(out) > 0 {
		return append(d, out[0])
	}
	return append(d, hidden)
}

// TrainEncoder builds and trains GAP's encoder module (parameters named
// prefix.encoder…) on ctx's training nodes: an MLP of encoderLayers layers
// → row normalisation (the embedding, Outputs[0]) → norm → dropout → SELU
// → Linear head. It reads no edge.
func (a *Modules) TrainEncoder(ctx *methods.Context, tr run.ModuleTraining, encoderLayers int, norm layers.NormKind, src *dp.Source, seed uint64, prefix string) (*run.Module, error) {
	g := ctx.Graph
	dropout, inDropout := a.DropoutFor(ctx.Level)
	var enc *layers.MLP
	var bn *layers.Norm
	var head *layers.Linear
	mod, err := run.BuildModule(seed, []*graphs.Features{g.X}, []string{"X"}, tr, len(g.Split.Train),
		func(mm *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error) {
			if enc == nil {
				var err error
				enc, err = layers.NewMLP(mm, prefix+".encoder", layers.MLPConfig{Dims: Widths(g.X.F, a.Hidden, encoderLayers),
					Activation: layers.SELU, Norm: norm, Dropout: dropout, InputDropout: inDropout, PlainLast: true, NormFirst: true})
				if err != nil {
					return nil, nil, err
				}
				bn = layers.NewNorm(mm, prefix+".encoder.head.norm", norm, a.Hidden)
				head = layers.NewLinear(mm, prefix+".encoder.head", a.Hidden, g.NumClasses, true, layers.InitPyG)
			}
			x := G.Must(nn.RowNormalize(in[0].MLP(enc)))
			h := mm.Dropout(bn.Forward(x), dropout)
			return head.Forward(nn.SELU(h)), []*G.Node{x}, nil
		})
	if err != nil {
		return nil, err
	}
	if _, err := mod.Train(ctx, tr, src); err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	return mod, nil
}

// Classifier returns the builder of GAP's classification module over
// several inputs (parameters named prefix.base…, prefix.combine.norm,
// prefix.head): a base MLP per input, concatenation, row normalisation →
// norm → dropout → SELU → head MLP. rawHop0 applies --input-dropout to
// input 0 (the raw features). The parameters are created on the first call
// (the training path) and shared by the second (the evaluation path).
// Dropout is DropoutFor(level).
func (a *Modules) Classifier(level methods.Level, prefix string, classes int, norm layers.NormKind, rawHop0 bool) func(*nn.Model, []*layers.Features, bool) (*G.Node, []*G.Node, error) {
	dropout, inDropout := a.DropoutFor(level)
	var bases []*layers.MLP
	var bn *layers.Norm
	var head *layers.MLP
	return func(mm *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error) {
		if bases == nil {
			for k, x := range in {
				cfg := layers.MLPConfig{Dims: Widths(x.F, a.Hidden, a.BaseLayers),
					Activation: layers.SELU, Norm: norm, Dropout: dropout, PlainLast: true, NormFirst: true}
				if k == 0 && rawHop0 {
					cfg.InputDropout = inDropout
				}
				b, err := layers.NewMLP(mm, fmt.Sprintf("%s.base%d", prefix, k), cfg)
				if err != nil {
					return nil, nil, err
				}
				bases = append(bases, b)
			}
			bn = layers.NewNorm(mm, prefix+".combine.norm", norm, a.Hidden*len(in))
			var err error
			head, err = layers.NewMLP(mm, prefix+".head", layers.MLPConfig{Dims: Widths(a.Hidden*len(in), a.Hidden, a.HeadLayers, classes),
				Activation: layers.SELU, Norm: norm, Dropout: dropout, PlainLast: true, NormFirst: true})
			if err != nil {
				return nil, nil, err
			}
		}
		hs := make([]*G.Node, len(in))
		for k, x := range in {
			hs[k] = x.MLP(bases[k])
		}
		h := layers.JumpingKnowledge(hs...)
		h = mm.Dropout(bn.Forward(h), dropout)
		return head.Forward(nn.SELU(h)), nil, nil
	}
}

// QueryEvaluators are the evaluators a query over an n-node graph runs:
// the encoder's (nil when the method has no encoder, enc nil) and the
// classifier's.
func QueryEvaluators(enc, cls *run.Module, n int) (encEval, clsEval *run.Evaluator, err error) {
	if enc != nil {
		if encEval, err = enc.NewEvaluator(n); err != nil {
			return nil, nil, err
		}
	}
	clsEval, err = cls.NewEvaluator(n)
	return encEval, clsEval, err
}
