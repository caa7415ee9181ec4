package asgl

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods/run"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// Ledger names of ASGL's releases.
const (
	ledgerDisc = "asgl.disc"
	ledgerGen  = "asgl.gen"
)

// paperDelta is the δ of the authors' code (--delta paper).
const paperDelta = 1e-5

// privacy is a run's calibrated privacy: the plan, the walk configuration
// and the per-step mechanisms of the two players.
type privacy struct {
	*run.Calibrated
	private bool
	paper   bool
	walk    walk.Config
	// bound is the degree bound the flags set (walk.Mode is the mode the
	// walks use: without privacy a public bound walks the raw graph).
	bound degree.Bound
	// occ is the number of training subgraphs that can differ between
	// neighbours: min(R_{D,L}, n) under a degree bound, n without one (0
	// without privacy).
	occ int
	// disc and gen are one player's private steps (Steps: all of that
	// player's steps, both phases), with the noise the run adds. In paper
	// mode gen is unused: the generators take no private steps.
	disc, gen dp.HypergeomGaussian
	// paperSigma is σ by Theorem 2 as printed and paperR the R_{N,L} it
	// uses (paper mode only).
	paperSigma float64
	paperR     int
	// genRelease is the generators' entry in a paper-mode plan.
	genRelease string
}

// noiseMultiplier is the noise std on a player's summed clipped gradient
// over the clip, z·R·2 = σ·R (what dpnn.SGDConfig.Multiplier takes).
func (p *privacy) noiseMultiplier() float64 { return p.disc.NoiseStd(1) }

// infiniteEvent is the generators' steps in paper mode: they read the
// private graph without noise, so no order has a bound.
func infiniteEvent(steps int) dp.RDPEvent {
	return dp.RDPEvent{Name: "asgl generators: walks on the private graph without noise (no bound)", Count: steps,
		Curve: func(float64) float64 { return math.Inf(1) }}
}

// steps returns T_D and T_G: the discriminators' and the generators' steps
// over both phases and all epochs.
func (m *ASGL) steps() (tD, tG int) {
	c := m.cfg
	return 2 * c.TrainEpochs * c.DiscSteps, 2 * c.TrainEpochs * c.GenSteps
}

// walkConfig is the walk configuration of a run under the degree bound b:
// the configured bound when private; without privacy sample keeps the
// sample and public walks the raw graph (nothing to protect, nothing to
// refuse).
func (m *ASGL) walkConfig(b degree.Bound, private bool) walk.Config {
	c := m.cfg
	w := walk.Config{Degree: c.MaxDegree, Paths: c.Paths, MaxLen: c.MaxLen, Mode: b.Mode}
	if b.Mode == degree.Public && !private {
		w.Mode = degree.None
	}
	return w
}

