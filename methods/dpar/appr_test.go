package dpar

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/internal/testutil"

	"github.com/dpgnn/dpgnn/graphs"
	"gonum.org/v1/gonum/stat/distuv"
)

// dparGraph is DPAR's 8-node ISTA test graph without the edges of node
// drop (−1: none); node drop stays as an isolated node, so its APPR entry
// is 0, as the neighbouring graph's missing entry is.
func dparGraph(drop int) *graphs.CSR {
	edges := [][2]int{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}, {1, 6}, {6, 7}}
	var src, dst []int
	for _, e := range edges {
		if e[0] != drop && e[1] != drop {
			src, dst = append(src, e[0], e[1]), append(dst, e[1], e[0])
		}
	}
	return graphs.FromCOO(8, 8, src, dst, nil)
}

func istaDense(t *testing.T, a *graphs.CSR, s int) []float64 {
	t.Helper()
	p, _, err := ISTAPPR(a, s, DPARISTAParams())
	if err != nil {
		t.Fatal(err)
	}
	return p.Dense()
}

func l2(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// TestAPPRClipping checks DPAR's clipping invariants on the APPR vectors of
// G and of every neighbour G' (one node's edges removed): EM's element clip
// keeps 0 ≤ p̂_j ≤ C2 and |p̂_j − p̂'_j| ≤ C2; GM's ℓ2 clip keeps ‖p̂‖₂ ≤ C1
// and ‖p̂ − p̂'‖₂ ≤ √2·C1.
func TestAPPRClipping(t *testing.T) {
	const c2, c1 = 0.05, 0.3
	for s := 0; s < 8; s++ {
		p := istaDense(t, dparGraph(-1), s)
		u, x := clipElements(p, c2), clipL2(p, c1)
		clipped := false
		for j := range u {
			if u[j] < 0 || u[j] > c2 {
				t.Fatalf("source %d: p̂[%d] = %g outside [0, C2]", s, j, u[j])
			}
			clipped = clipped || u[j] < p[j]
		}
		if !clipped {
			t.Errorf("source %d: C2 = %g clips nothing; the test is vacuous", s, c2)
		}
		if l2(x) > c1*(1+1e-15) {
			t.Errorf("source %d: ‖p̂‖₂ = %g > C1", s, l2(x))
		}
		for drop := 0; drop < 8; drop++ {
			if drop == s {
				continue
			}
			q := istaDense(t, dparGraph(drop), s)
			if q[drop] != 0 {
				t.Fatalf("removed node %d has APPR %g", drop, q[drop])
			}
			v, y := clipElements(q, c2), clipL2(q, c1)
			for j := range u {
				if math.Abs(u[j]-v[j]) > c2 {
					t.Errorf("source %d, drop %d: |p̂_%d − p̂'_%d| = %g > C2", s, drop, j, j, math.Abs(u[j]-v[j]))
				}
			}
			diff := make([]float64, len(x))
			for j := range x {
				diff[j] = x[j] - y[j]
			}
			if l2(diff) > math.Sqrt2*c1*(1+1e-15) {
				t.Errorf("source %d, drop %d: ‖p̂ − p̂'‖₂ = %g > √2·C1", s, drop, l2(diff))
			}
		}
	}
}

// TestAPPRGaussianSensitivity is DPAR's GM pitfall: for non-negative
// vectors clipped to ℓ2 ≤ C1 the distance can exceed the paper's C1 (up to
// √2·C1), and the strict events use √2·C1.
func TestAPPRGaussianSensitivity(t *testing.T) {
	const c1 = 0.01
	a, b := clipL2([]float64{c1, 0}, c1), clipL2([]float64{0.4 * c1, 0.9165 * c1}, c1)
	d := l2([]float64{a[0] - b[0], a[1] - b[1]})
	assertAbs(t, "example distance / C1", d/c1, 1.0954, 5e-5)
	if d <= c1 {
		t.Error("the example does not exceed C1")
	}
	src := dp.NewSource(3)
	for trial := 0; trial < 2000; trial++ {
		n := 1 + trial%7
		x, y := make([]float64, n), make([]float64, n)
		for j := range x {
			x[j], y[j] = 2*c1*src.Uniform(), 2*c1*src.Uniform()
			if src.Uniform() < 0.3 {
				x[j] = 0
			}
		}
		cx, cy := clipL2(x, c1), clipL2(y, c1)
		for j := range cx {
			cx[j] -= cy[j]
		}
		if l2(cx) > math.Sqrt2*c1*(1+1e-15) {
			t.Fatalf("‖p̂ − p̂'‖₂ = %g > √2·C1 for %v, %v", l2(cx), x, y)
		}
	}
	m := APPRMechanism{Kind: APPRGM, K: 2, Clip: c1, GaussianStd: 0.0067}
	ev, err := m.Events(70)
	if err != nil {
		t.Fatal(err)
	}
	g := ev[0].(dp.GaussianEvent)
	assertRel(t, "strict GM multiplier", g.Multiplier, 0.0067/(math.Sqrt2*c1), 1e-15)
	if g.Count != 70 {
		t.Errorf("strict GM count %d, want 70", g.Count)
	}
}

// TestAPPRReleaseLaws checks the row mechanisms' laws with fixed seeds:
// EM0's K = 1 selection over all N coordinates (zeros included) follows
// the exponential mechanism exp(p̂_j/β) on the clipped values (chi-square);
// EM1's reported values are the clipped values plus Laplace(b) and GM's the
// ℓ2-clipped values plus N(0, σ²) (Kolmogorov–Smirnov).
func TestAPPRReleaseLaws(t *testing.T) {
	const c2 = 0.001
	p := []float64{0.3, 0.0012, 0.0006, 0.0002, 0, 0}
	u := clipElements(p, c2)
	m := APPRMechanism{Kind: APPREM0, K: 1, Clip: c2, GumbelScale: c2 / 2} // paper ε = 2
	want := testutil.Softmax(u, m.GumbelScale)
	src := dp.NewSource(71)
	counts := make([]int, len(p))
	for n := 0; n < statN; n++ {
		row, err := m.Release(p, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(row.Indices) != 1 || row.Values[0] != 1 {
			t.Fatalf("EM0 row %+v, want one entry 1/K = 1", row)
		}
		counts[row.Indices[0]]++
	}
	if counts[4]+counts[5] == 0 {
		t.Error("zero-APPR candidates were never selected")
	}
	if pv := testutil.ChiSquarePValue(counts, want); pv < statAlpha {
		t.Errorf("EM0 selections %v vs exponential mechanism %v: p = %g", counts, want, pv)
	}

	// All-N selection (K = N) exposes the value noise.
	em1 := APPRMechanism{Kind: APPREM1, K: len(p), Clip: c2, GumbelScale: c2, LaplaceScale: 3e-4}
	gm := APPRMechanism{Kind: APPRGM, K: len(p), Clip: 0.1, GaussianStd: 0.05}
	x := clipL2(p, gm.Clip)
	var lapRes, gaussRes []float64
	for n := 0; n < statN/len(p); n++ {
		r1, err := em1.Release(p, src)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := gm.Release(p, src)
		if err != nil {
			t.Fatal(err)
		}
		for k, j := range r1.Indices {
			lapRes = append(lapRes, r1.Values[k]-u[j])
			gaussRes = append(gaussRes, r2.Values[k]-x[r2.Indices[k]])
		}
	}
	if _, pv := testutil.KSPValue(lapRes, distuv.Laplace{Mu: 0, Scale: em1.LaplaceScale}.CDF); pv < statAlpha {
		t.Errorf("EM1 values − clipped values are not Laplace(b): p = %g", pv)
	}
	if _, pv := testutil.KSPValue(gaussRes, distuv.Normal{Mu: 0, Sigma: gm.GaussianStd}.CDF); pv < statAlpha {
		t.Errorf("GM values − clipped values are not N(0, σ²): p = %g", pv)
	}
}

// TestAPPRReleaseRows checks row shapes, determinism and the non-private
// top-K.
func TestAPPRReleaseRows(t *testing.T) {
	p := []float64{0.1, 0, 0.5, 0.2, 0, 0.2}
	row, err := APPRMechanism{Kind: APPRNone, K: 3}.Release(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(row.Indices, []int{2, 3, 5}) || !slices.Equal(row.Values, []float64{0.5, 0.2, 0.2}) {
		t.Errorf("none top-3 = %+v", row)
	}
	row, _ = APPRMechanism{Kind: APPRNone, K: 6}.Release(p, nil)
	if len(row.Indices) != 4 {
		t.Errorf("none keeps %d entries, want the 4 positive ones", len(row.Indices))
	}
	for _, m := range []APPRMechanism{
		{Kind: APPREM0, K: 2, Clip: 0.3, GumbelScale: 0.1},
		{Kind: APPREM1, K: 2, Clip: 0.3, GumbelScale: 0.1, LaplaceScale: 0.2},
		{Kind: APPRGM, K: 2, Clip: 0.3, GaussianStd: 0.1},
	} {
		a, err := m.Release(p, dp.NewSource(5))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := m.Release(p, dp.NewSource(5))
		if !slices.Equal(a.Indices, b.Indices) || !slices.Equal(a.Values, b.Values) {
			t.Errorf("%v: not reproducible", m.Kind)
		}
		if len(a.Indices) != 2 || a.Len != len(p) || a.Indices[0] >= a.Indices[1] {
			t.Errorf("%v: row %+v, want 2 sorted entries", m.Kind, a)
		}
	}
}

// TestAPPRMatrixAndPi runs the DP-APPR matrix on DPAR's test graph,
// assembles Π and clips its columns (DPAR Alg. 2 lines 2–4).
func TestAPPRMatrixAndPi(t *testing.T) {
	a := dparGraph(-1)
	sources := []int{5, 0, 6}
	ista := DPARISTAParams()
	none, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, sources, ista, APPRMechanism{Kind: APPRNone, K: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// EM0 with negligible noise and no clipping selects the same top-2.
	em, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, sources, ista, APPRMechanism{Kind: APPREM0, K: 2, Clip: 1, GumbelScale: 1e-12}, dp.NewSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(none.Indices, em.Indices) || !slices.Equal(none.Indptr, []int{0, 2, 4, 6}) {
		t.Errorf("EM0 without noise selects %v, top-2 is %v", em.Indices, none.Indices)
	}
	for i, s := range sources {
		want := istaDense(t, a, s)
		for k := none.Indptr[i]; k < none.Indptr[i+1]; k++ {
			if none.Data[k] != want[none.Indices[k]] {
				t.Errorf("row %d: value %g, ISTA %g", i, none.Data[k], want[none.Indices[k]])
			}
		}
	}
	gm := APPRMechanism{Kind: APPRGM, K: 3, Clip: 0.01, GaussianStd: 0.02}
	g1, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, sources, ista, gm, dp.NewSource(9))
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := APPRMatrix(a, allIDs(a.Rows), a.Rows, sources, ista, gm, dp.NewSource(9))
	if !slices.Equal(g1.Indices, g2.Indices) || !slices.Equal(g1.Data, g2.Data) {
		t.Error("APPRMatrix is not reproducible for a seed")
	}

	pi, err := AssemblePi(g1, sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := pi.Validate(); err != nil || pi.Rows != 8 || pi.Cols != 8 {
		t.Fatalf("Π %d×%d: %v", pi.Rows, pi.Cols, err)
	}
	for v := 0; v < 8; v++ {
		cols, vals := pi.Row(v)
		if i := slices.Index(sources, v); i >= 0 {
			if !slices.Equal(cols, g1.Indices[g1.Indptr[i]:g1.Indptr[i+1]]) || !slices.Equal(vals, g1.Data[g1.Indptr[i]:g1.Indptr[i+1]]) {
				t.Errorf("Π row %d is not DP-APPR row %d", v, i)
			}
		} else if !slices.Equal(cols, []int{v}) || vals[0] != 1 {
			t.Errorf("Π row %d = %v %v, want the identity row", v, cols, vals)
		}
	}

	// Column clipping, with negative weights as GM and EM1 noise makes them.
	pi = pi.Clone()
	for k := range pi.Data {
		if k%3 == 1 {
			pi.Data[k] = -3 * pi.Data[k]
		}
	}
	colL1 := func(m *graphs.CSR) []float64 {
		s := make([]float64, m.Cols)
		for k, j := range m.Indices {
			s[j] += math.Abs(m.Value(k))
		}
		return s
	}
	before := colL1(pi)
	for _, tau := range []float64{1, 0.5} {
		clipped, err := ClipColumns(pi, tau, ColumnClip)
		if err != nil {
			t.Fatal(err)
		}
		norm, err := ClipColumns(pi, tau, ColumnNormalize)
		if err != nil {
			t.Fatal(err)
		}
		for j, s := range colL1(clipped) {
			if s > tau*(1+1e-12) {
				t.Errorf("clip τ=%g: ‖Π_:,%d‖₁ = %g", tau, j, s)
			}
			if before[j] <= tau && s != before[j] {
				t.Errorf("clip τ=%g: column %d within τ changed from %g to %g", tau, j, before[j], s)
			}
		}
		for j, s := range colL1(norm) {
			if before[j] != 0 && math.Abs(s-tau) > 1e-12 {
				t.Errorf("normalize τ=%g: ‖Π_:,%d‖₁ = %.15g, want τ", tau, j, s)
			}
		}
	}
}

// TestAPPRPaperCost checks the paper's accounting against DPAR's vectors:
// Corollary 1 per row (paper form, β = C2/ε, δ = 1e-4), and the code
// defaults (GM: δ = 1e-4, C1 = 0.01, σ = 0.0067; EM: K = 4, code ε_c = 1.3,
// option II with ε₂ = ε₁) composed over M = 70 rows and amplified linearly
// with q' = 0.09; both defaults are flagged as outside the bounds' range.
func TestAPPRPaperCost(t *testing.T) {
	const m, c2 = 70, 0.001
	deltaG := 2 * m * 1e-4
	for _, tc := range []struct {
		k    int
		epsC float64
		want float64
	}{{2, 0.1, 0.2}, {4, 1.3, 5.2}, {32, 0.1, 2.5877502068814504}} {
		mech := APPRMechanism{Kind: APPREM0, K: tc.k, Clip: c2, GumbelScale: c2 / (tc.epsC / 2)}
		c, err := mech.Cost(m, deltaG, APPRPaper)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "Corollary 1 per-row ε", c.RowEpsilon, tc.want, 1e-12)
		assertRel(t, "per-row δ", c.RowDelta, 1e-4, 1e-14)
		assertRel(t, "paper Gumbel ε", mech.GumbelEpsilon(), tc.epsC/2, 1e-14)
	}

	gm := APPRMechanism{Kind: APPRGM, K: 4, Clip: 0.01, GaussianStd: 0.0067}
	em1 := APPRMechanism{Kind: APPREM1, K: 4, Clip: c2, GumbelScale: 2 * c2 / 1.3, LaplaceScale: 4 * c2 / 5.2}
	em0 := APPRMechanism{Kind: APPREM0, K: 4, Clip: c2, GumbelScale: 2 * c2 / 1.3}
	for _, tc := range []struct {
		name               string
		mech               APPRMechanism
		row, total, amp    float64
		rowTol, totTol     float64
		classicalWarning   bool
		compositionWarning bool
	}{
		{"GM", gm, 6.4830034386548805, 344.9684752897998, 31.0472, 1e-14, 1e-11, true, true},
		{"EM1", em1, 10.4, 566.8206, 51.0139, 1e-14, 2e-7, false, true}, // 4 decimals
		{"EM0", em0, 5.2, 273.5043, 24.6154, 1e-14, 2e-7, false, true},
	} {
		c, err := tc.mech.Cost(m, deltaG, APPRPaper)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, tc.name+" per-row ε", c.RowEpsilon, tc.row, tc.rowTol)
		assertRel(t, tc.name+" ε_g", c.Epsilon, tc.total, tc.totTol)
		e, d, err := AmplifyLinear.Amplified(c.Epsilon, c.Delta, 0.09)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, tc.name+" ε_g·q'", e, tc.amp, 5e-5)
		assertRel(t, tc.name+" δ_g·q'", d, 0.00126, 1e-12)
		warns := strings.Join(c.Warnings, "\n")
		if strings.Contains(warns, "classical Gaussian") != tc.classicalWarning ||
			strings.Contains(warns, "optimal composition") != tc.compositionWarning {
			t.Errorf("%s warnings %q", tc.name, c.Warnings)
		}
		if c.Accountant != "kairouz-simplified" || c.Accounting != APPRPaper {
			t.Errorf("%s: accountant %q, accounting %v", tc.name, c.Accountant, c.Accounting)
		}
	}
	// The per-row GM ε 6.48 over 70 rows composes optimally to ≈ 453.8 at
	// δ = 0.014 (basic composition: 453.81), not 345.
	if d := optimalCompositionDelta(6.4830034386548805, 1e-4, m, 453.7); d <= deltaG {
		t.Errorf("optimal composition δ at ε = 453.7 is %g, want > %g", d, deltaG)
	}
	if d := optimalCompositionDelta(6.4830034386548805, 1e-4, m, 453.9); d > deltaG {
		t.Errorf("optimal composition δ at ε = 453.9 is %g, want ≤ %g", d, deltaG)
	}
}

// TestOptimalCompositionDelta checks the exact optimal composition against
// its closed cases: k = 1 (δ₀ above ε₀, 1 − (1−δ₀)(1 − (1 − e^{ε−ε₀})·
// e^{ε₀}/(1+e^{ε₀})) below), and the grid formula of Kairouz et al. at
// ε = (k−2i)ε₀.
func TestOptimalCompositionDelta(t *testing.T) {
	assertRel(t, "k=1 at ε₀", optimalCompositionDelta(0.7, 1e-3, 1, 0.7), 1e-3, 1e-12)
	e0, d0 := 0.7, 1e-3
	want := 1 - (1-d0)*(1-(1-math.Exp(0.2-e0))*math.Exp(e0)/(1+math.Exp(e0)))
	assertRel(t, "k=1 below ε₀", optimalCompositionDelta(e0, d0, 1, 0.2), want, 1e-12)
	// k = 5, i = 2: ε = ε₀, δ_i = Σ_{l<2} C(5,l)(e^{(5−l)ε₀} − e^{(1+l)ε₀})/(1+e^{ε₀})^5.
	k, i := 5, 2
	var di float64
	for l := 0; l < i; l++ {
		c := []float64{1, 5}[l]
		di += c * (math.Exp(float64(k-l)*e0) - math.Exp(float64(k-2*i+l)*e0)) / math.Pow(1+math.Exp(e0), float64(k))
	}
	want = 1 - math.Pow(1-d0, float64(k))*(1-di)
	assertRel(t, "grid point", optimalCompositionDelta(e0, d0, k, float64(k-2*i)*e0), want, 1e-12)
}

// TestAPPRPaperCalibration runs DPAR's budget-to-noise chain for the
// DP-APPR stage (linear amplification, r = 0.5, δ_total = 2e-3 split
// evenly, M = 70, K = 2, C1 = 0.01, C2 = 0.001, q' = 0.09) and checks that
// the calibrated mechanisms cost what they were given.
func TestAPPRPaperCalibration(t *testing.T) {
	for _, tc := range []struct {
		epsTotal, epsPr, epsV, sigma, gumbelEps, beta float64
	}{
		{1, 5.555556, 0.133123, 0.330259, 0.033281, 3.004746e-2},
		{8, 44.444444, 0.922226, 0.047673, 0.230557, 4.337332e-3},
	} {
		epsPr, deltaPr, err := AmplifyLinear.Inner(0.5*tc.epsTotal, 1e-3, 0.09)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "ε_pr", epsPr, tc.epsPr, 5e-7)
		assertRel(t, "δ_pr", deltaPr, 1.111111e-2, 1e-6)
		b := APPRBudget{Rows: 70, Epsilon: epsPr, Delta: deltaPr}
		gm, err := CalibrateAPPR(APPRGM, 2, 0.01, b)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "σ_GM", gm.GaussianStd, tc.sigma, 5e-7)
		em0, err := CalibrateAPPR(APPREM0, 2, 0.001, b)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "EM-I Gumbel ε (paper form)", em0.GumbelEpsilon(), tc.gumbelEps, 5e-7)
		assertRel(t, "EM-I β", em0.GumbelScale, tc.beta, 2e-7)
		em1, err := CalibrateAPPR(APPREM1, 2, 0.001, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []APPRMechanism{gm, em0, em1} {
			c, err := m.Cost(70, deltaPr, APPRPaper)
			if err != nil {
				t.Fatal(err)
			}
			assertAbs(t, m.Kind.String()+" per-row ε", c.RowEpsilon, tc.epsV, 5e-7)
			assertRel(t, m.Kind.String()+" δ_v", c.RowDelta, 7.936508e-5, 1e-6)
			if c.Epsilon > epsPr*(1+1e-9) || c.Epsilon < epsPr*(1-1e-6) {
				t.Errorf("%v: calibrated cost %v for budget %v", m.Kind, c.Epsilon, epsPr)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("%v: warnings at Table 1 budgets: %q", m.Kind, c.Warnings)
			}
		}
		// EM1 with ε₂ = ε₁: the Laplace gets half the per-row budget.
		assertRel(t, "EM1 ε₂", 2*0.001/em1.LaplaceScale, tc.epsV/2, 5e-6)
	}
}

