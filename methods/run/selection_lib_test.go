package run

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// TestLibrarySelectionResolved (the outside audit of issue 38): a context
// built in code rather than by the commands, with Selection unset, at a
// private node level used to select the best validation epoch on the
// private labels while the report called them public. Now the loop keeps
// the last epoch and the report says no label is read; an explicit best is
// refused there; without privacy, or at edge level, unset is still best.
func TestLibrarySelectionResolved(t *testing.T) {
	g := &graphs.Graph{Split: graphs.Split{Val: []int{1}}}
	for _, tc := range []struct {
		level          methods.Level
		eps            float64
		sel, mode, use string
		refused        bool
	}{
		{methods.Node, 8, "", trainers.SelectLast, "no private data read", false},
		{methods.Node, 8, "auto", trainers.SelectLast, "no private data read", false},
		{methods.Node, 8, trainers.SelectBest, "", "", true},
		{methods.Edge, 8, "", trainers.SelectBest, "public data", false},
		{methods.None, math.Inf(1), "", trainers.SelectBest, "no privacy claimed", false},
	} {
		c := &methods.Context{Graph: g, Level: tc.level, Epsilon: tc.eps, Selection: tc.sel}
		s, err := loopSelection(c, &dp.Plan{}, nil)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "--selection best at node level") {
				t.Errorf("%s %q: got %v, want the refusal of best at node level", tc.level, tc.sel, err)
			}
			continue
		}
		if err != nil || s.Mode != tc.mode {
			t.Errorf("%s %q: mode %q (%v), want %q", tc.level, tc.sel, s.Mode, err, tc.mode)
		}
		plan := &dp.Plan{}
		NoteSelection(c, plan, 1)
		if len(plan.Uses) != 1 || !strings.HasPrefix(plan.Uses[0].Covered, tc.use) {
			t.Errorf("%s %q: selection use %+v, want covered %q…", tc.level, tc.sel, plan.Uses, tc.use)
		}
	}
}
