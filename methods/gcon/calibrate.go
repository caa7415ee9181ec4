package gcon

import (
	"fmt"
	"github.com/dpgnn/dpgnn/layers"
	"math"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
)

// Inf is the step count m = ∞ (the PPR limit R_∞ = α(I − (1−α)Ã)^{-1}).
const Inf = layers.PPRConverge

// DefaultOmega is the budget divider ω of Theorem 1 (fixed at 0.9 in the
// paper).
const DefaultOmega = 0.9

// DefaultXi is the ξ of Eq. 22 used by the calibration test vectors.
const DefaultXi = 1e-6

// ParseXi reads a --xi value: a positive number, or "auto" for ξ = Λ_min.
func ParseXi(s string) (xi float64, auto bool, err error) {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		return 0, true, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, false, fmt.Errorf("--xi: %q is not a positive number or auto", s)
	}
	return v, false, nil
}

// PsiStep is Lemma 2's edge sensitivity of Z_m = R_m X in the metric
// ψ(Z) = Σ_i ‖z'_i − z_i‖₂ for unit-norm rows of X:
// Ψ_m = 2(1−α)/α·[1 − (1−α)^m], Ψ_∞ = 2(1−α)/α, Ψ_0 = 0.
func PsiStep(alpha float64, m int) float64 {
	if m == 0 {
		return 0
	}
	base := 2 * (1 - alpha) / alpha
	if m == Inf {
		return base
	}
	return base * (1 - math.Pow(1-alpha, float64(m)))
}

// Psi is the sensitivity of the concatenation (1/s)[Z_{m_1} | … | Z_{m_s}]:
// the mean of the Ψ_{m_i} (Eq. 20).
func Psi(alpha float64, steps []int) float64 {
	var s float64
	for _, m := range steps {
		s += PsiStep(alpha, m)
	}
	return s / float64(len(steps))
}

// CalibrationInput holds what CALIBRATE (GCON Theorem 1, Eqs. 17–24) reads. Every field is
// public: hyperparameters, ε, δ, n1, c and d; no graph statistic.
type CalibrationInput struct {
	Epsilon float64 // ε > 0 (+Inf: no privacy)
	Delta   float64 // δ ∈ (0, 1), split over the c columns
	Omega   float64 // ω ∈ (0, 1)
	Xi      float64 // ξ > 0 of Eq. 22 (ignored with XiAuto)
	// XiAuto sets ξ = Λ_min, so Λ ≥ 2Λ_min (with a tiny
	// ξ and Λ below Λ_min, c_θ, Λ' and the noise explode). Λ_min depends on
	// public quantities only.
	XiAuto  bool
	Lambda  float64 // the requested Λ ≥ 0 (may be raised by Eq. 22)
	C1, C2  float64 // sup|ℓ'|, sup|ℓ''|
	C3      float64 // sup|ℓ'''|
	N1      int     // rows in the training loss
	Classes int     // c
	Dim     int     // d = s·d1, the length of each θ_j
	Alpha   float64 // α ∈ (0, 1]
	Steps   []int   // m_1..m_s (Inf for ∞)
}

// Calibration is CALIBRATE's output with its intermediate quantities.
type Calibration struct {
	Psi       float64 // Ψ(Z)
	Csf       float64 // (1−δ/c)-quantile of Gamma(d, 1)
	LambdaIn  float64 // Λ requested
	LambdaMin float64 // c·c2·Ψ·c_sf/(n1·ω·ε), the threshold of Eq. 22
	Lambda    float64 // Λ used (Eq. 22)
	Xi        float64 // ξ used in Eq. 22
	CTheta    float64 // c_θ (Eq. 23)
	EpsLambda float64 // ε_Λ (Eq. 24)
	// LambdaPrime is Λ' (Eq. 17), the extra quadratic perturbation.
	LambdaPrime float64
	// Beta is the rate of the noise-norm law (Eq. 18): ‖b_j‖ ~ Gamma(d, rate
	// β); +Inf means no noise (Ψ = 0 or ε = ∞).
	Beta float64
	// Epsilon is the ε the calibration accounts for: ln of the Jacobian bound
	// (with Λ+Λ') plus β·c·(c1+c2·c_θ)·Ψ (Lemmas 7 and 8); ≤ the target.
	Epsilon float64
}

// ExpectedNoiseNorm is E‖b_j‖ = d/β (0 without noise).
func (c Calibration) ExpectedNoiseNorm(d int) float64 {
	if math.IsInf(c.Beta, 1) {
		return 0
	}
	return float64(d) / c.Beta
}

