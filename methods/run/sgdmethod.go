package run

import (
	"errors"
	"fmt"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
)

// ExamplesSGD is a node-classification method trained with DP-SGD over
// declared examples, as its author writes it: the method's Spec, its plan
// and its network. SGDMethod derives everything else from these two, so
// the author writes no Run, no ledger name, step count or multiplier, and
// no separate support for `dpgnn inspect` (the network's model), `dpgnn
// account` (the plan from a training-node count) or `dpgnn audit` (one
// step of the network's examples on G and on G − v).
type ExamplesSGD interface {
	methods.Spec
	// Plan is the DP-SGD plan of a run with n training nodes (one example
	// each), from public numbers only: R and Change with their proof, the
	// batch size, epochs, clip and the degree bound R rests on (nil
	// without privacy). `dpgnn account` calls it without data, so it must
	// not read the graph.
	Plan(ctx *methods.Context, n int) (SGDPlan, error)
	// Build builds the run's examples (ctx.Graph's training nodes, in the
	// split's order; their N, R and Change p's) and the network over them.
	// It is called after the plan is calibrated, so a budget that cannot
	// be met is refused before the graph is read.
	Build(ctx *methods.Context, p SGDPlan) (*Net, error)
}

// Net is what an ExamplesSGD method builds for one run: the model with
// its recorded training path (Model.StartRecording … StopRecording), the
// per-row loss of that path (nn.CrossEntropy.PerRow), the evaluation
// logits over the run's whole graph, the examples, the fill that loads a
// laid-out batch into the training path's inputs, and the optimiser the
// privatised gradients go to.
type Net struct {
	Model    *nn.Model
	Loss     *nn.Node
	Logits   *nn.Node
	Examples *dpnn.Examples
	Fill     func(*dpnn.Batch) error
	Opt      nn.Optimizer
}

func (n *Net) check(method string) error {
	if n == nil || n.Model == nil || n.Loss == nil || n.Logits == nil || n.Examples == nil || n.Fill == nil || n.Opt == nil {
		return fmt.Errorf("%s: Build returned an incomplete Net (want Model, Loss, Logits, Examples, Fill and Opt)", method)
	}
	return nil
}

// SGDMethod is m as a method every command runs: train and sweep (Run:
// the plan calibrated, the network built and made private by
// MakePrivate, trained for the plan's steps with the run's model
// selection, the report checked against the ledger), inspect (the made-private model),
// account (the plan at --train-nodes, node level) and audit (ExamplesAudit
// of one step; node level). m's ValidateLevel, if it has one, is used.
func SGDMethod(m ExamplesSGD) methods.Method { return sgdMethod{m} }

type sgdMethod struct{ ExamplesSGD }

var (
	_ Builder     = sgdMethod{}
	_ Accountable = sgdMethod{}
	_ Auditor     = sgdMethod{}
)

// PrivateNet is what every command of SGDMethod(m) starts from: m's plan
// for ctx's training nodes calibrated (PlanSGD: an unmeetable budget is
// refused before the graph is read), m's network built on ctx's graph
// and made private under that calibration (MakePrivate's construction).
func PrivateNet(ctx *methods.Context, m ExamplesSGD) (*Private, *Net, error) {
	s, name := sgdMethod{m}, m.Name()
	if ctx.Graph == nil || len(ctx.Graph.Split.Train) == 0 {
		return nil, nil, fmt.Errorf("%s: the split has no training nodes", name)
	}
	if ctx.Selection == trainers.SelectPrivate {
		// A private selection scores the evaluation logits on validation
		// labels with sensitivity 1, which needs one unit to change one
		// prediction; R bounds the training examples a unit changes, not
		// the predictions of Logits, which may read neighbours (the sixth
		// outside audit: R = 1, logits averaging over neighbours, a hub's
		// removal moved 10 validation predictions).
		return nil, nil, errors.New("--selection private is not supported: one node's removal may change many validation predictions of the evaluation path (the plan bounds training examples, not predictions); keep the last epoch (--selection last)")
	}
	// Plan reads public numbers only: it gets the context without its
	// graph (as `dpgnn account` calls it), so a plan cannot read the data.
	pctx := *ctx
	pctx.Graph = nil
	p, err := s.Plan(&pctx, len(ctx.Graph.Split.Train))
	if err != nil {
		return nil, nil, err
	}
	cal, err := PlanSGD(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	net, err := s.Build(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if err := net.check(name); err != nil {
		return nil, nil, err
	}
	if net.Examples.N != len(ctx.Graph.Split.Train) {
		return nil, nil, fmt.Errorf("%s: %d examples for %d training nodes (the plan's N)", name, net.Examples.N, len(ctx.Graph.Split.Train))
	}
	priv, err := makePrivate(ctx, cal, name, net.Model, net.Loss, []*nn.Node{net.Logits}, net.Examples, p)
	return priv, net, err
}

// Run trains once and, at a private level, reports the plan against the
// ledger.
func (s sgdMethod) Run(ctx *methods.Context) (*methods.Outcome, error) {
	priv, net, err := PrivateNet(ctx, s.ExamplesSGD)
	if err != nil {
		return nil, err
	}
	task := priv.Task(net.Model, net.Logits, net.Opt, net.Fill)
	res, err := trainers.FullBatch(task, ctx.Graph.Labels, ctx.Graph.Split,
		trainers.LoopConfig{Epochs: priv.Cfg.Epochs, Run: ctx.Run, Recorder: ctx.Recorder, Select: priv.Selection()})
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.Pred, ValAcc: res.ValAcc}
	out.Privacy, err = priv.Report()
	return out, err
}

// BuildModel is the model Run trains, with its DP nodes when ctx is
// private.
func (s sgdMethod) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	_, net, err := PrivateNet(ctx, s.ExamplesSGD)
	if err != nil {
		return nil, err
	}
	return net.Model, nil
}

// AccountCounts is the training-node count at node level.
func (s sgdMethod) AccountCounts(l methods.Level) []string { return NodeCountPlan{}.Counts(l) }

// AccountPlan is the plan of a run with c's training-node count.
func (s sgdMethod) AccountPlan(ctx *methods.Context, c Counts) (*Calibrated, error) {
	return NodeCountPlan{Method: s.Name(), Calibrate: func(ctx *methods.Context, n int) (*Calibrated, error) {
		p, err := s.Plan(ctx, n)
		if err != nil {
			return nil, err
		}
		return PlanSGD(ctx, p)
	}}.Plan(ctx, c)
}

// AuditTarget is one DP-SGD step over the network's examples
// (ExamplesAudit): built from G and from G − v, every released gradient
// value compared.
func (s sgdMethod) AuditTarget(ctx *methods.Context, opts AuditOptions) (*AuditTarget, error) {
	return ExamplesAudit(ctx, opts, func(ctx *methods.Context) (*Private, func(*dpnn.Batch) error, error) {
		priv, net, err := PrivateNet(ctx, s.ExamplesSGD)
		if err != nil {
			return nil, nil, err
		}
		return priv, net.Fill, nil
	})
}

// ValidateLevel is m's, if it has one.
func (s sgdMethod) ValidateLevel(level methods.Level, private bool) error {
	if lv, ok := s.ExamplesSGD.(LevelValidator); ok {
		return lv.ValidateLevel(level, private)
	}
	return nil
}
