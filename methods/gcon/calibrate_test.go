package gcon

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

func assertRel(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if want == 0 {
		if math.Abs(got) > tol {
			t.Errorf("%s = %.12g, want 0 (±%g)", name, got, tol)
		}
		return
	}
	if r := math.Abs(got-want) / math.Abs(want); !(r <= tol) {
		t.Errorf("%s = %.12g, want %.12g (relative error %.3g > %g)", name, got, want, r, tol)
	}
}

func mustLoss(t *testing.T, k LossKind, c int, dl float64) Loss {
	t.Helper()
	l, err := NewLoss(k, c, dl)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func input(l Loss, alpha float64, steps []int, d, n1 int, eps, lambda, delta float64) CalibrationInput {
	c1, c2, c3 := l.Constants()
	return CalibrationInput{Epsilon: eps, Delta: delta, Omega: DefaultOmega, Xi: DefaultXi, Lambda: lambda,
		C1: c1, C2: c2, C3: c3, N1: n1, Classes: l.Classes, Dim: d, Alpha: alpha, Steps: steps}
}

// TestCalibrationRegressionVectors checks reference vectors recomputed from
// GCON's Theorem 1 (ξ = 1e-6, ω = 0.9), to their printed precision.
func TestCalibrationRegressionVectors(t *testing.T) {
	cora := 1.0 / 16316
	for _, tc := range []struct {
		name                                                 string
		in                                                   CalibrationInput
		psi, csf, lambda, ctheta, epsL, lambdaP, beta, meanB float64
	}{
		{"Cora-ML SM n1=140 ε=1", input(mustLoss(t, SoftMargin, 7, 0), 0.8, []int{2}, 16, 140, 1, 0.2, cora),
			0.48, 39.25769121, 0.2, 1.798211392, 0.01153711385, 0, 1.420643395, 11.2625},
		{"Cora-ML SM n1=2995 ε=0.5", input(mustLoss(t, SoftMargin, 7, 0), 0.8, []int{2}, 16, 2995, 0.5, 0.01, cora),
			0.48, 39.25769121, 0.01, 24.11196579, 0.04518901255, 0, 0.1348212925, 118.676},
		{"Cora-ML PH(0.2) n1=2995 ε=4", input(mustLoss(t, PseudoHuber, 7, 0.2), 0.8, []int{2}, 16, 2995, 4, 0.2, cora),
			0.48, 39.25769121, 0.2, 0.1458796103, 0.002104525973, 0, 24.0804854, 0.66444},
		{"PubMed SM α=.4 m=∞", input(mustLoss(t, SoftMargin, 3, 0), 0.4, []int{Inf}, 64, 19717, 1, 0.01, 1.0/88648),
			3, 106.3584222, 0.01, 63.81969992, 0.1010190178, 1.045597533e-4, 0.01769397389, 3617.05},
		{"Actor SM α=.6 m=[0,2]", input(mustLoss(t, SoftMargin, 5, 0), 0.6, []int{0, 2}, 32, 4560, 0.5, 0.01, 1.0/30019),
			0.56, 62.83596141, 0.01, 38.00984845, 0.05104886527, 2.114019683e-4, 0.07651267102, 418.231},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cal, err := Calibrate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			const tol = 1e-9 // the table prints 10 significant digits
			assertRel(t, "Ψ", cal.Psi, tc.psi, 1e-12)
			assertRel(t, "c_sf", cal.Csf, tc.csf, tol)
			assertRel(t, "Λ", cal.Lambda, tc.lambda, 1e-12)
			assertRel(t, "c_θ", cal.CTheta, tc.ctheta, tol)
			assertRel(t, "ε_Λ", cal.EpsLambda, tc.epsL, tol)
			if tc.lambdaP == 0 {
				if cal.LambdaPrime != 0 {
					t.Errorf("Λ' = %g, want 0", cal.LambdaPrime)
				}
			} else {
				assertRel(t, "Λ'", cal.LambdaPrime, tc.lambdaP, tol)
			}
			assertRel(t, "β", cal.Beta, tc.beta, tol)
			assertRel(t, "d/β", cal.ExpectedNoiseNorm(tc.in.Dim), tc.meanB, 5e-6)
			checkInvariants(t, tc.in, cal)
		})
	}
}

