package run

import (
	"fmt"

	"github.com/dpgnn/dpgnn/methods"
)

// Counts are the sizes a privacy plan depends on when it is computed
// without a graph (`dpgnn account METHOD`): what a run would read from its
// dataset and split.
type Counts struct {
	TrainNodes int // N_train: the Poisson-sampled training nodes (DP-SGD)
	Classes    int // label classes
	N1         int // training rows of an objective (GCON)
	Dim        int // the dimension of a propagated encoding (GCON)
}

// Count flag names (`dpgnn account METHOD --train-nodes N ...`).
const (
	CountTrainNodes = "train-nodes"
	CountClasses    = "classes"
	CountN1         = "n1"
	CountDim        = "dim"
)

// Get returns the count named by a count flag.
func (c Counts) Get(name string) int {
	switch name {
	case CountTrainNodes:
		return c.TrainNodes
	case CountClasses:
		return c.Classes
	case CountN1:
		return c.N1
	case CountDim:
		return c.Dim
	}
	return 0
}

// Accountable is a method whose privacy plan `dpgnn account` computes from
// counts alone, the same plan a run on a graph with those counts makes.
type Accountable interface {
	methods.Method
	// AccountCounts names the counts its plan needs at a level.
	AccountCounts(level methods.Level) []string
	// AccountPlan is the plan of a run with these counts: calibrated to
	// ctx.Epsilon, or at the fixed ctx.Multiplier.
	AccountPlan(ctx *methods.Context, c Counts) (*Calibrated, error)
}

// CheckCounts checks that the counts a plan needs are positive.
func CheckCounts(c Counts, names []string) error {
	for _, n := range names {
		if c.Get(n) <= 0 {
			return fmt.Errorf("--%s is required and must be positive", n)
		}
	}
	return nil
}

// NodeCountPlan is Accountable for a node-level method whose plan needs only
// the training-node count: Counts names that count at node level and Plan
// checks the level and the count, then calls calibrate.
type NodeCountPlan struct {
	Method    string
	Calibrate func(ctx *methods.Context, trainNodes int) (*Calibrated, error)
}

// Counts is AccountCounts: the training-node count at node level.
func (p NodeCountPlan) Counts(level methods.Level) []string {
	if level == methods.Node {
		return []string{CountTrainNodes}
	}
	return nil
}

// Plan is AccountPlan.
func (p NodeCountPlan) Plan(ctx *methods.Context, c Counts) (*Calibrated, error) {
	if ctx.Level != methods.Node {
		return nil, fmt.Errorf("%s accounts at node level only", p.Method)
	}
	if err := CheckCounts(c, []string{CountTrainNodes}); err != nil {
		return nil, err
	}
	return p.Calibrate(ctx, c.TrainNodes)
}
