package dp

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/internal/testutil"
)

// progapEdgeSigma is the edge-level σ for a target ε: ProGAP (Sajadmanesh &
// Gatica-Perez, WSDM 2024) Thm 4.1 in closed form (RDP, standard conversion,
// continuous α) / the exact analytic Gaussian of ProGAP's code (autodp's
// ExactGaussianMechanism); computed in float64, cross-checked with autodp.
var progapEdgeSigma = []struct {
	delta float64
	k     int
	// per ε ∈ {0.25, 0.5, 1, 2, 4}: {closed form, exact}
	sigma [5][2]float64
}{
	{1e-7, 1, [5][2]float64{{22.7985, 17.3433}, {11.4428, 8.9957}, {5.7644, 4.6787}, {2.9243, 2.4491}, {1.5026, 1.2978}}},
	{1e-7, 2, [5][2]float64{{32.2419, 24.5272}, {16.1825, 12.7218}, {8.1521, 6.6166}, {4.1356, 3.4635}, {2.1250, 1.8354}}},
	{1e-7, 3, [5][2]float64{{39.4882, 30.0395}, {19.8195, 15.5810}, {9.9843, 8.1037}, {5.0651, 4.2419}, {2.6026, 2.2479}}},
	{1e-7, 4, [5][2]float64{{45.5970, 34.6866}, {22.8856, 17.9914}, {11.5289, 9.3573}, {5.8487, 4.8981}, {3.0052, 2.5957}}},
	{1e-7, 5, [5][2]float64{{50.9790, 38.7808}, {25.5868, 20.1150}, {12.8897, 10.4618}, {6.5390, 5.4763}, {3.3599, 2.9021}}},
	{1e-8, 1, [5][2]float64{{24.3609, 19.1254}, {12.2212, 9.8635}, {6.1510, 5.1003}, {3.1151, 2.6529}, {1.5958, 1.3956}}},
	{1e-8, 2, [5][2]float64{{34.4516, 27.0474}, {17.2834, 13.9491}, {8.6988, 7.2129}, {4.4054, 3.7518}, {2.2567, 1.9737}}},
	{1e-8, 3, [5][2]float64{{42.1944, 33.1261}, {21.1678, 17.0841}, {10.6538, 8.8340}, {5.3955, 4.5950}, {2.7639, 2.4172}}},
	{1e-8, 4, [5][2]float64{{48.7219, 38.2508}, {24.4425, 19.7271}, {12.3020, 10.2006}, {6.2302, 5.3059}, {3.1915, 2.7912}}},
	{1e-8, 5, [5][2]float64{{54.4727, 42.7656}, {27.3275, 22.0555}, {13.7540, 11.4046}, {6.9656, 5.9321}, {3.5682, 3.1206}}},
}

func TestProGAPEdgeLevelSigmaTable(t *testing.T) {
	epsilons := [5]float64{0.25, 0.5, 1, 2, 4}
	for _, row := range progapEdgeSigma {
		for j, eps := range epsilons {
			l := math.Log(1 / row.delta)
			closed := math.Sqrt(float64(row.k)) / (math.Sqrt(2*(l+eps)) - math.Sqrt(2*l))
			rdp, err := calibrateGaussian(eps, row.delta, row.k, "rdp-standard")
			if err != nil {
				t.Fatal(err)
			}
			exact, err := calibrateGaussian(eps, row.delta, row.k, "gdp")
			if err != nil {
				t.Fatal(err)
			}
			// Table entries have 4 decimals.
			testutil.AssertClose(t, "closed form σ", closed, row.sigma[j][0], 5.01e-5)
			testutil.AssertClose(t, "RDP-calibrated σ", rdp, row.sigma[j][0], 5.01e-5)
			testutil.AssertClose(t, "exact σ", exact, row.sigma[j][1], 5.01e-5)
			// The accountant reproduces the closed form, from the safe side.
			assertRel(t, "RDP calibration vs closed form", rdp, closed, 1e-8)
			// Scaling: σ(K)/σ(1) = √K (exact: σ_eff = σ/√K).
			exact1, _ := calibrateGaussian(eps, row.delta, 1, "gdp")
			assertRel(t, "σ(K)/σ(1)", exact/exact1, math.Sqrt(float64(row.k)), 1e-8)
			// Closed-form round trip ε(σ(ε)) = ε.
			k := float64(row.k)
			back := k/(2*closed*closed) + math.Sqrt(2*k*l)/closed
			assertRel(t, "closed-form round trip", back, eps, 1e-12)
		}
	}
}

