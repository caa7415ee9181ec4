// Package progap is ProGAP (Sajadmanesh & Gatica-Perez, WSDM 2024):
// progressive training with aggregation perturbation. Stage s trains base
// MLPs 0..s on the raw features and on s cached NAP aggregates, each
// computed once from the previous stage's best base MLP; jumping knowledge
// (concatenation, row normalisation) feeds a fresh one-layer head. At node
// level out-degrees are bounded first and every stage trains with DP-Adam.
package progap

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/ap"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// Config holds ProGAP's hyperparameters: aggregation perturbation's.
type Config struct {
	ap.Config
}

// DefaultConfig is aggregation perturbation's defaults (selected on
// validation; the learning rate 0.01 from the paper's grid {0.01, 0.05}).
func DefaultConfig() Config { return Config{ap.DefaultConfig()} }

// ProGAP is the method with its configuration.
type ProGAP struct {
	cfg Config
	// Base gives its levels, default split, audit target and plan from
	// counts.
	ap.Base
}

// New returns ProGAP with the configuration cfg.
func New(cfg Config) *ProGAP {
	m := &ProGAP{cfg: cfg}
	m.Base = ap.Base{Cfg: &m.cfg.Config, Calibrate: m.calibrate}
	return m
}

func (*ProGAP) Name() string { return "progap" }
func (*ProGAP) Short() string {
	return "ProGAP: progressive stages of cached aggregation perturbation with jumping knowledge (edge or node DP)"
}

func (m *ProGAP) Config() any     { return &m.cfg }
func (m *ProGAP) Validate() error { return m.cfg.Validate() }
func (m *ProGAP) Epochs() int     { return (m.cfg.Hops + 1) * m.cfg.TrainEpochs }

func (m *ProGAP) training(ctx *methods.Context, setup *ap.APSetup, plan *dp.Plan, z float64, stage int) run.ModuleTraining {
	return run.ModuleTraining{Epochs: m.cfg.TrainEpochs, LR: m.cfg.LR, WeightDecay: m.cfg.WeightDecay, Private: ctx.Level == methods.Node,
		Multiplier: z, Clip: m.cfg.Clip, Rate: setup.Rate, Stage: stage, Ledger: ledgerSGD, Plan: plan}
}

// Ledger names of ProGAP's releases.
const (
	ledgerNAP = "nap"
	ledgerSGD = "dpsgd"
)

// calibrate: edge level, K NAP calls of sensitivity 1 (exact Gaussian
// composition by default); node level, one multiplier z for K NAP calls
// (std z·√D), K+1 DP-SGD runs of T steps each and the private model
// selections, composed in RDP (Theorem 4.2 with its typos fixed).
func (m *ProGAP) calibrate(ctx *methods.Context, setup *ap.APSetup) (*run.Calibrated, error) {
	t := 0
	if ctx.Level == methods.Node {
		t = m.training(ctx, setup, nil, 0, 0).SGDSteps()
	}
	return m.cfg.Plan(ctx, setup, func(z float64) []dp.Planned {
		ev := Events(ctx.Level, m.cfg.Hops, z, setup.Rate, t)
		rel := []dp.Planned{{Name: ledgerNAP, What: fmt.Sprintf("NAP aggregation, one per stage 1..%d: Gaussian noise std %.4g on sums of row-normalised embeddings (sensitivity %.4g)",
			m.cfg.Hops, z*setup.Sensitivity, setup.Sensitivity), Event: ev[0]}}
		if ctx.Level == methods.Node {
			rel = append(rel, dp.Planned{Name: ledgerSGD, What: fmt.Sprintf("DP-SGD of the %d stages: %d Poisson steps each at rate %.4g, clip %g", m.cfg.Hops+1, t, setup.Rate, m.cfg.Clip), Event: ev[1]})
		}
		return append(rel, run.SelectionReleases(ctx, m.cfg.Hops+1)...)
	}, func(z float64, rec map[string]float64) {
		rec["sgd_std"], rec["rate"], rec["steps_per_stage"] = z*m.cfg.Clip, setup.Rate, float64(t)
	}, m.cfg.Hops+1)
}

// Events is what a ProGAP run releases, in noise multipliers z: K NAP calls
// (Gaussian, sensitivity normalised to 1: the std is z at edge level and
// z·√D at node level) and, at node level, K+1 DP-SGD runs of T steps each
// at Poisson rate q with noise z·C.
func Events(level methods.Level, hops int, z, q float64, stepsPerStage int) []dp.Event {
	ev := []dp.Event{dp.GaussianEvent{Multiplier: z, Count: hops}}
	if level == methods.Node {
		ev = append(ev, dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: (hops + 1) * stepsPerStage})
	}
	return ev
}

// stage is one stage's model with the base MLPs it trains.
type stage struct {
	mod   *run.Module
	bases []*layers.MLP
	// hLast is the evaluation-path output of the newest base MLP (the NAP
	// input of the next stage).
	hLast *G.Node
}