func (in CalibrationInput) validate() error {
	switch {
	case !(in.Epsilon > 0):
		return fmt.Errorf("gcon: ε must be positive, got %v", in.Epsilon)
	case !(in.Omega > 0 && in.Omega < 1):
		return fmt.Errorf("gcon: ω must lie in (0, 1), got %v", in.Omega)
	case !in.XiAuto && (!(in.Xi > 0) || math.IsInf(in.Xi, 1)):
		return fmt.Errorf("gcon: ξ must be positive and finite, got %v", in.Xi)
	case !(in.Lambda >= 0) || math.IsInf(in.Lambda, 1):
		return fmt.Errorf("gcon: Λ must be non-negative and finite, got %v", in.Lambda)
	case in.N1 < 1 || in.Classes < 1 || in.Dim < 1:
		return fmt.Errorf("gcon: n1, c and d must be positive, got %d, %d, %d", in.N1, in.Classes, in.Dim)
	case !(in.Alpha > 0 && in.Alpha <= 1):
		return fmt.Errorf("gcon: α must lie in (0, 1], got %v", in.Alpha)
	case len(in.Steps) == 0:
		return fmt.Errorf("gcon: no propagation steps")
	case !(in.C1 > 0 && in.C2 > 0 && in.C3 > 0):
		return fmt.Errorf("gcon: loss constants must be positive, got %v, %v, %v", in.C1, in.C2, in.C3)
	}
	for _, m := range in.Steps {
		if m < 0 && m != Inf {
			return fmt.Errorf("gcon: invalid step count %d", m)
		}
	}
	if !math.IsInf(in.Epsilon, 1) {
		if err := dp.CheckDelta(in.Delta); err != nil {
			return err
		}
	}
	return nil
}

// Calibrate is GCON's CALIBRATE (Theorem 1, Eqs. 17–24), in the
// order that makes Λ well defined: it is overwritten by Eq. 22 before c_θ, ε_Λ, Λ' and β use
// it. Degenerate cases: Ψ = 0 (all m_i = 0, or α = 1: edges unused) or
// ε = ∞ give β = +Inf (B = 0), Λ' = 0 and Λ unchanged.
//
// It is a calibrator of its own, not a call of run.Calibrate or
// dp.CalibrateNoise, because objective perturbation is another kind of
// mechanism: its noise is the perturbation term B of the loss (a Gamma-norm
// vector of scale 1/β) and the added regulariser Λ', not a Gaussian
// multiplier composed by an accountant, and Theorem 1 gives them in closed
// form for the target ε, with δ spent on the tail radius c_sf. There is
// nothing to bisect.
func Calibrate(in CalibrationInput) (Calibration, error) {
	if err := in.validate(); err != nil {
		return Calibration{}, err
	}
	cal := Calibration{Psi: Psi(in.Alpha, in.Steps), LambdaIn: in.Lambda, Lambda: in.Lambda, Beta: math.Inf(1)}
	if cal.Psi == 0 {
		cal.Epsilon = 0
		return cal, nil
	}
	if math.IsInf(in.Epsilon, 1) {
		cal.Epsilon = math.Inf(1)
		return cal, nil
	}
	c, d, n1 := float64(in.Classes), float64(in.Dim), float64(in.N1)
	eps, om, psi := in.Epsilon, in.Omega, cal.Psi
	csf, err := GammaNorm{Beta: 1, Dim: in.Dim}.TailRadius(in.Delta / c)
	if err != nil {
		return Calibration{}, fmt.Errorf("gcon: c_sf: %w", err)
	}
	cal.Csf = csf
	// Eq. 22.
	cal.LambdaMin = c * in.C2 * psi * csf / (n1 * om * eps)
	xi := in.Xi
	if in.XiAuto {
		xi = cal.LambdaMin
	}
	cal.Xi = xi
	cal.Lambda = math.Max(in.Lambda, cal.LambdaMin+xi)
	lam := cal.Lambda
	// Eq. 23.
	den := n1*om*eps*lam - c*in.C2*psi*csf
	if !(den > 0) {
		return Calibration{}, fmt.Errorf("gcon: Eq. 23 denominator %g is not positive (raise ξ)", den)
	}
	cal.CTheta = (n1*om*eps*in.C1 + c*in.C1*psi*csf) / den
	// Eq. 24.
	jac := (2*in.C2 + in.C3*cal.CTheta) * psi
	cal.EpsLambda = c * d * math.Log1p(jac/(d*n1*lam))
	// Eq. 17.
	if cal.EpsLambda > (1-om)*eps {
		cal.LambdaPrime = c*jac/(n1*(1-om)*eps) - lam
	}
	// Eq. 18.
	dens := c * (in.C1 + in.C2*cal.CTheta) * psi
	cal.Beta = math.Max(eps-cal.EpsLambda, om*eps) / dens
	cal.Epsilon = c*d*math.Log1p(jac/(d*n1*(lam+cal.LambdaPrime))) + cal.Beta*dens
	return cal, nil
}