// TestAPPRStrict checks the strict accounting: GM rows are Gaussian
// mechanisms with sensitivity √2·C1 composed exactly (GDP), EM rows pure
// events on the RDP accountant; calibration round-trips.
func TestAPPRStrict(t *testing.T) {
	gm := APPRMechanism{Kind: APPRGM, K: 2, Clip: 0.01, GaussianStd: 0.0067}
	c, err := gm.Cost(70, 0.014, APPRStrict)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dp.GDPEpsilon(math.Sqrt(70)*math.Sqrt2*0.01/0.0067, 0.014)
	assertRel(t, "strict GM ε", c.Epsilon, want, 1e-12)
	if c.Accountant != "gdp" || c.RowEpsilon != 0 {
		t.Errorf("strict GM cost %+v", c)
	}
	for _, kind := range []APPRKind{APPRGM, APPREM0, APPREM1} {
		for _, eps := range []float64{5.555556, 44.444444} {
			b := APPRBudget{Rows: 70, Epsilon: eps, Delta: 1.111111e-2, Accounting: APPRStrict}
			m, err := CalibrateAPPR(kind, 2, 0.001, b)
			if err != nil {
				t.Fatal(err)
			}
			c, err := m.Cost(70, b.Delta, APPRStrict)
			if err != nil {
				t.Fatal(err)
			}
			if c.Epsilon > eps || c.Epsilon < eps*(1-1e-6) {
				t.Errorf("%v ε=%g: strict calibrated cost %v", kind, eps, c.Epsilon)
			}
			if kind == APPREM1 {
				// ValueShare ½: the Laplace ε₂ equals the K rounds' K·ε₀.
				assertRel(t, "EM1 ε₂ = K·ε₀", 2*0.001/m.LaplaceScale, 2*(2*0.001/m.GumbelScale), 1e-12)
			}
		}
	}
}