// buildStage builds stage s over inputs [X, X̃1, …, X̃s], copying the base
// MLPs of the previous stage (earlier bases keep training: they are not
// frozen), with a fresh base s and a fresh head.
func (m *ProGAP) buildStage(ctx *methods.Context, s int, inputs []*graphs.Features, prev *stage, tr run.ModuleTraining) (*stage, error) {
	g := ctx.Graph
	norm, err := m.cfg.NormFor(ctx.Level, layers.NormGroup)
	if err != nil {
		return nil, err
	}
	dropout, inDropout := m.cfg.DropoutFor(ctx.Level)
	st := &stage{}
	var head *layers.MLP
	names := make([]string, len(inputs))
	for i := range names {
		names[i] = fmt.Sprintf("X%d", i)
	}
	mod, err := run.BuildModule(ctx.Seed+uint64(s)*7919, inputs, names, tr, len(g.Split.Train),
		func(mm *nn.Model, in []*layers.Features, train bool) (*G.Node, []*G.Node, error) {
			if st.bases == nil {
				for k, x := range in {
					dims := []int{x.F}
					for i := 0; i < m.cfg.BaseLayers; i++ {
						dims = append(dims, m.cfg.Hidden)
					}
					cfg := layers.MLPConfig{Dims: dims, Activation: layers.SELU, Norm: norm, Dropout: dropout}
					if k == 0 {
						cfg.InputDropout = inDropout // the raw features
					}
					b, err := layers.NewMLP(mm, fmt.Sprintf("progap.s%d.base%d", s, k), cfg)
					if err != nil {
						return nil, nil, err
					}
					st.bases = append(st.bases, b)
				}
				dims := []int{m.cfg.Hidden * len(in)}
				for i := 1; i < m.cfg.HeadLayers; i++ {
					dims = append(dims, m.cfg.Hidden)
				}
				var err error
				head, err = layers.NewMLP(mm, fmt.Sprintf("progap.s%d.head", s), layers.MLPConfig{Dims: append(dims, g.NumClasses),
					Activation: layers.SELU, Norm: norm, Dropout: dropout, PlainLast: true})
				if err != nil {
					return nil, nil, err
				}
				if prev != nil {
					for k, b := range prev.bases {
						if err := st.bases[k].CopyFrom(b); err != nil {
							return nil, nil, err
						}
					}
				}
			}
			hs := make([]*G.Node, len(in))
			for k, x := range in {
				hs[k] = x.MLP(st.bases[k])
			}
			logits := head.Forward(layers.JumpingKnowledge(hs...))
			return logits, []*G.Node{hs[len(hs)-1]}, nil
		})
	if err != nil {
		return nil, err
	}
	st.mod = mod
	st.hLast = mod.Outputs[0]
	return st, nil
}

// Run trains ProGAP once: K+1 stages, K NAP calls in total.
func (m *ProGAP) Run(ctx *methods.Context) (*methods.Outcome, error) {
	out, _, _, err := m.run(ctx)
	return out, err
}

// run also returns the NAP layer (tests count its adjacency products) and
// the final stage (tests predict again after changing the graph).
func (m *ProGAP) run(ctx *methods.Context) (*methods.Outcome, *layers.NAP, *stage, error) {
	g := ctx.Graph
	if err := run.Begin(ctx, "progap", m.cfg.Hidden, (m.cfg.Hops+1)*(m.cfg.BaseLayers+m.cfg.HeadLayers)); err != nil {
		return nil, nil, nil, err
	}
	setup, err := m.cfg.SetupAP(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	priv, err := m.calibrate(ctx, setup)
	if err != nil {
		return nil, nil, nil, err
	}
	z := priv.Multiplier
	src, err := ctx.NoiseSource("progap")
	if err != nil {
		return nil, nil, nil, err
	}
	nap := layers.NewNAP("progap.nap", setup.Adj, z*setup.Sensitivity, src.Split("progap.nap"))
	if err := ap.RecordPlannedNAP(ctx, priv.Plan, nap, ledgerNAP, m.cfg.Hops, z, setup.Sensitivity); err != nil {
		return nil, nil, nil, err
	}
	inputs := []*graphs.Features{g.X}
	var prev *stage
	var res *methods.Outcome
	var stages []*stage
	for s := 0; s <= m.cfg.Hops; s++ {
		if s > 0 {
			agg, err := m.release(ctx, prev, nap)
			if err != nil {
				return nil, nil, nil, err
			}
			inputs = append(inputs, agg)
		}
		tr := m.training(ctx, setup, priv.Plan, z, s)
		st, err := m.buildStage(ctx, s, inputs, prev, tr)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("stage %d: %w", s, err)
		}
		r, err := st.mod.Train(ctx, tr, src.Split(fmt.Sprintf("progap.stage%d", s)))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("stage %d: %w", s, err)
		}
		res = &methods.Outcome{Pred: r.Pred, ValAcc: r.ValAcc}
		prev = st
		stages = append(stages, st)
	}
	if nap.Adj.Calls != m.cfg.Hops {
		return nil, nil, nil, fmt.Errorf("progap: the adjacency was multiplied %d times for K=%d (accounting would be wrong)", nap.Adj.Calls, m.cfg.Hops)
	}
	if err := run.FinishModel(ctx, res, "progap", priv.Plan, prev.mod.Logits, func(qsrc *dp.Source) func(*graphs.Graph) (*run.Inference, error) {
		return m.inference(ctx, setup, priv, stages, qsrc)
	}); err != nil {
		return nil, nil, nil, err
	}
	return res, nap, prev, nil
}