// calibrate computes the privacy plan of a run on n node ids: the
// accounting of ASGL's private steps (the argument is the package doc's).
//
// Strict (default). Every step of either player draws exactly B of the n
// roots without replacement, clips each root's gradient to C and adds
// Gaussian noise of std σ·R·C to every coordinate, R = min(R_{D,L}, n) the
// most training subgraphs that differ between G and G − v* (Claim 2 of
// walk.SignedWalker under the degree bound), each by at most 2C: one
// dp.HypergeomGaussian step with Change 2. Conditioned on the outputs so
// far (both players' parameters come from noisy steps only) and on the
// public walk keys, the steps compose adaptively: T_D discriminator steps
// at batch B_d and T_G generator steps at batch B_g, one RDP event each
// (Event; every noisy step is recorded as its Step), and σ is the
// smallest multiplier that keeps them within (ε, δ).
//
// Paper (--accounting paper). σ is ASGL's Theorem 2 as printed: R_{N,L}
// of the N paths of at most L hops, the T_D discriminator steps alone,
// change 1, Mironov's conversion, noise std σ·R_{N,L}·C; the generators
// train without clipping or noise and are called post-processing. They
// are not: they read the private graph (their walks and pairs) and steer
// every later discriminator sample, so nothing bounds what removing a node
// does to the run. The plan therefore declares the discriminators' steps
// with that noise under the bound that would hold for them with the
// generators fixed (R differing subgraphs under the run's degree bound, n
// without one; change 2), and the generators' steps as an event with no
// bound: the report's ε is ∞, with the paper's figure in its notes.
func (m *ASGL) calibrate(ctx *methods.Context, n int) (*privacy, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	c := m.cfg
	if ctx.Level == methods.Edge {
		return nil, fmt.Errorf("asgl is node-level DP only (or --privacy none)")
	}
	if ctx.Selection == trainers.SelectPrivate {
		return nil, fmt.Errorf("asgl keeps the last epoch; --selection private is not supported")
	}
	if n < 2 {
		return nil, fmt.Errorf("asgl needs at least 2 nodes, got %d", n)
	}
	if c.DiscBatch > n {
		return nil, fmt.Errorf("DiscBatch (--disc-batch) %d exceeds the %d node ids (one training subgraph each)", c.DiscBatch, n)
	}
	if c.GenBatch > n {
		return nil, fmt.Errorf("GenBatch (--gen-batch) %d exceeds the %d node ids (one training subgraph each)", c.GenBatch, n)
	}
	b, err := c.Bound()
	if err != nil {
		return nil, err
	}
	p := &privacy{private: ctx.Private(), paper: c.Accounting == AccountingPaper, bound: b, walk: m.walkConfig(b, ctx.Private())}
	if p.private && !p.paper && p.walk.Mode == degree.None {
		return nil, fmt.Errorf("DegreeBound (--degree-bound) none bounds no degree, so nothing bounds the training subgraphs a node changes: use it without privacy or with --accounting paper (whose report states ε = ∞), or use public or sample")
	}
	tD, tG := m.steps()
	units := run.DeltaUnits{Unit: "node", PaperPublic: true, Paper: func() (float64, string, error) {
		return paperDelta, "paper convention: δ = 1e-5 (the authors' code; reads no data)", nil
	}}
	noise := func(z float64) map[string]float64 {
		return map[string]float64{"occurrences": float64(p.occ), "clip": c.Clip, "noise_std": z * float64(p.occ) * c.Clip,
			"disc_steps": float64(tD), "gen_steps": float64(tG), "disc_batch": float64(c.DiscBatch), "gen_batch": float64(c.GenBatch),
			"node_ids": float64(n)}
	}
	if !p.private {
		cal, err := run.Calibrate(ctx, units, "rdp", nil, noise)
		if err != nil {
			return nil, err
		}
		p.Calibrated = cal
		return p, nil
	}
	p.occ = n
	if p.walk.Mode != degree.None {
		r, err := p.walk.OccurrenceBound()
		if err != nil {
			return nil, err
		}
		p.occ = min(r, n)
	}
	// The calibration's variable is σ = noise std / (R·C), the paper's
	// unit; the events state dp's one convention, z = std / (R·change·C)
	// = σ/change (exact for change 1 or 2), and the plan reports z.
	hg := func(sigma float64, batch, steps int, change float64) dp.HypergeomGaussian {
		return dp.HypergeomGaussian{Population: n, Batch: batch, Occurrences: p.occ, Multiplier: sigma / change, Change: change, Steps: steps}
	}
	event := func(h dp.HypergeomGaussian) dp.Event {
		e, err := h.Event()
		if err != nil {
			return dp.RDPEvent{Name: "invalid " + h.String(), Curve: func(float64) float64 { return math.Inf(1) }}
		}
		return e
	}
	discWhat := func(z float64) string {
		return fmt.Sprintf("discriminators D+ and D−: %d DP-SGD steps, each a batch of %d of the %d roots drawn without replacement, every root's gradient clipped to %g, Gaussian noise of std %.4g (σ·R·C, R = %d) on every coordinate",
			tD, c.DiscBatch, n, c.Clip, z*float64(p.occ)*c.Clip, p.occ)
	}
	var releases func(z float64) []dp.Planned
	inner := *ctx
	if p.paper {
		// Theorem 2 as printed: R_{N,L} of the paths, change 1, T_D steps;
		// the noise std σ·R_{N,L}·C is declared below as the multiplier of
		// the honest per-step bound (R = occ, change 2).
		rp, err := walk.ReceptiveField(c.Paths, c.MaxLen)
		if err != nil {
			return nil, err
		}
		p.paperR = min(rp, n)
		sigma := ctx.Multiplier
		if sigma <= 0 {
			delta, _, err := run.ResolveDelta(ctx, units)
			if err != nil {
				return nil, err
			}
			paper := hg(1, c.DiscBatch, tD, 1)
			paper.Occurrences = p.paperR
			if sigma, err = calibratePaper(ctx.Epsilon, delta, paper); err != nil {
				return nil, fmt.Errorf("calibrating σ by Theorem 2 (paper accounting): %w", err)
			}
		}
		p.paperSigma = sigma
		inner.Multiplier = sigma * float64(p.paperR) / float64(p.occ)
		p.genRelease = fmt.Sprintf("generators G+ and G−: %d steps without clipping or noise on walks over the private graph's BFS trees (the paper's post-processing claim; not covered)", tG)
		releases = func(z float64) []dp.Planned {
			out := []dp.Planned{{Name: ledgerDisc, Kind: "dp-sgd", What: discWhat(z), Event: event(hg(z, c.DiscBatch, tD, 2))}}
			if tG > 0 {
				out = append(out, dp.Planned{Name: ledgerGen, Kind: "release", What: p.genRelease, Event: infiniteEvent(tG)})
			}
			return out
		}
	} else {
		if ctx.Multiplier > 0 {
			inner.Multiplier = 2 * ctx.Multiplier // a given z is std/(R·2·C): σ = 2z
		}
		releases = func(z float64) []dp.Planned {
			out := []dp.Planned{{Name: ledgerDisc, Kind: "dp-sgd", What: discWhat(z), Event: event(hg(z, c.DiscBatch, tD, 2))}}
			if tG > 0 {
				out = append(out, dp.Planned{Name: ledgerGen, Kind: "dp-sgd", Event: event(hg(z, c.GenBatch, tG, 2)),
					What: fmt.Sprintf("generators G+ and G−: %d DP-SGD steps, each a batch of %d of the %d roots drawn without replacement, clipped and noised like the discriminators'", tG, c.GenBatch, n)})
			}
			return out
		}
	}
	cal, err := run.Calibrate(&inner, units, "rdp", releases, noise)
	if err != nil {
		return nil, err
	}
	p.Calibrated = cal
	z := cal.Multiplier
	p.disc, p.gen = hg(z, c.DiscBatch, tD, 2), hg(z, c.GenBatch, tG, 2)
	plan := cal.Plan
	plan.Multiplier, plan.Noise["multiplier"] = p.disc.Multiplier, p.disc.Multiplier
	if p.paper {
		plan.Epsilon = math.Inf(1)
		plan.Noise["paper_sigma"], plan.Noise["paper_occurrences"] = p.paperSigma, float64(p.paperR)
	}
	plan.Uses = append(plan.Uses, p.bound.Use(),
		dp.Use{Kind: "population", What: fmt.Sprintf("the %d node ids: one training subgraph each, batches drawn from all of them (a removed node keeps its id, with an empty subgraph)", n),
			Covered: "treated as public (the universe of node identities)"},
		dp.Use{Kind: "selection", What: "the last epoch is kept; no label or edge is read to choose it", Covered: "no private data read"})
	plan.Notes = append(plan.Notes, m.notes(p, n)...)
	return p, nil
}