// TestAmplification checks DPAR's amplification in both modes: exact
// ln(1 + q'(e^ε − 1)) of the inner budgets behind Table 1's ε = 1 and 8
// (q' = 0.09), and the round trips.
func TestAmplification(t *testing.T) {
	for _, tc := range []struct{ amp, inner, exact float64 }{{1, 1 / 0.09, 8.703317}, {8, 8 / 0.09, 86.480943}} {
		in, din, err := AmplifyLinear.Inner(tc.amp, 2e-3, 0.09)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "linear inner", in, tc.inner, 1e-14)
		e, d, err := AmplifyExact.Amplified(in, din, 0.09)
		if err != nil {
			t.Fatal(err)
		}
		assertAbs(t, "exact amplification", e, tc.exact, 5e-7)
		assertRel(t, "amplified δ", d, 2e-3, 1e-14)
		back, _, _ := AmplifyExact.Inner(e, d, 0.09)
		assertRel(t, "exact inner", back, in, 1e-12)
		if lin, _, _ := AmplifyLinear.Amplified(in, din, 0.09); lin >= e {
			t.Errorf("linear %v not below exact %v", lin, e)
		}
	}
	if _, _, err := AmplifyExact.Inner(1, 0.5, 0.1); err == nil {
		t.Error("inner δ ≥ 1: want an error")
	}
	if _, _, err := Amplification(7).Amplified(1, 1e-5, 0.1); err == nil {
		t.Error("unknown amplification: want an error")
	}
}

