package ap

import (
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
)

// Base is what the aggregation-perturbation methods (GAP, ProGAP) share as
// methods, written once: the method embeds it, set to its own
// configuration and calibration, and inherits Levels and DefaultSplit
// (methods.Method), AuditTarget (one NAP release, NAPAudit: a
// run.Auditor), AccountPlan (the plan of a run with these counts, from
// SetupCounts and the method's calibration) and AccountCounts (a
// run.Accountable).
type Base struct {
	// Cfg is the method's aggregation-perturbation configuration (a
	// pointer into the method, so that flags set later are seen).
	Cfg *Config
	// Calibrate is the method's privacy plan for a set-up (its releases
	// passed to Config.Plan).
	Calibrate func(*methods.Context, *APSetup) (*run.Calibrated, error)
}

// Levels: the method runs without privacy, at edge level and at node
// level.
func (Base) Levels() []methods.Level {
	return []methods.Level{methods.None, methods.Edge, methods.Node}
}

// DefaultSplit is the default protocol for a dataset.
func (Base) DefaultSplit(dataset string) string { return methods.DefaultSplitFor(dataset) }

// AuditTarget is one of the method's NAP releases, for `dpgnn audit`.
func (r Base) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	return r.Cfg.NAPAudit(ctx, opts, r.Calibrate)
}

// AccountPlan is the privacy plan of a run with these counts (`dpgnn
// account METHOD`).
func (r Base) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	setup, err := r.Cfg.SetupCounts(ctx.Level, c)
	if err != nil {
		return nil, err
	}
	return r.Calibrate(ctx, setup)
}

// AccountCounts: the training-node count at node level (the DP-SGD rate),
// nothing at edge level.
func (r Base) AccountCounts(level methods.Level) []string { return r.Cfg.AccountCounts(level) }
