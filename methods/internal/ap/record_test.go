package ap

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
)

// recordGraph is a directed 4-cycle and a 4×2 embedding.
func recordGraph() (*graphs.CSR, []float64) {
	a := &graphs.CSR{Rows: 4, Cols: 4, Indptr: []int{0, 1, 2, 3, 4}, Indices: []int{1, 2, 3, 0}, Data: []float64{1, 1, 1, 1}}
	return a, []float64{1, 0, 0, 1, 1, 1, -1, 0}
}

// TestRecordNAPChangedStd: a NAP layer records each draw as the plan's
// GaussianEvent{z, 1} at the planned std z·sensitivity, and a draw made
// after its std was changed as the multiplier actually used (std over the
// sensitivity), so that the run's ledger no longer matches its plan: two
// draws at the planned std pass Plan.Check, one of them at half the std
// fails it (it would under-report if recorded as planned), one draw too
// many fails it, and a draw with the noise off (std 0) records nothing.
func TestRecordNAPChangedStd(t *testing.T) {
	const z, sens = 1.5, 2.0
	a, x := recordGraph()
	plan := &dp.Plan{Level: "node", Unit: "node", Epsilon: math.Inf(1), Delta: 1e-5, Accountant: "rdp", Multiplier: z,
		Releases: []dp.Planned{{Name: "nap", Event: dp.GaussianEvent{Multiplier: z, Count: 2}}}}
	for _, tc := range []struct {
		name string
		stds []float64 // the layer's std at each draw
		ok   bool
		last float64 // the multiplier of the last entry recorded
	}{
		{"as planned", []float64{z * sens, z * sens}, true, z},
		{"second draw at half the std", []float64{z * sens, z * sens / 2}, false, z / 2},
		{"first draw at twice the std", []float64{2 * z * sens, z * sens}, false, z},
		{"one draw too many", []float64{z * sens, z * sens, z * sens}, false, z},
		{"noise off for one run", []float64{z * sens, 0, z * sens}, true, z},
	} {
		ctx := &methods.Context{Level: methods.Node, Epsilon: 8}
		nap := layers.NewNAP("nap", a, z*sens, dp.NewSource(3))
		if err := RecordPlannedNAP(ctx, plan, nap, "nap", 2, z, sens); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, std := range tc.stds {
			nap.Noise.Std = std
			if _, err := RunNAP(nap, x, 4, 2); err != nil {
				t.Fatal(err)
			}
		}
		l := ctx.Ledger()
		if err := plan.Check(l); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
		e := l.Entries()
		if got := e[len(e)-1].Event.(dp.GaussianEvent); got.Multiplier != tc.last || got.Count != 1 {
			t.Errorf("%s: last entry %v, want multiplier %g", tc.name, got, tc.last)
		}
	}
}

// TestNAPRecorderRefusedBeforeDraw: a NAP layer whose plan does not
// declare its release name, or declares it at another multiplier, is
// refused when its recorder is built — before the layer draws anything —
// as is a query path's layer at another multiplier than the queries' cost;
// without privacy nothing is built or recorded.
func TestNAPRecorderRefusedBeforeDraw(t *testing.T) {
	const z, sens = 1.5, 1.0
	a, _ := recordGraph()
	plan := &dp.Plan{Level: "edge", Unit: "directed edge", Epsilon: 8, Delta: 1e-5, Accountant: "gdp", Multiplier: z,
		Releases: []dp.Planned{{Name: "nap", Event: dp.GaussianEvent{Multiplier: z, Count: 2}}}}
	for _, tc := range []struct {
		name, rel string
		z         float64
		runs      int
		want      string
	}{
		{"undeclared name", "nap.stage2", z, 2, "does not declare"},
		{"another multiplier", "nap", z / 2, 2, "multiplier=0.75"},
		{"one hop more than planned", "nap", z, 3, "the task makes 3"},
	} {
		ctx := &methods.Context{Level: methods.Edge, Epsilon: 8}
		nap := layers.NewNAP("nap", a, tc.z*sens, dp.NewSource(1))
		err := RecordPlannedNAP(ctx, plan, nap, tc.rel, tc.runs, tc.z, sens)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if nap.Noise.Rec != nil || nap.Noise.Draws != 0 || len(ctx.Ledger().Entries()) != 0 {
			t.Errorf("%s: a refused layer has a recorder, drew or recorded", tc.name)
		}
	}
	ctx := &methods.Context{Level: methods.Edge, Epsilon: 8}
	cost := methods.NewQueryCost(ctx, plan, "two NAP hops", dp.GaussianEvent{Multiplier: z, Count: 2})
	if err := RecordQueryNAP(cost, layers.NewNAP("q", a, z, dp.NewSource(1)), 2, z/2, sens); err == nil {
		t.Error("a query NAP at half the queries' multiplier was accepted")
	}
	if err := RecordQueryNAP(cost, layers.NewNAP("q", a, z, dp.NewSource(1)), 1, z, sens); err == nil {
		t.Error("a query NAP of one hop under a cost of two was accepted")
	}
	if err := RecordQueryNAP(cost, layers.NewNAP("q", a, z, dp.NewSource(1)), 2, z, sens); err != nil {
		t.Errorf("the query NAP of the cost's event was refused: %v", err)
	}
	none := &methods.Context{Level: methods.None, Epsilon: math.Inf(1)}
	nap := layers.NewNAP("nap", a, 0, dp.NewSource(1))
	if err := RecordPlannedNAP(none, &dp.Plan{Level: "none", Epsilon: math.Inf(1)}, nap, "nap", 2, 0, sens); err != nil || nap.Noise.Rec != nil {
		t.Errorf("without privacy: err %v, recorder %v", err, nap.Noise.Rec)
	}
}