func TestAPPRParseAndErrors(t *testing.T) {
	for _, s := range []string{"none", "EM0", "em1", "gm"} {
		k, err := ParseAPPRKind(s)
		if err != nil || k.String() != strings.ToLower(s) {
			t.Errorf("ParseAPPRKind(%q) = %v, %v", s, k, err)
		}
	}
	for _, s := range []string{"paper", "strict"} {
		if a, err := ParseAPPRAccounting(s); err != nil || a.String() != s {
			t.Errorf("ParseAPPRAccounting(%q) = %v, %v", s, a, err)
		}
	}
	for _, s := range []string{"linear", "exact"} {
		if a, err := ParseAmplification(s); err != nil || a.String() != s {
			t.Errorf("ParseAmplification(%q) = %v, %v", s, a, err)
		}
	}
	for _, s := range []string{"clip", "normalize"} {
		if c, err := ParseColumnMode(s); err != nil || c.String() != s {
			t.Errorf("ParseColumnMode(%q) = %v, %v", s, c, err)
		}
	}
	if _, err := ParseAPPRKind("em2"); err == nil {
		t.Error("ParseAPPRKind(em2): want an error")
	}

	p := []float64{0.2, 0.1, 0}
	ok := APPRMechanism{Kind: APPREM0, K: 2, Clip: 0.01, GumbelScale: 0.01}
	for _, tc := range []struct {
		name string
		m    APPRMechanism
		p    []float64
		src  *dp.Source
		want string
	}{
		{"K > N", APPRMechanism{Kind: APPREM0, K: 4, Clip: 0.01, GumbelScale: 0.01}, p, dp.NewSource(1), "K=4 exceeds"},
		{"K 0", APPRMechanism{Kind: APPREM0, K: 0, Clip: 0.01, GumbelScale: 0.01}, p, dp.NewSource(1), "top-K size"},
		{"clip", APPRMechanism{Kind: APPREM0, K: 1, Clip: -1, GumbelScale: 0.01}, p, dp.NewSource(1), "clip bound"},
		{"gumbel", APPRMechanism{Kind: APPREM0, K: 1, Clip: 1, GumbelScale: 0}, p, dp.NewSource(1), "Gumbel scale"},
		{"laplace", APPRMechanism{Kind: APPREM1, K: 1, Clip: 1, GumbelScale: 1}, p, dp.NewSource(1), "Laplace scale"},
		{"gaussian", APPRMechanism{Kind: APPRGM, K: 1, Clip: 1, GaussianStd: math.NaN()}, p, dp.NewSource(1), "Gaussian std"},
		{"kind", APPRMechanism{Kind: 9, K: 1}, p, dp.NewSource(1), "unknown"},
		{"negative p", ok, []float64{0.1, -0.2}, dp.NewSource(1), "p[1]"},
		{"NaN p", ok, []float64{math.NaN(), 0.2}, dp.NewSource(1), "p[0]"},
		{"nil source", ok, p, nil, "nil noise source"},
	} {
		_, err := tc.m.Release(tc.p, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := (APPRMechanism{Kind: APPRNone, K: 1}).Cost(70, 1e-3, APPRPaper); err == nil {
		t.Error("Cost(none): want an error")
	}
	if _, err := ok.Cost(0, 1e-3, APPRPaper); err == nil {
		t.Error("Cost(rows 0): want an error")
	}
	if _, err := ok.Cost(70, 1e-3, APPRAccounting(5)); err == nil {
		t.Error("Cost(unknown accounting): want an error")
	}
	for _, tc := range []struct {
		name string
		kind APPRKind
		k    int
		clip float64
		b    APPRBudget
	}{
		{"none", APPRNone, 2, 1, APPRBudget{Rows: 70, Epsilon: 1, Delta: 1e-3}},
		{"rows", APPRGM, 2, 1, APPRBudget{Rows: 0, Epsilon: 1, Delta: 1e-3}},
		{"eps", APPRGM, 2, 1, APPRBudget{Rows: 70, Epsilon: 0, Delta: 1e-3}},
		{"delta", APPRGM, 2, 1, APPRBudget{Rows: 70, Epsilon: 1, Delta: 1}},
		{"share", APPREM1, 2, 1, APPRBudget{Rows: 70, Epsilon: 1, Delta: 1e-3, ValueShare: 1}},
		{"clip", APPREM0, 2, 0, APPRBudget{Rows: 70, Epsilon: 1, Delta: 1e-3}},
		{"k", APPREM0, 0, 1, APPRBudget{Rows: 70, Epsilon: 1, Delta: 1e-3}},
	} {
		if _, err := CalibrateAPPR(tc.kind, tc.k, tc.clip, tc.b); err == nil {
			t.Errorf("CalibrateAPPR(%s): want an error", tc.name)
		}
	}
	a := dparGraph(-1)
	if _, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, []int{1, 1}, DPARISTAParams(), ok, dp.NewSource(1)); err == nil {
		t.Error("APPRMatrix with a repeated source: want an error")
	}
	if _, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, []int{8}, DPARISTAParams(), ok, dp.NewSource(1)); err == nil {
		t.Error("APPRMatrix with source 8 of 8: want an error")
	}
	if _, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, []int{1}, DPARISTAParams(), ok, nil); err == nil {
		t.Error("APPRMatrix without a source: want an error")
	}
	rows := &graphs.CSR{Rows: 1, Cols: 8, Indptr: []int{0, 0}}
	if _, err := AssemblePi(rows, []int{1, 2}); err == nil {
		t.Error("AssemblePi with a row count mismatch: want an error")
	}
	if _, err := ClipColumns(rows, 0, ColumnClip); err == nil {
		t.Error("ClipColumns(τ = 0): want an error")
	}
	if _, err := ClipColumns(rows, 1, ColumnMode(3)); err == nil {
		t.Error("ClipColumns(unknown mode): want an error")
	}
	if _, err := ClassicalGaussianStd(1, 0, 1); err == nil {
		t.Error("ClassicalGaussianStd(δ = 0): want an error")
	}
}

