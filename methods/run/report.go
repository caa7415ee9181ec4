package run

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
)

// Report checks the run's ledger against its plan and returns the privacy
// report: a run that released more, or otherwise, than it planned fails.
// A private run's report also states where the mechanisms' randomness came
// from (NoiseUse).
func Report(c *methods.Context, plan *dp.Plan) (*dp.Report, error) {
	rep, err := plan.Report(c.Ledger())
	if err != nil {
		return nil, fmt.Errorf("privacy: %w", err)
	}
	if c.Private() {
		rep.Uses = append(rep.Uses, NoiseUse(c, plan))
	}
	return rep, nil
}