// calibratePaper is σ by Theorem 2 as printed (--accounting paper): the
// smallest multiplier for which h (its Multiplier ignored) is (eps,
// delta)-DP under RDP with the standard conversion (TF-Privacy's, as the
// authors' code), by dp.CalibrateNoise. h is validated first; a curve that
// fails at some σ fails the calibration.
func calibratePaper(eps, delta float64, h dp.HypergeomGaussian) (float64, error) {
	h.Multiplier = 1
	if err := h.Validate(); err != nil {
		return 0, err
	}
	var curveErr error
	z, err := dp.CalibrateNoise(eps, delta, dp.ConversionStandard.Accountant(), func(z float64) []dp.Event {
		h.Multiplier = z
		e, err := h.Event()
		if err != nil {
			curveErr = err
			return []dp.Event{dp.RDPEvent{Name: "invalid", Curve: func(float64) float64 { return math.Inf(1) }}}
		}
		return []dp.Event{e}
	})
	if curveErr != nil {
		return 0, curveErr
	}
	return z, err
}

// notes are the plan's notes on the accounting and its assumptions.
func (m *ASGL) notes(p *privacy, n int) []string {
	c := m.cfg
	tD, tG := m.steps()
	var out []string
	if p.walk.Mode == degree.None {
		out = append(out, fmt.Sprintf("no degree bound: a node can change all n = %d training subgraphs", n))
	} else {
		r, _ := p.walk.OccurrenceBound()
		out = append(out, fmt.Sprintf("walks of at most L=%d hops, N=%d per root, on graphs of degree ≤ D=%d: at most R = min(R_{D,L} = %d, n = %d) = %d training subgraphs differ between neighbours, each by at most 2C (node removal modifies them)",
			c.MaxLen, c.Paths, c.MaxDegree, r, n, p.occ))
	}
	if note := p.bound.Note(fmt.Sprintf("the occurrence bound R = %d (training subgraphs that differ between neighbours)", p.occ)); note != "" {
		out = append(out, note)
	}
	if p.paper {
		strict, _ := dp.EpsilonOf("rdp", []dp.Event{mustEvent(p.disc)}, p.Plan.Delta)
		out = append(out, fmt.Sprintf("--accounting paper: σ = %.6g from Theorem 2 as printed (R_{N,L} = %d, change 1, %d discriminator steps, Mironov's conversion; noise std σ·R_{N,L}·C) claims ε = %.4g at δ = %g; "+
			"not a guarantee: the generators train without noise on walks over the private graph and steer the discriminators' fakes, so removing a node can change every later step (ε = ∞); "+
			"the discriminator steps alone, with R = %d and the change 2 of node removal, would give ε = %.4g",
			p.paperSigma, p.paperR, tD, paperClaim(p), p.Plan.Delta, p.occ, strict))
	} else if tG > 0 {
		out = append(out, fmt.Sprintf("the generators are trained with the discriminators' clipping and noise (%d of the %d accounted steps): they read the private graph, so they are not post-processing", tG, tD+tG))
	}
	return out
}

