package run

import (
	"errors"
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
)

// DefaultSGDAccountant is the accountant MakePrivate and PlanSGD use when
// the method names none: the one place a run-wide default (a context's
// accountant) flows into DP-SGD over Examples. It is dp.Auto: pld where
// every release has a PLD (Occurrences over Poisson sampling through the
// exact group pair's PLD), else rdp, as run.Calibrate resolves it; the
// plan and report name the one chosen. Both are valid upper bounds; pld is
// the tighter, and its group-pair construction is fast enough for every
// default plan since issue 39's speed work (the timings are in
// docs/performance.md).
func DefaultSGDAccountant(*methods.Context) string { return dp.Auto }

// SGDPlan is what a method says about its DP-SGD over examples, beyond
// the dpnn.PrivateConfig: how δ is derived, the accountant, and the
// degree bound its occurrence bound rests on (its report line).
type SGDPlan struct {
	dpnn.PrivateConfig
	// Units is δ's unit and paper rule (default: node, the paper digits
	// of N training nodes).
	Units DeltaUnits
	// Accountant names dp's accountant ("" → DefaultSGDAccountant).
	Accountant string
	// Bound, if set, is the degree bound R was proven under: its
	// dp.Use goes into the plan.
	Bound *degree.Bound
}

func (p SGDPlan) units() DeltaUnits {
	if p.Units.Unit == "" {
		return DeltaUnits{Unit: "node", Paper: PaperDigits(p.N, "training nodes")}
	}
	return p.Units
}

// PlanSGD calibrates DP-SGD over examples to the run's budget and returns
// the plan: the release (name, kind, What, the event
// Composed{T, Occurrences{R, Change, Poisson{q, Gaussian{z}}}}), the noise
// record, the uses (δ, the training-node count that sets q and T, the
// degree bound, the model selection). A private selection is refused when
// R > 1 (its accounting assumes one validation count per unit, and a
// unit changes up to R predictions); with R = 1 it is planned as a
// release. `dpgnn account` calls it without data.
func PlanSGD(ctx *methods.Context, p SGDPlan) (*Calibrated, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if ctx.Selection == trainers.SelectPrivate && p.R > 1 {
		return nil, fmt.Errorf("--selection private is not supported: one unit changes up to R=%d examples, and so up to R predictions, and the selection is accounted for 1", p.R)
	}
	acct := p.Accountant
	if acct == "" {
		acct = DefaultSGDAccountant(ctx)
	}
	releases := func(z float64) []dp.Planned {
		return append([]dp.Planned{p.Planned(z)}, SelectionReleases(ctx, 1)...)
	}
	cal, err := Calibrate(ctx, p.units(), acct, releases, p.Noise)
	if err != nil {
		return nil, err
	}
	if ctx.Private() {
		cal.Plan.Uses = append(cal.Plan.Uses, TrainCountUse(p.N, p.Rate()))
		if p.Bound != nil {
			cal.Plan.Uses = append(cal.Plan.Uses, p.Bound.Use())
			if n := p.Bound.Note(fmt.Sprintf("the occurrence bound R=%d", p.R)); n != "" {
				cal.Plan.Notes = append(cal.Plan.Notes, n)
			}
		}
	}
	NoteSelection(ctx, cal.Plan, 1)
	return cal, nil
}

// Private is a model made private: the calibrated plan, the DP-SGD
// construction that records its own steps in the run's ledger, and the
// context it runs in.
type Private struct {
	*Calibrated
	SGD *dpnn.SGD
	Cfg dpnn.PrivateConfig
	ctx *methods.Context
	src *dp.Source
	sel trainers.Selection // the training loop's (its recorder built with the plan)
}

// MakePrivate is Opacus's make_private_with_epsilon for a dpgnn model: it
// plans and calibrates DP-SGD over the examples x (PlanSGD), then builds
// the construction on the model's recorded training path (dpnn.Private)
// with the calibrated multiplier, its noise and Poisson sampling drawn
// from the run's mechanism source (label "<name>.dpsgd") and every noisy
// step recorded in the run's ledger. Without privacy it is the same
// pipeline without noise. p's N, R and Change must be x's (dpnn.ConfigFor).
func MakePrivate(ctx *methods.Context, name string, m *nn.Model, perRowLoss *G.Node, outputs []*G.Node, x *dpnn.Examples, p SGDPlan) (*Private, error) {
	cal, err := PlanSGD(ctx, p)
	if err != nil {
		return nil, err
	}
	return makePrivate(ctx, cal, name, m, perRowLoss, outputs, x, p)
}

// makePrivate is MakePrivate under cal, p's plan as PlanSGD calibrated it.
func makePrivate(ctx *methods.Context, cal *Calibrated, name string, m *nn.Model, perRowLoss *G.Node, outputs []*G.Node, x *dpnn.Examples, p SGDPlan) (*Private, error) {
	if x == nil {
		return nil, errors.New("make private: no examples")
	}
	src, err := ctx.NoiseSource(name)
	if err != nil {
		return nil, err
	}
	var rec *dp.Recorder
	if ctx.Private() {
		if rec, err = ctx.Mechanism(cal.Plan, p.LedgerName(), p.StepEvent(cal.Multiplier)); err != nil {
			return nil, err
		}
	}
	sgd, err := dpnn.Private(m, perRowLoss, outputs, x, p.PrivateConfig, cal.Multiplier, rec, src.Split(name+".dpsgd"))
	if err != nil {
		return nil, err
	}
	sel, err := loopSelection(ctx, cal.Plan, src)
	if err != nil {
		return nil, err
	}
	return &Private{Calibrated: cal, SGD: sgd, Cfg: p.PrivateConfig, ctx: ctx, src: src, sel: sel}, nil
}

// Task is the trainer's task: exactly the plan's steps, spread over its
// epochs, fill loading each laid-out chunk. logits are the evaluation
// logits; opt gets the privatised gradients.
func (p *Private) Task(m *nn.Model, logits *G.Node, opt nn.Optimizer, fill func(*dpnn.Batch) error) *trainers.SGDTask {
	return &trainers.SGDTask{SGD: p.SGD, Model: m, Logits: logits, Opt: opt, FillBatch: fill,
		TotalSteps: p.Cfg.Steps(), Epochs: p.Cfg.Epochs, Recorder: p.ctx.Recorder, Run: p.ctx.Run}
}

// Selection is the training loop's model selection (private selection
// drawn from the mechanism source and recorded in the ledger when the
// plan has it).
func (p *Private) Selection() trainers.Selection { return p.sel }

// Report is the run's privacy report (nil without privacy).
func (p *Private) Report() (*dp.Report, error) {
	if !p.ctx.Private() {
		return nil, nil
	}
	return Report(p.ctx, p.Plan)
}