func integerOrders(lo, hi int) []float64 {
	var o []float64
	for a := lo; a <= hi; a++ {
		o = append(o, float64(a))
	}
	return o
}

// progapNodeEvents is Theorem 4.2 in the code's form: K NAP calls with
// multiplier z and K+1 DP-SGD runs of T Poisson steps with rate q.
func progapNodeEvents(z float64, k, steps int, q float64) []Event {
	return []Event{
		GaussianEvent{Multiplier: z, Count: k},
		PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: (k + 1) * steps},
	}
}

// TestProGAPNodeLevelEpsilon: ProGAP's node-level total ε (Thm 4.2, typos
// fixed; integer α ∈ [2, 256]), reference values computed in float64 and
// with autodp; the autodp column is checked against the default accountant
// (improved conversion, fractional orders).
func TestProGAPNodeLevelEpsilon(t *testing.T) {
	for _, tc := range []struct {
		nTrain, batch, epochs int
		z                     float64
		k                     int
		delta                 float64
		standard, bbghs       float64
		bestStandardOrder     float64
		autodp                float64
		autodpTol             float64
	}{
		{19804, 256, 10, 1.0, 2, 1e-5, 9.268297, 8.518516, 4, 8.503441, 5e-3},
		{19804, 256, 10, 2.0, 5, 1e-5, 6.560153, 5.934650, 0, 5.920985, 5e-3},
		// autodp interpolates the CGF between integer orders (an upper
		// bound); the exact fractional-order RDP is lower here by 1.8%.
		{87534, 2048, 5, 0.8, 1, 1e-5, 9.675953, 8.721182, 0, 8.721182, 0.02},
		{1343048, 4096, 10, 1.5, 3, 1e-7, 7.430038, 6.889365, 0, 6.859746, 5e-3},
	} {
		q := float64(tc.batch) / float64(tc.nTrain)
		steps := tc.epochs * tc.nTrain / tc.batch
		events := progapNodeEvents(tc.z, tc.k, steps, q)
		for _, c := range []struct {
			conv Conversion
			want float64
		}{{ConversionStandard, tc.standard}, {ConversionImproved, tc.bbghs}} {
			a, _ := NewRDP(WithOrders(integerOrders(2, 256)...), WithConversion(c.conv), WithoutRefinement())
			for _, e := range events {
				if err := a.Compose(e); err != nil {
					t.Fatal(err)
				}
			}
			eps, order, err := a.EpsilonAndOrder(tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			assertRel(t, "node-level ε ("+c.conv.String()+")", eps, c.want, 1e-6)
			if c.conv == ConversionStandard && tc.bestStandardOrder != 0 && order != tc.bestStandardOrder {
				t.Errorf("best order %v, want %v", order, tc.bestStandardOrder)
			}
		}
		def, _ := NewRDP()
		for _, e := range events {
			_ = def.Compose(e)
		}
		eps, _ := def.Epsilon(tc.delta)
		if eps > tc.bbghs*(1+1e-12) {
			t.Errorf("default accountant ε %v above the integer-order value %v", eps, tc.bbghs)
		}
		if eps > tc.autodp*(1+1e-9) || eps < tc.autodp*(1-tc.autodpTol) {
			t.Errorf("default accountant ε %v vs autodp %v (tol %g)", eps, tc.autodp, tc.autodpTol)
		}
		t.Logf("N=%d z=%g K=%d: default accountant ε = %.6f (autodp %.6f, integer BBGHS %.6f)", tc.nTrain, tc.z, tc.k, eps, tc.autodp, tc.bbghs)
	}
}

// TestProGAPNodeLevelCalibration: calibrated node-level z in a Facebook-like
// setting of ProGAP's experiments (N_train = 19,804, B = 256, δ = 1e-5);
// entries standard / BBGHS / autodp, computed in float64 and with autodp.
func TestProGAPNodeLevelCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("48 calibrations; skipped with -short")
	}
	const nTrain, batch, delta = 19804, 256, 1e-5
	q := float64(batch) / nTrain
	table := []struct {
		epochs, k int
		z         [3][3]float64 // ε ∈ {2, 8, 32} × {standard, BBGHS, autodp}
	}{
		{5, 1, [3][3]float64{{2.6704, 2.3006, 2.3003}, {0.8141, 0.7736, 0.7729}, {0.4556, 0.4518, 0.4518}}},
		{5, 2, [3][3]float64{{3.7095, 3.1925, 3.1920}, {1.0582, 0.9818, 0.9816}, {0.4902, 0.4848, 0.4848}}},
		{5, 3, [3][3]float64{{4.5170, 3.8865, 3.8858}, {1.2720, 1.1754, 1.1751}, {0.5240, 0.5167, 0.5167}}},
		{5, 5, [3][3]float64{{5.8049, 4.9938, 4.9928}, {1.6223, 1.4960, 1.4955}, {0.5929, 0.5812, 0.5812}}},
		{10, 1, [3][3]float64{{2.8284, 2.4388, 2.4386}, {0.8790, 0.8329, 0.8328}, {0.4899, 0.4855, 0.4855}}},
		{10, 2, [3][3]float64{{3.8757, 3.3368, 3.3365}, {1.1217, 1.0434, 1.0434}, {0.5292, 0.5230, 0.5230}}},
		{10, 3, [3][3]float64{{4.6971, 4.0425, 4.0420}, {1.3351, 1.2361, 1.2360}, {0.5664, 0.5582, 0.5582}}},
		{10, 5, [3][3]float64{{6.0134, 5.1739, 5.1731}, {1.6894, 1.5595, 1.5593}, {0.6385, 0.6264, 0.6264}}},
	}
	ints := integerOrders(2, 256)
	for _, row := range table {
		steps := row.epochs * nTrain / batch
		events := func(z float64) []Event { return progapNodeEvents(z, row.k, steps, q) }
		for j, eps := range []float64{2, 8, 32} {
			for c, conv := range []Conversion{ConversionStandard, ConversionImproved} {
				z, err := calibrateWith(eps, delta, events, func() (Accountant, error) {
					return NewRDP(WithOrders(ints...), WithConversion(conv), WithoutRefinement())
				})
				if err != nil {
					t.Fatal(err)
				}
				testutil.AssertClose(t, "node-level z ("+conv.String()+")", z, row.z[j][c], 5.01e-5)
			}
		}
	}
	// autodp column against the default accountant, on two rows. autodp
	// bounds fractional orders by interpolating the CGF between integers;
	// the default accountant evaluates them exactly (Mironov et al. 2019),
	// which matters at large ε, where the best order is below 2: there the
	// default z is lower than autodp's (by up to 5.2% at ε = 32). At ε = 2
	// the two agree to 0.5%.
	for _, i := range []int{0, 5} {
		row := table[i]
		steps := row.epochs * nTrain / batch
		for j, eps := range []float64{2, 8, 32} {
			z, err := calibrateWith(eps, delta, func(z float64) []Event { return progapNodeEvents(z, row.k, steps, q) },
				func() (Accountant, error) { return NewRDP() })
			if err != nil {
				t.Fatal(err)
			}
			tol := 5e-3
			if eps > 2 {
				tol = 0.06
			}
			if z > row.z[j][2]*(1+5e-3) || z < row.z[j][2]*(1-tol) {
				t.Errorf("default accountant z = %.5f, autodp %.4f (tol %g)", z, row.z[j][2], tol)
			}
			t.Logf("epochs=%d K=%d ε=%g: default accountant z = %.5f, autodp %.4f (%+.2f%%)",
				row.epochs, row.k, eps, z, row.z[j][2], 100*(z/row.z[j][2]-1))
		}
	}
}