// checkInvariants is unit test 8.
func checkInvariants(t *testing.T, in CalibrationInput, cal Calibration) {
	t.Helper()
	c, d, n1 := float64(in.Classes), float64(in.Dim), float64(in.N1)
	eps, om := in.Epsilon, in.Omega
	if !(cal.CTheta > 0) {
		t.Errorf("c_θ = %g ≤ 0", cal.CTheta)
	}
	if cal.Lambda < in.Lambda || cal.Lambda < cal.LambdaMin {
		t.Errorf("Λ used %g below requested %g or Λ_min %g", cal.Lambda, in.Lambda, cal.LambdaMin)
	}
	// c_sf: Q(d, c_sf) = δ/c.
	assertRel(t, "Q(d, c_sf)", mathext.GammaIncRegComp(d, cal.Csf), in.Delta/c, 1e-10)
	// Lemma 9 identity: β·n1·(Λ·c_θ − c1) = max(ε−ε_Λ, ωε)·c_sf/(ωε) ≥ c_sf.
	lhs := cal.Beta * n1 * (cal.Lambda*cal.CTheta - in.C1)
	rhs := math.Max(eps-cal.EpsLambda, om*eps) * cal.Csf / (om * eps)
	assertRel(t, "Lemma 9 identity", lhs, rhs, 1e-10)
	if lhs < cal.Csf*(1-1e-12) {
		t.Errorf("β·n1·(Λc_θ−c1) = %g < c_sf = %g", lhs, cal.Csf)
	}
	jac := c * d * math.Log1p((2*in.C2+in.C3*cal.CTheta)*cal.Psi/(d*n1*(cal.Lambda+cal.LambdaPrime)))
	if cal.LambdaPrime > 0 && jac > (1-om)*eps+1e-12 {
		t.Errorf("Λ' > 0 but the Jacobian part %g exceeds (1−ω)ε = %g", jac, (1-om)*eps)
	}
	total := jac + cal.Beta*c*(in.C1+in.C2*cal.CTheta)*cal.Psi
	if total > eps+1e-12 {
		t.Errorf("total ε %g exceeds target %g", total, eps)
	}
	if cal.LambdaPrime == 0 {
		assertRel(t, "total ε with Λ'=0", total, eps, 1e-12)
	}
	assertRel(t, "reported ε", cal.Epsilon, total, 1e-12)
}

// TestCalibrationInvariantsGrid runs unit test 8 over a grid including the
// branches Λ' > 0 and Λ raised by Eq. 22.
func TestCalibrationInvariantsGrid(t *testing.T) {
	var raised, perturbed int
	for _, k := range []LossKind{SoftMargin, PseudoHuber} {
		for _, c := range []int{3, 7} {
			for _, alpha := range []float64{0.2, 0.5, 0.8} {
				for _, steps := range [][]int{{1}, {10}, {Inf}, {0, 2, 5}} {
					for _, n1 := range []int{60, 3000} {
						for _, eps := range []float64{0.5, 4} {
							for _, lambda := range []float64{0.01, 1} {
								for _, xi := range []float64{1e-6, 0.5} {
									l := mustLoss(t, k, c, 0.2)
									in := input(l, alpha, steps, 16*len(steps), n1, eps, lambda, 1e-4)
									in.Xi = xi
									cal, err := Calibrate(in)
									if err != nil {
										t.Fatal(err)
									}
									if cal.Lambda > lambda {
										raised++
									}
									if cal.LambdaPrime > 0 {
										perturbed++
									}
									checkInvariants(t, in, cal)
								}
							}
						}
					}
				}
			}
		}
	}
	if raised == 0 || perturbed == 0 {
		t.Errorf("grid never exercised a branch: Λ raised %d times, Λ' > 0 %d times", raised, perturbed)
	}
}

// TestCalibrationPitfallP2 checks a CiteSeer-sized example
// (n1 = 120, d = 64, α = 0.2, m = 10, ε = 0.5, Λ = 0.01, c = 6, SM).
func TestCalibrationPitfallP2(t *testing.T) {
	in := input(mustLoss(t, SoftMargin, 6, 0), 0.2, []int{10}, 64, 120, 0.5, 0.01, 1.0/9104)
	cal, err := Calibrate(in)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "Λ_min", cal.LambdaMin, 3.39, 5e-3)
	assertRel(t, "c_θ (ξ=1e-6)", cal.CTheta, 1.4e7, 0.05)
	assertRel(t, "Λ' (ξ=1e-6)", cal.LambdaPrime, 1.6e6, 0.05)
	assertRel(t, "E‖b‖/n1 (ξ=1e-6)", cal.ExpectedNoiseNorm(64)/120, 2.9e7, 0.05)
	in.Xi = cal.LambdaMin
	cal, err = Calibrate(in)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "c_θ (ξ=Λ_min)", cal.CTheta, 4.05, 5e-3)
	if cal.LambdaPrime != 0 {
		t.Errorf("Λ' = %g, want 0", cal.LambdaPrime)
	}
	assertRel(t, "E‖b‖/n1 (ξ=Λ_min)", cal.ExpectedNoiseNorm(64)/120, 15.6, 5e-3)
	// ξ = auto is the same choice, made by the calibration itself.
	in.Xi, in.XiAuto = 0, true
	auto, err := Calibrate(in)
	if err != nil {
		t.Fatal(err)
	}
	if auto.Lambda != 2*auto.LambdaMin || auto.Xi != auto.LambdaMin || auto.CTheta != cal.CTheta || auto.Beta != cal.Beta {
		t.Errorf("ξ=auto: Λ=%g ξ=%g c_θ=%g β=%g; want Λ=2Λ_min=%g, c_θ=%g, β=%g", auto.Lambda, auto.Xi, auto.CTheta, auto.Beta, 2*cal.LambdaMin, cal.CTheta, cal.Beta)
	}
	// A requested Λ above 2Λ_min is kept.
	in.Lambda = 10
	if big, _ := Calibrate(in); big.Lambda != 10 {
		t.Errorf("ξ=auto lowered Λ=10 to %g", big.Lambda)
	}
}

