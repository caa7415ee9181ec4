package caribou

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
)

func newCARIBOU(t *testing.T, args ...string) *CARIBOU {
	t.Helper()
	m := New(DefaultConfig())
	methodtest.Configure(t, m, args...)
	return m
}

func testGraph(t *testing.T) *graphs.Graph { return methodtest.Graph(t, "ratio:0.5:0.25") }

// TestCalibrationMatchesCNIVectors: at edge level the plan's multiplier is
// σ_mult = √g/μ* — CARIBOU's calibration (Thm 6 with the exact GDP
// conversion, as the authors calibrated through autodp; Thm 11's RDP route
// with rdp-standard). Reference values: σ_mult for (ε, δ, K, C_L) =
// (1, 1e-5, 10, 0.9) is 11.300631 (GDP) and 14.844501 (RDP), for
// (4, 1e-6, 15, 0.8) 3.456716 and 4.064038; with C_L = 1 (no
// contraction) the linear composition's 11.797293 at K = 10.
func TestCalibrationMatchesCNIVectors(t *testing.T) {
	for _, tc := range []struct {
		eps, delta float64
		args       []string
		want       float64
	}{
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "0.9"}, 11.300631},
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "0.9", "--accountant", "rdp-standard"}, 14.844501},
		{4, 1e-6, []string{"--hops", "15", "--lipschitz", "0.8"}, 3.456716},
		{4, 1e-6, []string{"--hops", "15", "--lipschitz", "0.8", "--accountant", "rdp-standard"}, 4.064038},
		{1, 1e-5, []string{"--hops", "10", "--lipschitz", "1"}, 11.797293},
	} {
		m := newCARIBOU(t, tc.args...)
		ctx := &methods.Context{Level: methods.Edge, Epsilon: tc.eps, Delta: tc.delta}
		c, err := m.AccountPlan(ctx, methods.Counts{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.Multiplier-tc.want) > 2e-5*tc.want {
			t.Errorf("%v ε=%g: σ_mult %.6f, want %.6f", tc.args, tc.eps, c.Multiplier, tc.want)
		}
		wantStd := c.Multiplier * layers.EdgeSensitivity(m.cfg.Lipschitz, m.cfg.Alpha1, 0)
		if got := c.Plan.Noise["pcmp_std"]; math.Abs(got-wantStd) > 1e-12*wantStd {
			t.Errorf("%v: pcmp_std %v, want σ_mult·Δ_e = %v", tc.args, got, wantStd)
		}
	}
}

// TestRunsWithinPlan: whole runs at edge and node level make exactly the
// planned releases (one PCMP, at node level the two DP-SGD runs), their
// reports stay within ε, and one PCMP release more than planned fails the
// report.
func TestRunsWithinPlan(t *testing.T) {
	for _, level := range []methods.Level{methods.Edge, methods.Node} {
		m := newCARIBOU(t, "--hops", "4", "--epochs", "3", "--encoder-epochs", "3", "--batch-size", "32", "--max-degree", "40")
		ctx := &methods.Context{Graph: testGraph(t), Level: level, Epsilon: 4, Delta: 1e-5, Seed: 1}
		out, err := m.Run(ctx)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		if out.Privacy == nil || out.Privacy.Epsilon == nil || *out.Privacy.Epsilon > 4+1e-9 {
			t.Fatalf("%s: report %+v", level, out.Privacy)
		}
		s, err := m.setupGraph(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cal, err := m.calibrate(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.pcmp(ctx, s, cal.Multiplier, make([]float64, ctx.Graph.N), 1, dp.NewSource(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := ctx.Report(cal.Plan); err == nil || !strings.Contains(err.Error(), `"pcmp"`) {
			t.Errorf("%s: one PCMP release more than planned: err = %v", level, err)
		}
	}
}

// TestPublicDegreeBounds: an input outside the public bounds is refused
// before anything is released, and the bounds enter the report.
func TestPublicDegreeBounds(t *testing.T) {
	g := testGraph(t)
	hi := 0
	for _, d := range graphs.Symmetrize(g.Adj).Degrees() {
		hi = max(hi, d)
	}
	m := newCARIBOU(t, "--max-degree", "3")
	_, err := m.Run(&methods.Context{Graph: g, Level: methods.Node, Epsilon: 4, Delta: 1e-5, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "--max-degree 3") {
		t.Fatalf("degree %d above --max-degree 3: err = %v", hi, err)
	}
	m = newCARIBOU(t, "--min-degree", "50", "--max-degree", "100")
	if _, err := m.Run(&methods.Context{Graph: g, Level: methods.Edge, Epsilon: 4, Delta: 1e-5, Seed: 1}); err == nil || !strings.Contains(err.Error(), "--min-degree 50") {
		t.Fatalf("--min-degree 50: err = %v", err)
	}
	m = newCARIBOU(t, "--max-degree", "3", "--rows", "normalize")
	if _, err := m.AccountPlan(&methods.Context{Level: methods.Edge, Epsilon: 1, Delta: 1e-5}, methods.Counts{}); err == nil {
		t.Fatal("--rows normalize with privacy: no error")
	}
}

// TestNodeSensitivityUsesPublicBounds: the node-level plan's sensitivity is
// the strict bound at the public D_max (and the paper's with --sensitivity
// paper, with a note saying it is not proven).
func TestNodeSensitivityUsesPublicBounds(t *testing.T) {
	ctx := &methods.Context{Level: methods.Node, Epsilon: 8, Delta: 1e-5}
	m := newCARIBOU(t, "--max-degree", "168", "--lipschitz", "0.9", "--alpha1", "0.9", "--beta", "2")
	c, err := m.AccountPlan(ctx, methods.Counts{TrainNodes: 1895})
	if err != nil {
		t.Fatal(err)
	}
	if want := layers.NodeSensitivity(0.9, 0.9, 2, 0, 168); c.Plan.Noise["sensitivity"] != want {
		t.Errorf("sensitivity %v, want %v", c.Plan.Noise["sensitivity"], want)
	}
	m = newCARIBOU(t, "--max-degree", "168", "--lipschitz", "0.9", "--alpha1", "0.9", "--beta", "2", "--sensitivity", "paper")
	c, err = m.AccountPlan(ctx, methods.Counts{TrainNodes: 1895})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Plan.Notes, " "), "not a proven guarantee") {
		t.Errorf("--sensitivity paper: notes %q do not say the bound is unproven", c.Plan.Notes)
	}
}