// paperClaim is the ε the paper's accounting claims for the run's σ: the
// target, or for a fixed multiplier its Theorem 2 value.
func paperClaim(p *privacy) float64 {
	h := p.disc
	h.Change, h.Multiplier, h.Occurrences = 1, p.paperSigma, p.paperR
	e, err := h.Event()
	if err != nil {
		return math.NaN()
	}
	eps, err := dp.EpsilonOf("rdp-standard", []dp.Event{e}, p.Plan.Delta)
	if err != nil {
		return math.NaN()
	}
	return eps
}

func mustEvent(h dp.HypergeomGaussian) dp.Event {
	e, err := h.Event()
	if err != nil {
		return dp.RDPEvent{Name: "invalid", Curve: func(float64) float64 { return math.Inf(1) }}
	}
	return e
}

// annotate marks, in a paper-mode report, the generators' use as not
// covered (Plan.Report calls every release accounted).
func (p *privacy) annotate(rep *dp.Report) {
	if !p.paper {
		return
	}
	for i, u := range rep.Uses {
		if u.What == p.genRelease {
			rep.Uses[i].Covered = "not covered: the generators read the private graph outside any mechanism (ε = ∞)"
		}
	}
}

// accountPlan: ASGL's plan (`dpgnn account asgl`) needs the number of node ids (one training subgraph each), given as
// --train-nodes.
func (m *ASGL) accountPlan() run.NodeCountPlan {
	return run.NodeCountPlan{Method: "asgl", Calibrate: func(ctx *methods.Context, n int) (*run.Calibrated, error) {
		p, err := m.calibrate(ctx, n)
		if err != nil {
			return nil, err
		}
		return p.Calibrated, nil
	}}
}

// AccountCountHelp describes --train-nodes for `dpgnn account asgl`.
func (m *ASGL) AccountCountHelp(count string) string {
	if count == run.CountTrainNodes {
		return "N: the node ids, one training subgraph each, from which every batch draws its roots without replacement (--disc-batch, --gen-batch)"
	}
	return ""
}

// AccountCounts names the counts of AccountPlan.
func (m *ASGL) AccountCounts(level methods.Level) []string { return m.accountPlan().Counts(level) }

// AccountPlan is the plan of a run with these counts.
func (m *ASGL) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	return m.accountPlan().Plan(ctx, c)
}

var _ run.Accountable = (*ASGL)(nil)
