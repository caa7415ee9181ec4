package methods

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
)

// TestNewContextLedgerShared: a context from NewContext has its ledger
// before anything is recorded, so a copy made at once (a fold's, an
// encoder's) records into the run's ledger; Mechanism builds recorders
// on it and refuses a release the plan does not declare.
func TestNewContextLedgerShared(t *testing.T) {
	ctx := NewContext(Context{Level: Node, Epsilon: 8})
	cp := *ctx
	plan := &dp.Plan{Level: "node", Epsilon: math.Inf(1), Accountant: "rdp",
		Releases: []dp.Planned{{Name: "nap", Event: dp.GaussianEvent{Multiplier: 2, Count: 2}}}}
	for _, c := range []*Context{ctx, &cp} {
		r, err := c.Mechanism(plan, "nap", dp.GaussianEvent{Multiplier: 2, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		r.Record()
	}
	if err := plan.Check(ctx.Ledger()); err != nil || cp.Ledger() != ctx.Ledger() {
		t.Errorf("the copy's release is not in the run's ledger: %v", err)
	}
	if _, err := ctx.Mechanism(plan, "pcmp", dp.GaussianEvent{Multiplier: 2, Count: 1}); err == nil || !strings.Contains(err.Error(), `"pcmp"`) {
		t.Errorf("an undeclared release: err = %v", err)
	}
}
