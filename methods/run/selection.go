package run

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// Model selection: which training epoch a run keeps. Choosing the epoch
// with the best validation accuracy reads validation labels after every
// epoch. At edge level (and without privacy) labels are public and that is
// free; at node level labels are private, so a run either keeps the last
// epoch (reads no label: the default) or selects privately with the
// exponential mechanism and accounts for it (--selection private
// --selection-epsilon E, one ε-DP event per trained module).

// resolveSelection checks --selection for a level and returns the mode the
// training loop uses.
func resolveSelection(level methods.Level, private bool, mode string, eps float64) (string, error) {
	node := level == methods.Node && private
	switch mode {
	case "", "auto":
		if node {
			return trainers.SelectLast, nil
		}
		return trainers.SelectBest, nil
	case trainers.SelectBest:
		if node {
			return "", fmt.Errorf("--selection best at node level would read the private validation labels after every epoch without accounting; " +
				"use last (the default) or private with --selection-epsilon")
		}
		return mode, nil
	case trainers.SelectLast:
		return mode, nil
	case trainers.SelectPrivate:
		if !node {
			return "", fmt.Errorf("--selection private is for node-level private runs: at %s level the labels are public and best-validation selection is free", level)
		}
		if !(eps > 0) || math.IsInf(eps, 1) {
			return "", fmt.Errorf("--selection private needs --selection-epsilon > 0 (the ε of each module's selection), got %g", eps)
		}
		if err := CheckEpsilon("--selection-epsilon", eps, ""); err != nil {
			return "", err
		}
		return mode, nil
	}
	return "", fmt.Errorf("--selection %q: want auto, best, last or private", mode)
}

// SelectionReleases returns the private model selections of a run that
// trains `modules` modules: one ε-DP exponential mechanism each under
// --selection private, none otherwise.
func SelectionReleases(c *methods.Context, modules int) []dp.Planned {
	if c.Selection != trainers.SelectPrivate {
		return nil
	}
	out := make([]dp.Planned, modules)
	for i := range out {
		out[i] = dp.Planned{Name: LedgerSelection, What: fmt.Sprintf("model selection %d/%d: exponential mechanism over epochs on correct validation counts (sensitivity 1), ε=%g", i+1, modules, c.SelectionEpsilon),
			Event: dp.PureEvent{Epsilon: c.SelectionEpsilon, Count: 1}}
	}
	return out
}

// NoteSelection adds the model-selection use of a run that trains `modules`
// modules to its plan (private selections are there already, as releases).
func NoteSelection(c *methods.Context, plan *dp.Plan, modules int) {
	if plan == nil || modules == 0 || c.Selection == trainers.SelectPrivate {
		return
	}
	u := dp.Use{Kind: "selection"}
	// Best-validation selection on a split without validation nodes keeps
	// the last epoch (trainers.FullBatch): the report states the epoch that
	// was kept. It runs where the split and the labels are public (edge
	// level, no privacy), so saying so reads nothing private.
	noVal := c.Graph != nil && len(c.Graph.Split.Val) == 0
	mode, err := selectionMode(c)
	if err != nil {
		mode = c.Selection // refused by the loop (loopSelection) before it trains
	}
	switch {
	case mode == trainers.SelectLast || noVal:
		u.What, u.Covered = fmt.Sprintf("model selection: the last epoch of each of %d module(s); no label is read during training", modules), "no private data read"
		if noVal && mode != trainers.SelectLast {
			u.What = fmt.Sprintf("model selection: the last epoch of each of %d module(s): the split has no validation nodes, so best-validation selection has nothing to choose on; no label is read during training", modules)
		}
	default:
		u.What = fmt.Sprintf("model selection: best validation accuracy over epochs, %d module(s)", modules)
		u.Covered = "public data (labels are public at this level)"
		if c.Level == methods.None || !c.Private() {
			u.Covered = "no privacy claimed"
		}
	}
	plan.Uses = append(plan.Uses, u)
}

// selectionMode is c's selection as the training loop runs it: the
// commands resolve --selection (TrainOptions), and a context built in code
// is resolved the same way here, so an unset selection at a private node
// level keeps the last epoch and an explicit best is refused (the outside
// audit of issue 38: a library context with Selection "" selected on the
// private validation labels, and the report called them public).
func selectionMode(c *methods.Context) (string, error) {
	return resolveSelection(c.Level, c.Private(), c.Selection, c.SelectionEpsilon)
}

// LedgerSelection is the ledger name of private model selections
// (SelectionReleases).
const LedgerSelection = "selection"

// loopSelection is the training loop's selection for a module trained with
// mechanism source src: a private selection records its release through
// the recorder of plan's selection, refused when plan declares none.
func loopSelection(c *methods.Context, plan *dp.Plan, src *dp.Source) (trainers.Selection, error) {
	mode, err := selectionMode(c)
	if err != nil {
		return trainers.Selection{}, err
	}
	s := trainers.Selection{Mode: mode}
	if s.Mode == trainers.SelectPrivate && src != nil {
		s.Epsilon, s.Src = c.SelectionEpsilon, src.Split("selection")
		var err error
		if s.Rec, err = c.Mechanism(plan, LedgerSelection, dp.PureEvent{Epsilon: c.SelectionEpsilon, Count: 1}); err != nil {
			return s, fmt.Errorf("private model selection: %w", err)
		}
	}
	return s, nil
}