func assertAbs(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (abs tol %g)", name, got, want, tol)
	}
}

// TestDPARLinearisedSensitivity: with a linear model
// whose per-node gradients are 0 except ∇f(x_i) = e₁, changing node i moves
// the aggregated gradient sum Σ_j Σ_k Π_jk ∇f(x_k) by exactly
// Σ_j Π_ji·e₁, whose norm is at most ‖Π_:,i‖₁ ≤ τ after column clipping
// (Theorem 2's sensitivity, which holds only under this linearisation; the
// dpar package's star-graph test shows it failing for clipped aggregated
// gradients).
func TestDPARLinearisedSensitivity(t *testing.T) {
	a := dparGraph(-1)
	sources := []int{5, 0, 6, 2}
	rows, err := APPRMatrix(a, allIDs(a.Rows), a.Rows, sources, DPARISTAParams(), APPRMechanism{Kind: APPRGM, K: 4, Clip: 0.01, GaussianStd: 0.01}, dp.NewSource(3))
	if err != nil {
		t.Fatal(err)
	}
	pi, err := AssemblePi(rows, sources)
	if err != nil {
		t.Fatal(err)
	}
	for _, tau := range []float64{1, 0.3} {
		clipped, err := ClipColumns(pi, tau, ColumnClip)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < clipped.Cols; i++ {
			// Σ_j Σ_k Π_jk g_k with g_k = δ_ki e₁: the e₁ coordinate.
			shift, l1 := 0.0, 0.0
			for j := 0; j < clipped.Rows; j++ {
				for k := clipped.Indptr[j]; k < clipped.Indptr[j+1]; k++ {
					if clipped.Indices[k] == i {
						shift += clipped.Value(k)
						l1 += math.Abs(clipped.Value(k))
					}
				}
			}
			if math.Abs(shift) > l1*(1+1e-12) || l1 > tau*(1+1e-12) {
				t.Errorf("τ %g, node %d: shift %g, column ℓ1 %g", tau, i, shift, l1)
			}
		}
	}
}

func assertRel(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.12g, want %.12g (rel tol %g)", name, got, want, tol)
	}
}

const (
	statN     = 20000
	statAlpha = 1e-3 // reject a law at p < statAlpha (fixed seeds: stable)
)
