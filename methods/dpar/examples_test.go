package dpar

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// swapOutputs returns a with output rows 0 and 1 exchanged: output row 0
// then pools example 1's rows and output row 1 example 0's (the one-line
// mistake of building Π's batch by hand with the examples off by one).
func swapOutputs(a *graphs.CSR) *graphs.CSR {
	var src, dst []int
	var val []float64
	for k := 0; k < a.Rows; k++ {
		to := k
		switch k {
		case 0:
			to = 1
		case 1:
			to = 0
		}
		for q := a.Indptr[k]; q < a.Indptr[k+1]; q++ {
			src, dst, val = append(src, to), append(dst, a.Indices[q]), append(val, a.Value(q))
		}
	}
	return graphs.FromCOO(a.Rows, a.Cols, src, dst, val)
}

// TestTrainingPathRefusesMisgroupedExample: DPAR's DP-SGD is built over
// declared Examples (dpnn.Private). A step with the framework's own pooling
// matrix trains and is recorded by the construction, as the plan's step
// event under the plan's name; a fill that pools example 1's rows into
// example 0's output row (and back) is refused at the step, naming the Π
// batch product and both examples, and records nothing. The old path
// (dpnn.BuildSGD recording through a ledger closure) had no check and trained on
// the mis-grouped batch.
func TestTrainingPathRefusesMisgroupedExample(t *testing.T) {
	g := testGraph(t)
	m := newDPAR(t, "--batch-size", "100000", "--node-rate", "1", "--hidden", "8", "--dropout", "0")
	ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Delta: 1e-3, DeltaRule: methods.DeltaGiven, Seed: 1, Selection: trainers.SelectLast}
	p, err := m.calibrate(ctx, len(g.Split.Train))
	if err != nil {
		t.Fatal(err)
	}
	if p.rate != 1 {
		t.Fatalf("test set-up: rate %v, want 1 (every example in the batch)", p.rate)
	}
	gs := splitGraphs(g, 1, nil)
	pi, err := m.buildPi(gs, largestDegree(gs, m.cfg.Rows), APPRMechanism{Kind: APPRNone, K: min(m.cfg.TopK, g.N)}, p.maxRefs, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex := exampleRows(pi, gs.members)
	if ex.Indptr[1] == 0 || ex.Indptr[2] == ex.Indptr[1] {
		t.Fatal("test set-up: the first two examples need rows")
	}
	capEx := p.capacity(gs.n)
	for _, tc := range []struct {
		name  string
		bad   bool
		wants []string
	}{
		{"framework's pool", false, nil},
		{"examples 0 and 1 swapped", true, []string{"SpMM(Pi.batch)", "example " + itoa(gs.members[0]), "example " + itoa(gs.members[1]), "output row 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := m.buildNet(ctx.Seed, g.X, g.NumClasses, capEx, capEx*maxRow(ex), true)
			if err != nil {
				t.Fatal(err)
			}
			ledger := dp.NewLedger()
			sgd, fill, err := m.private(n, gs, ex, g.Labels, p, ledger, dp.NewSource(3))
			if err != nil {
				t.Fatal(err)
			}
			if sgd.Steps != p.steps {
				t.Fatalf("construction takes %d steps, the plan %d", sgd.Steps, p.steps)
			}
			f := fill
			if tc.bad {
				f = func(b *dpnn.Batch) error {
					if err := fill(b); err != nil {
						return err
					}
					return n.agg.Set(swapOutputs(b.Pool))
				}
			}
			_, _, err = sgd.StepExamples(f)
			if !tc.bad {
				if err != nil {
					t.Fatal(err)
				}
				e := ledger.Entries()
				if len(e) != 1 || e[0].Name != ledgerSGD || e[0].Event.String() != p.sgd.String() {
					t.Fatalf("ledger after one step: %v, want one %s step %v", e, ledgerSGD, p.sgd)
				}
				return
			}
			if err == nil {
				t.Fatal("a mis-grouped Π batch trained")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if e := ledger.Entries(); len(e) != 0 {
				t.Fatalf("a refused step recorded %v", e)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestAPPRRecorders: every DP-APPR variant's per-row recorders are built
// from the plan — M rows of them add up to exactly the plan's ledgerAPPR
// releases — and refused, before any row is drawn, under a plan that
// declares the rows under another name or at another noise; a run whose
// --rows exceeds the node ids it draws sources from is refused before it
// releases anything (the plan accounts --rows rows, the run would release
// fewer).
func TestAPPRRecorders(t *testing.T) {
	g := testGraph(t)
	for _, variant := range []string{"gm", "em0", "em1"} {
		m := newDPAR(t, append([]string{"--variant", variant}, small...)...)
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Delta: 1e-3, DeltaRule: methods.DeltaGiven, Seed: 1, Selection: trainers.SelectLast}
		p, err := m.calibrate(ctx, len(g.Split.Train))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := m.apprRecorders(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		for range m.cfg.Rows {
			for _, r := range recs {
				r.Record()
			}
		}
		apprOnly := *p.Plan
		apprOnly.Releases = nil
		for _, r := range p.Plan.Releases {
			if r.Name == ledgerAPPR {
				apprOnly.Releases = append(apprOnly.Releases, r)
			}
		}
		if err := apprOnly.Check(ctx.Ledger()); err != nil {
			t.Errorf("%s: %d rows recorded against the plan's: %v", variant, m.cfg.Rows, err)
		}
		for name, edit := range map[string]func(*dp.Planned){
			"renamed": func(r *dp.Planned) { r.Name = "dpar.appr.other" },
			"other noise": func(r *dp.Planned) {
				switch e := r.Event.(type) {
				case dp.GaussianEvent:
					e.Multiplier *= 2
					r.Event = e
				case dp.PureEvent:
					e.Epsilon /= 2
					r.Event = e
				}
			},
		} {
			bad := *p
			plan := *p.Plan
			plan.Releases = slices.Clone(p.Plan.Releases)
			for i := range plan.Releases {
				if plan.Releases[i].Name == ledgerAPPR {
					edit(&plan.Releases[i])
				}
			}
			cal := *p.Calibrated
			cal.Plan = &plan
			bad.Calibrated = &cal
			c := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8}
			if _, err := m.apprRecorders(c, &bad); err == nil || !strings.Contains(err.Error(), ledgerAPPR) {
				t.Errorf("%s, %s: err = %v", variant, name, err)
			}
			if _, err := m.train(c, &bad); err == nil || len(c.Ledger().Entries()) != 0 {
				t.Errorf("%s, %s: the run trained or recorded (err %v)", variant, name, err)
			}
		}
	}
	m := newDPAR(t, append(small, "--rows", fmt.Sprint(g.N+1))...)
	ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 8, Delta: 1e-3, DeltaRule: methods.DeltaGiven, Seed: 1, Selection: trainers.SelectLast}
	p, err := m.calibrate(ctx, len(g.Split.Train))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.train(ctx, p); err == nil || !strings.Contains(err.Error(), "--rows") || len(ctx.Ledger().Entries()) != 0 {
		t.Errorf("--rows N+1: err = %v, %d releases recorded", err, len(ctx.Ledger().Entries()))
	}
}
