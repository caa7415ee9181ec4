package dp

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func cniMustFactor(t *testing.T, gamma float64, k int) float64 {
	t.Helper()
	g, err := CNIFactor(gamma, k)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCNIFactorTable: g(γ, K) = (1 − γ^K)(1 + γ)/((1 + γ^K)(1 − γ))
// (CARIBOU Thm 5/6, after Bok et al. 2024) against reference values
// computed from the formula, each to the decimals it is given with.
func TestCNIFactorTable(t *testing.T) {
	ks := []int{1, 2, 5, 10, 15, 20, 50}
	for _, row := range []struct {
		gamma float64
		vals  string // K = 1, 2, 5, 10, 15, 20, 50, then the K → ∞ limit
	}{
		{0.1, "1 1.1980 1.2222 1.2222 1.2222 1.2222 1.2222 1.2222"},
		{0.3, "1 1.5505 1.8481 1.8571 1.8571 1.8571 1.8571 1.8571"},
		{0.5, "1 1.8 2.8182 2.9941 2.9998 3.0 3.0 3"},
		{0.7, "1 1.9396 4.0359 5.3553 5.6131 5.6576 5.6667 5.6667"},
		{0.8, "1 1.9756 4.5575 7.2547 8.3882 8.7948 8.9997 9"},
		{0.9, "1 1.9945 4.8920 9.1757 12.512 14.8809 18.8052 19"},
		{0.99, "1 1.9999 4.9990 9.9917 14.9718 19.9331 48.9741 199"},
	} {
		fields := strings.Fields(row.vals)
		for i, f := range fields {
			want, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			decimals := 0
			if dot := strings.IndexByte(f, '.'); dot >= 0 {
				decimals = len(f) - dot - 1
			}
			tol := 0.5*math.Pow(10, -float64(decimals)) + 1e-12
			var got float64
			name := "g(" + strconv.FormatFloat(row.gamma, 'g', -1, 64) + ", "
			if i < len(ks) {
				got = cniMustFactor(t, row.gamma, ks[i])
				name += strconv.Itoa(ks[i]) + ")"
			} else {
				got = (1 + row.gamma) / (1 - row.gamma)
				name += "∞)"
			}
			if math.Abs(got-want) > tol {
				t.Errorf("%s = %.10g, want %s (±%g)", name, got, f, tol)
			}
		}
	}
}

// TestCNIFactorProperties: g(γ, 1) = 1; g is non-decreasing in K and in γ;
// g ≤ K (so min{K, g} only matters for γ ≥ 1, where there is no
// contraction and CNIFactor is K); g → (1 + γ)/(1 − γ) as K → ∞ and g → K
// as γ → 1; invalid arguments are refused.
func TestCNIFactorProperties(t *testing.T) {
	const slack = 1e-12 // rounding, relative
	for i := 0; i < 1000; i++ {
		gamma := float64(i) / 1000
		if g := cniMustFactor(t, gamma, 1); g != 1 {
			t.Fatalf("g(%g, 1) = %.17g, want 1", gamma, g)
		}
		prev := 0.0
		for k := 1; k <= 199; k++ {
			g := cniMustFactor(t, gamma, k)
			if g < prev*(1-slack) {
				t.Fatalf("g(%g, %d) = %.17g < g(%g, %d) = %.17g", gamma, k, g, gamma, k-1, prev)
			}
			if g > float64(k)*(1+slack) {
				t.Fatalf("g(%g, %d) = %.17g > K", gamma, k, g)
			}
			if k <= 59 && i > 0 {
				if below := cniMustFactor(t, float64(i-1)/1000, k); g < below*(1-slack) {
					t.Fatalf("g(·, %d) decreases from γ = %g (%.17g) to γ = %g (%.17g)", k, float64(i-1)/1000, below, gamma, g)
				}
			}
			prev = g
		}
		// At K = 10⁴ the remaining gap, about 2γ^K(1+γ)/(1−γ), is below
		// 1e-9 for γ ≤ 0.99 (γ = 0.999 still misses its limit by 0.18).
		if gamma > 0.99 {
			continue
		}
		if g, lim := cniMustFactor(t, gamma, 10000), (1+gamma)/(1-gamma); math.Abs(g-lim) > 1e-9 {
			t.Errorf("g(%g, 10⁴) = %.15g, want the limit (1+γ)/(1−γ) = %.15g ± 1e-9", gamma, g, lim)
		}
	}
	for _, k := range []int{1, 2, 5, 10, 20, 50, 199} {
		if g := cniMustFactor(t, 1-1e-9, k); math.Abs(g-float64(k)) > 1e-5*float64(k) {
			t.Errorf("g(1 − 1e-9, %d) = %.12g, want ≈ K", k, g)
		}
		for _, gamma := range []float64{1, 1.5, 100} {
			if g := cniMustFactor(t, gamma, k); g != float64(k) {
				t.Errorf("CNIFactor(%g, %d) = %g, want K (no contraction: linear composition)", gamma, k, g)
			}
		}
	}
	for _, bad := range []struct {
		gamma float64
		k     int
	}{{0.5, 0}, {0.5, -3}, {-0.1, 5}, {math.NaN(), 5}, {math.Inf(1), 5}} {
		if _, err := CNIFactor(bad.gamma, bad.k); err == nil {
			t.Errorf("CNIFactor(%g, %d) accepted", bad.gamma, bad.k)
		}
	}
}

// TestCNIShifts: the shifted-interpolation recurrence of the CNI proof
// (CARIBOU App. C.2, Bok et al. 2024) ends on the real process (λ_K = 1,
// z_K = 0), its shifts satisfy Σ a_k² = g(γ, K)·s², and they equal the
// closed forms a_k = γ^{K−k}(1+γ)s/(1+γ^K) and z_k = (1−γ^k)(1−γ^{K−k})s/
// ((1+γ^K)(1−γ)). The paper prints 1 + γ^k in a_k's denominator, which is
// wrong (off by 0.16 at γ = 0.9, K = 10). The privacy of the last iterate
// is then that of one Gaussian release with μ = √(Σ a_k²)/σ, which is what
// CNIEvent encodes.
func TestCNIShifts(t *testing.T) {
	for _, gamma := range []float64{0.3, 0.5, 0.8, 0.9, 0.99} {
		for _, k := range []int{1, 2, 5, 10, 20} {
			for _, s := range []float64{1, 0.37} {
				lambda, z, a, err := CNIShifts(gamma, s, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(lambda) != k || len(z) != k || len(a) != k {
					t.Fatalf("γ=%g K=%d: lengths %d %d %d, want K", gamma, k, len(lambda), len(z), len(a))
				}
				if math.Abs(lambda[k-1]-1) > 1e-12 {
					t.Errorf("γ=%g K=%d: λ_K = %.17g, want 1", gamma, k, lambda[k-1])
				}
				if math.Abs(z[k-1]) > 1e-12*s {
					t.Errorf("γ=%g K=%d: z_K = %g, want 0", gamma, k, z[k-1])
				}
				gk := math.Pow(gamma, float64(k))
				sum := 0.0
				for i := 0; i < k; i++ {
					kk := float64(i + 1)
					sum += a[i] * a[i]
					wantA := math.Pow(gamma, float64(k)-kk) * (1 + gamma) * s / (1 + gk)
					assertRel(t, "a_k", a[i], wantA, 1e-10)
					wantZ := (1 - math.Pow(gamma, kk)) * (1 - math.Pow(gamma, float64(k)-kk)) * s / ((1 + gk) * (1 - gamma))
					if math.Abs(z[i]-wantZ) > 1e-10*s {
						t.Errorf("γ=%g K=%d: z_%d = %.15g, want %.15g", gamma, k, i+1, z[i], wantZ)
					}
					if lambda[i] < 0 || lambda[i] > 1+1e-12 {
						t.Errorf("γ=%g K=%d: λ_%d = %g outside [0, 1]", gamma, k, i+1, lambda[i])
					}
				}
				g := cniMustFactor(t, gamma, k)
				assertRel(t, "Σ a_k²", sum, g*s*s, 1e-10)
				// One CNI release with multiplier m (σ = m·s) is the Gaussian
				// release of μ = √(Σ a_k²)/σ.
				ev, err := CNIEvent(2.5, gamma, k)
				if err != nil {
					t.Fatal(err)
				}
				assertRel(t, "CNIEvent μ", 1/ev.Multiplier, math.Sqrt(sum)/(2.5*s), 1e-10)
				if ev.Count != 1 {
					t.Errorf("CNIEvent count %d, want 1", ev.Count)
				}
			}
		}
	}
	// The printed a_k (denominator 1 + γ^k) does not sum to g.
	_, _, a, _ := CNIShifts(0.9, 1, 10)
	worst := 0.0
	for i := range a {
		printed := math.Pow(0.9, float64(10-i-1)) * 1.9 / (1 + math.Pow(0.9, float64(i+1)))
		worst = math.Max(worst, math.Abs(printed-a[i]))
	}
	if worst < 0.15 || worst > 0.17 {
		t.Errorf("largest gap to the printed a_k at γ=0.9, K=10 = %g, want about 0.16", worst)
	}
	for _, bad := range []struct {
		gamma float64
		k     int
	}{{1, 5}, {1.2, 5}, {-0.1, 5}, {0.5, 0}, {math.NaN(), 3}} {
		if _, _, _, err := CNIShifts(bad.gamma, 1, bad.k); err == nil {
			t.Errorf("CNIShifts(%g, 1, %d) accepted", bad.gamma, bad.k)
		}
	}
}

// TestCNIRDPClosedForm: a μ-GDP release is (α, αμ²/2)-RDP (CARIBOU Lemma
// 5.4), and with the standard conversion (Thm B.7) min over α > 1 of
// αμ²/2 + L/(α−1), L = ln(1/δ), is μ²/2 + μ√(2L) at α* = 1 + √(2L)/μ; a fine
// α grid reproduces it, the inverse μ(ε) = √(2L + 2ε) − √(2L) recovers μ,
// and the RDP accountant given a CNIEvent reports the same ε.
func TestCNIRDPClosedForm(t *testing.T) {
	for _, mu := range []float64{0.02, 0.1, 0.268051, 0.6, 1, 2, 5} {
		for _, delta := range []float64{1e-3, 1e-5, 1e-8} {
			l := math.Log(1 / delta)
			closed := mu*mu/2 + mu*math.Sqrt(2*l)
			// α − 1 on a log grid from 1e-4 to 1e6, 1e-4 apart in log.
			best := math.Inf(1)
			for i := 0; i <= 230000; i++ {
				am1 := 1e-4 * math.Exp(float64(i)*1e-4)
				best = math.Min(best, (1+am1)*mu*mu/2+l/am1)
			}
			assertRel(t, "grid min of αμ²/2 + L/(α−1)", best, closed, 1e-6)
			if best < closed*(1-1e-13) {
				t.Errorf("μ=%g δ=%g: grid minimum %.15g below the closed form %.15g", mu, delta, best, closed)
			}
			as := 1 + math.Sqrt(2*l)/mu
			assertRel(t, "objective at α*", as*mu*mu/2+l/(as-1), closed, 1e-13)
			assertRel(t, "μ(ε(μ))", math.Sqrt(2*l+2*closed)-math.Sqrt(2*l), mu, 1e-10)

			// The same through the accountant: CNIEvent with g = 9.1757…
			// (γ = 0.9, K = 10) and the multiplier giving this μ.
			g := cniMustFactor(t, 0.9, 10)
			ev, err := CNIEvent(math.Sqrt(g)/mu, 0.9, 10)
			if err != nil {
				t.Fatal(err)
			}
			acct, err := NewRDP(WithConversion(ConversionStandard))
			if err != nil {
				t.Fatal(err)
			}
			if err := acct.Compose(ev); err != nil {
				t.Fatal(err)
			}
			eps, err := acct.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			assertRel(t, "RDP accountant on CNIEvent", eps, closed, 1e-6)
		}
	}
}

// cniCalibrateMu returns μ* with δ(ε; μ*) = delta by bisection on the
// increasing function μ ↦ δ(ε; μ) (CARIBOU §6 calibrates σ the same way
// through autodp).
func cniCalibrateMu(eps, delta float64) float64 {
	lo, hi := 1e-8, 100.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if GDPDelta(mid, eps) > delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// TestCNIGDPConversion: the exact μ-GDP → (ε, δ) conversion δ(ε; μ) =
// Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2019) is increasing in μ
// and decreasing in ε; calibrating μ* to (ε, δ) by bisection hits δ to
// 1e-12 and matches the PCMP calibration vectors; ε_GDP(μ) ≤ ε_RDP(μ).
func TestCNIGDPConversion(t *testing.T) {
	mus := []float64{0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.5, 2, 3, 4, 5, 6, 8}
	epss := []float64{0, 0.01, 0.1, 0.5, 1, 2, 4, 8, 16, 32}
	for _, eps := range epss {
		prev := 0.0
		for _, mu := range mus {
			d := GDPDelta(mu, eps)
			if math.IsNaN(d) || d < 0 || d > 1 {
				t.Fatalf("δ(%g; %g) = %g", eps, mu, d)
			}
			if d < prev*(1-1e-12) || (prev > 1e-300 && d <= prev) {
				t.Errorf("δ(ε=%g; μ) not increasing at μ=%g: %g after %g", eps, mu, d, prev)
			}
			prev = d
		}
	}
	for _, mu := range mus {
		prev := math.Inf(1)
		for _, eps := range epss {
			d := GDPDelta(mu, eps)
			if d > prev*(1+1e-12) || (d > 1e-300 && d >= prev) {
				t.Errorf("δ(ε; μ=%g) not decreasing at ε=%g: %g after %g", mu, eps, d, prev)
			}
			prev = d
		}
	}
	for _, tc := range []struct{ eps, delta, mu float64 }{
		{1, 1e-5, 0.268051}, {4, 1e-6, 0.837859}, {8, 1e-7, 1.424272},
		{2, 1e-5, 0.501552}, {4, 1e-5, 0.924931}, {8, 1e-5, 1.666031}, {16, 1e-5, 2.905478},
		{32, 1e-5, 4.879598}, // the root of δ(32; μ) = 1e-5 (see TestCARIBOUSpecErratum)
	} {
		mu := cniCalibrateMu(tc.eps, tc.delta)
		if d := GDPDelta(mu, tc.eps); math.Abs(d-tc.delta) > 1e-12 {
			t.Errorf("ε=%g: δ(ε; μ*) = %.15g, want %g ± 1e-12", tc.eps, d, tc.delta)
		}
		assertAbs(t, "μ*", mu, tc.mu, 6e-7)
		back, err := GDPEpsilon(mu, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "ε(μ*)", back, tc.eps, 1e-9)
		l := math.Log(1 / tc.delta)
		if rdp := mu*mu/2 + mu*math.Sqrt(2*l); back > rdp {
			t.Errorf("μ=%g: ε_GDP = %g above ε_RDP = %g", mu, back, rdp)
		}
	}
}

// TestCNIPrivacyConvergence: for a fixed noise multiplier, ε of the last
// iterate of K contractive noisy layers (CNIEvent, then an accountant) is
// non-decreasing in K and bounded by its K → ∞ value, where g =
// (1 + C_L)/(1 − C_L) (CARIBOU Thm 6, Cor. 10); with C_L = 1 it is exactly
// the linear composition of K Gaussian releases (GAP-style), and C_L → 1
// approaches it.
func TestCNIPrivacyConvergence(t *testing.T) {
	const delta = 1e-5
	epsOf := func(acctName string, ev Event) float64 {
		t.Helper()
		a, err := NewAccountant(acctName)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(ev); err != nil {
			t.Fatal(err)
		}
		eps, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	hops := []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 50, 100, 200, 1000}
	for _, acct := range []string{"gdp", "rdp-standard"} {
		for _, z := range []float64{1, 5} {
			for _, gamma := range []float64{0.1, 0.5, 0.8, 0.9, 0.99} {
				limit := epsOf(acct, GaussianEvent{Multiplier: z / math.Sqrt((1+gamma)/(1-gamma)), Count: 1})
				prev := 0.0
				for _, k := range hops {
					ev, err := CNIEvent(z, gamma, k)
					if err != nil {
						t.Fatal(err)
					}
					eps := epsOf(acct, ev)
					if eps < prev*(1-1e-9) {
						t.Errorf("%s z=%g C_L=%g: ε(K=%d) = %.12g < ε at fewer hops %.12g", acct, z, gamma, k, eps, prev)
					}
					if eps > limit*(1+1e-9) {
						t.Errorf("%s z=%g C_L=%g: ε(K=%d) = %.12g above the K → ∞ value %.12g", acct, z, gamma, k, eps, limit)
					}
					prev = eps
				}
				ev, err := CNIEvent(z, gamma, 10000)
				if err != nil {
					t.Fatal(err)
				}
				if eps := epsOf(acct, ev); math.Abs(eps-limit) > 1e-9*limit {
					t.Errorf("%s z=%g C_L=%g: ε(K=10⁴) = %.12g has not converged to %.12g", acct, z, gamma, eps, limit)
				}
			}
			for _, k := range []int{1, 2, 5, 10, 20} {
				linear := epsOf(acct, GaussianEvent{Multiplier: z, Count: k})
				ev, err := CNIEvent(z, 1, k)
				if err != nil {
					t.Fatal(err)
				}
				assertRel(t, "C_L = 1 vs linear composition", epsOf(acct, ev), linear, 1e-12)
				ev, err = CNIEvent(z, 1-1e-9, k)
				if err != nil {
					t.Fatal(err)
				}
				assertRel(t, "C_L → 1 vs linear composition", epsOf(acct, ev), linear, 1e-6)
			}
		}
	}
	for _, bad := range []struct {
		z, gamma float64
		k        int
	}{{0, 0.5, 3}, {-1, 0.5, 3}, {math.NaN(), 0.5, 3}, {1, 0.5, 0}, {1, -0.5, 3}} {
		if _, err := CNIEvent(bad.z, bad.gamma, bad.k); err == nil {
			t.Errorf("CNIEvent(%g, %g, %d) accepted", bad.z, bad.gamma, bad.k)
		}
	}
}