// inference is the trained ProGAP's query over a graph h: stage s's model
// over the query features and the s aggregates so far gives the input of
// the next NAP call, run over h with fresh noise from the mechanism source
// (each query K new Gaussian releases, recorded under
// methods.LedgerQueries); the last stage gives the posteriors.
func (m *ProGAP) inference(ctx *methods.Context, setup *ap.APSetup, priv *run.Calibrated, stages []*stage, qsrc *dp.Source) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		cost := m.cfg.NAPQueryCost(ctx, priv, setup.Sensitivity)
		src := qsrc.Split("graph")
		q := run.NewQuery(h.N, ctx.Graph.X.F, cost, func() (methods.QueryFunc, error) {
			adj, err := m.cfg.QueryAdj(ctx.Level, h, src.Split("degree-bound"))
			if err != nil {
				return nil, err
			}
			nap := layers.NewNAP("progap.query.nap", adj, priv.Multiplier*setup.Sensitivity, src.Split("nap"))
			if err := ap.RecordQueryNAP(cost, nap, m.cfg.Hops, priv.Multiplier, setup.Sensitivity); err != nil {
				return nil, err
			}
			evals := make([]*run.Evaluator, len(stages))
			for s, st := range stages {
				if evals[s], err = st.mod.NewEvaluator(h.N); err != nil {
					return nil, err
				}
			}
			return func(x *graphs.Features) ([]float64, error) {
				inputs := []*graphs.Features{x}
				for s, ev := range evals {
					if s == len(evals)-1 {
						logits, err := ev.Logits(inputs...)
						if err != nil {
							return nil, err
						}
						return run.Softmax(logits, h.N, h.NumClasses), nil
					}
					outs, err := ev.Outputs(inputs...)
					if err != nil {
						return nil, err
					}
					agg, err := ap.RunNAP(nap, outs[0], h.N, m.cfg.Hidden)
					if err != nil {
						return nil, err
					}
					inputs = append(inputs, layers.DenseFeatures(agg, h.N, m.cfg.Hidden))
				}
				return nil, fmt.Errorf("progap: no stage to query")
			}, nil
		})
		return &run.Inference{Query: q, Cost: cost}, nil
	}
}

// release computes X̃ = NAP(A, H) once, where H is the newest base MLP's
// output over all nodes in evaluation mode with the stage's best
// parameters (already restored), and returns it as a cached input.
func (m *ProGAP) release(ctx *methods.Context, prev *stage, nap *layers.NAP) (*graphs.Features, error) {
	g := ctx.Graph
	h := append([]float64(nil), nn.Values(prev.hLast)...) // from the restored model's last evaluation
	out, err := ap.RunNAP(nap, h, g.N, m.cfg.Hidden)
	if err != nil {
		return nil, err
	}
	return layers.DenseFeatures(out, g.N, m.cfg.Hidden), nil
}

// BuildModel builds the final stage's graph for inspection: base MLPs
// 0..K over the raw features and K cached aggregates (seeded random placeholders
// here), jumping knowledge, the head and its loss — with the DP-SGD nodes at
// node level — plus one NAP release (normalise, aggregate, noise) of the
// newest base output, which is where edges enter.
func (m *ProGAP) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	g := ctx.Graph
	setup, err := m.cfg.SetupAP(ctx)
	if err != nil {
		return nil, err
	}
	priv, err := m.calibrate(ctx, setup)
	if err != nil {
		return nil, err
	}
	inputs := []*graphs.Features{g.X}
	for k := 0; k < m.cfg.Hops; k++ {
		inputs = append(inputs, run.Placeholder(g.N, m.cfg.Hidden, ctx.Seed+uint64(k)))
	}
	tr := m.training(ctx, setup, priv.Plan, priv.Multiplier, m.cfg.Hops)
	st, err := m.buildStage(ctx, m.cfg.Hops, inputs, nil, tr)
	if err != nil {
		return nil, err
	}
	src, err := ctx.NoiseSource("progap")
	if err != nil {
		return nil, err
	}
	nap := layers.NewNAP("progap.nap", setup.Adj, priv.Multiplier*setup.Sensitivity, src.Split("progap.nap"))
	if err := nn.Build(func() error {
		st.mod.Outputs = append(st.mod.Outputs, nap.Forward(st.hLast))
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := st.mod.Prepare(ctx, tr, src.Split("progap.stage")); err != nil {
		return nil, err
	}
	return st.mod.Model, nil
}

var (
	_ run.Builder     = (*ProGAP)(nil)
	_ run.Auditor     = (*ProGAP)(nil)
	_ run.Accountable = (*ProGAP)(nil)
)