func TestParseXi(t *testing.T) {
	if _, auto, err := ParseXi("auto"); err != nil || !auto {
		t.Errorf("auto: %v %v", auto, err)
	}
	if xi, auto, err := ParseXi("1e-6"); err != nil || auto || xi != 1e-6 {
		t.Errorf("1e-6: %v %v %v", xi, auto, err)
	}
	for _, bad := range []string{"0", "-1", "inf", "NaN", "x"} {
		if _, _, err := ParseXi(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCalibrationDegenerate(t *testing.T) {
	l := mustLoss(t, SoftMargin, 7, 0)
	for _, tc := range []struct {
		name  string
		alpha float64
		steps []int
		eps   float64
	}{{"all m = 0", 0.5, []int{0, 0}, 1}, {"α = 1", 1, []int{2, Inf}, 1}, {"ε = ∞", 0.5, []int{2}, math.Inf(1)}} {
		cal, err := Calibrate(input(l, tc.alpha, tc.steps, 16, 100, tc.eps, 0.2, 1e-4))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !math.IsInf(cal.Beta, 1) || cal.LambdaPrime != 0 || cal.Lambda != 0.2 || cal.ExpectedNoiseNorm(16) != 0 {
			t.Errorf("%s: got β=%g Λ'=%g Λ=%g", tc.name, cal.Beta, cal.LambdaPrime, cal.Lambda)
		}
	}
	for _, bad := range []func(*CalibrationInput){
		func(in *CalibrationInput) { in.Alpha = 0 },
		func(in *CalibrationInput) { in.Xi = 0 },
		func(in *CalibrationInput) { in.Delta = 0 },
		func(in *CalibrationInput) { in.Epsilon = 0 },
		func(in *CalibrationInput) { in.Steps = nil },
		func(in *CalibrationInput) { in.Steps = []int{-3} },
		func(in *CalibrationInput) { in.Omega = 1 },
	} {
		in := input(l, 0.5, []int{2}, 16, 100, 1, 0.2, 1e-4)
		bad(&in)
		if _, err := Calibrate(in); err == nil {
			t.Errorf("invalid input accepted: %+v", in)
		}
	}
}

// TestPsiClosedForm is unit test 5: α Σ_{i=1}^{m−1}(1−α)^i·2i + (1−α)^m·2m
// equals Ψ_m.
func TestPsiClosedForm(t *testing.T) {
	for _, alpha := range []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1} {
		for m := 0; m <= 40; m++ {
			var s float64
			for i := 1; i < m; i++ {
				s += alpha * math.Pow(1-alpha, float64(i)) * 2 * float64(i)
			}
			s += math.Pow(1-alpha, float64(m)) * 2 * float64(m)
			if math.Abs(s-PsiStep(alpha, m)) > 1e-12 {
				t.Errorf("α=%g m=%d: sum %.15g, Ψ_m %.15g", alpha, m, s, PsiStep(alpha, m))
			}
		}
		if alpha < 1 && math.Abs(PsiStep(alpha, 2000)-PsiStep(alpha, Inf)) > 1e-12 {
			t.Errorf("α=%g: Ψ_m does not tend to Ψ_∞", alpha)
		}
	}
	assertRel(t, "Ψ([0,2]) α=.6", Psi(0.6, []int{0, 2}), 0.56, 1e-12)
	// c_sf reference values of unit test 7.
	for _, tc := range []struct{ p, want float64 }{{1e-5, 39.04710018}, {1.0 / 16316 / 7, 39.25769121}} {
		u, err := GammaNorm{Beta: 1, Dim: 16}.TailRadius(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "c_sf", u, tc.want, 1e-9)
	}
}
