package dp

import (
	"math"
	"math/big"
	"testing"
)

// gdpDeltaReference: δ(ε; μ) from mpmath at 40 digits.
var gdpDeltaReference = []struct{ mu, eps, want float64 }{
	{0.5, 1, 0.0068295949831145754},
	{0.5, 10, 9.8551206108501659e-89},
	{1, 30, 4.7093263180975222e-193},
	{2, 5, 0.032281984750072821},
	{0.1, 3, 7.3048061017546759e-200},
	{3, 60, 1.4338597021611082e-77},
	{0.268051, 1, 9.9999236806394018e-6},
	{10, 100, 1.8797170020519157e-7},
}

func TestGDPDelta(t *testing.T) {
	for _, tc := range gdpDeltaReference {
		assertRel(t, "GDPDelta", GDPDelta(tc.mu, tc.eps), tc.want, 1e-10)
	}
	// Increasing in μ, decreasing in ε.
	for _, eps := range []float64{0, 0.5, 2, 8} {
		prev := 0.0
		for _, mu := range []float64{0.1, 0.3, 1, 2, 5} {
			d := GDPDelta(mu, eps)
			if d < prev {
				t.Errorf("δ not increasing in μ at ε=%g μ=%g", eps, mu)
			}
			prev = d
		}
	}
	prev := 1.0
	for _, eps := range []float64{0, 0.1, 1, 3, 10, 30} {
		d := GDPDelta(1.3, eps)
		if d > prev {
			t.Errorf("δ not decreasing in ε at ε=%g", eps)
		}
		prev = d
	}
	if GDPDelta(0, 1) != 0 || !math.IsNaN(GDPDelta(-1, 1)) || !math.IsNaN(GDPDelta(1, -1)) {
		t.Error("GDPDelta special values")
	}
}

// TestGDPEpsilonSpecVectors: forward values of the exact analytic Gaussian
// (autodp's ExactGaussianMechanism composed K times, as in ProGAP's code),
// computed in float64 and cross-checked with autodp, and μ-GDP calibration
// values for CARIBOU's GDP route computed from the exact conversion.
func TestGDPEpsilonSpecVectors(t *testing.T) {
	for _, tc := range []struct {
		k            int
		sigma, delta float64
		want         float64
	}{
		{2, 5, 1e-8, 1.4733066886},
		{1, 1, 1e-5, 4.3771780957},
	} {
		a := NewGDP()
		if err := a.Compose(GaussianEvent{Multiplier: tc.sigma, Count: tc.k}); err != nil {
			t.Fatal(err)
		}
		eps, err := a.Epsilon(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, "exact Gaussian ε", eps, tc.want, 1e-9)
	}
	// μ_GDP(ε, δ=1e-5) for ε = 1, 2, 4, 8, 16, and δ(ε; μ*) = δ.
	for _, tc := range []struct{ eps, mu float64 }{
		{1, 0.268051}, {2, 0.501552}, {4, 0.924931}, {8, 1.666031}, {16, 2.905478},
	} {
		got, err := calibrateWith(tc.eps, 1e-5,
			func(s float64) []Event { return []Event{GDPEvent{Mu: 1 / s}} },
			func() (Accountant, error) { return NewGDP(), nil })
		if err != nil {
			t.Fatal(err)
		}
		mu := 1 / got
		assertAbs(t, "μ_GDP", mu, tc.mu, 6e-7)
		if d := GDPDelta(mu, tc.eps); math.Abs(d-1e-5) > 1e-12 || d > 1e-5 {
			t.Errorf("δ(ε=%g; μ*) = %.15g, want 1e-5 (|diff| < 1e-12, never above)", tc.eps, d)
		}
	}
}

func TestGDPEpsilonProperties(t *testing.T) {
	for _, mu := range []float64{1e-3, 0.05, 0.3, 1, 2.5, 7, 20} {
		for _, delta := range []float64{1e-12, 1e-8, 1e-5, 1e-2, 0.3} {
			eps, err := GDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			if eps == 0 {
				if GDPDelta(mu, 0) > delta {
					t.Errorf("μ=%g δ=%g: ε=0 but δ(0)=%g > δ", mu, delta, GDPDelta(mu, 0))
				}
				continue
			}
			// The returned ε is the upper end of the bracket: δ(ε) ≤ δ, and
			// a hair below it δ exceeds the target.
			if d := GDPDelta(mu, eps); d > delta*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: δ(ε=%g) = %g exceeds the target", mu, delta, eps, d)
			}
			if d := GDPDelta(mu, eps*(1-1e-9)); d <= delta {
				t.Errorf("μ=%g δ=%g: ε=%g is not tight", mu, delta, eps)
			}
			// Never above the RDP closed form.
			if rdp := mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta)); eps > rdp*(1+1e-12) {
				t.Errorf("μ=%g δ=%g: exact ε %g above the RDP bound %g", mu, delta, eps, rdp)
			}
		}
	}
	if e, _ := GDPEpsilon(0, 1e-5); e != 0 {
		t.Error("μ=0 must give ε=0")
	}
	if e, _ := GDPEpsilon(math.Inf(1), 1e-5); !math.IsInf(e, 1) {
		t.Error("μ=∞ must give ε=∞")
	}
	for _, bad := range [][2]float64{{-1, 1e-5}, {math.NaN(), 1e-5}, {1, 0}, {1, 1}, {1, math.NaN()}} {
		if _, err := GDPEpsilon(bad[0], bad[1]); err == nil {
			t.Errorf("GDPEpsilon%v: want an error", bad)
		}
	}
}

func TestGDPAccountantComposition(t *testing.T) {
	a := NewGDP()
	for _, e := range []Event{
		GaussianEvent{Multiplier: 2, Count: 3},
		GDPEvent{Mu: 0.5},
		ComposedEvent{Events: []Event{GaussianEvent{Multiplier: 4, Count: 1}, GDPEvent{Mu: 0.1}}},
	} {
		if err := a.Compose(e); err != nil {
			t.Fatal(err)
		}
	}
	want := math.Sqrt(3.0/4 + 0.25 + 1.0/16 + 0.01)
	assertRel(t, "μ", a.Mu(), want, 1e-15)
	eps, _ := a.Epsilon(1e-5)
	d, err := a.Delta(eps)
	if err != nil {
		t.Fatal(err)
	}
	if d > 1e-5*(1+1e-12) || d < 1e-5*(1-1e-6) {
		t.Errorf("Delta(Epsilon(1e-5)) = %g", d)
	}
	if _, err := a.Delta(-1); err == nil {
		t.Error("Delta(-1): want an error")
	}
}

// High-precision reference for δ(ε; μ), independent of the package's
// numerics: big.Float at 320 bits, with exp by range reduction and Taylor,
// Φ by its Taylor series (|x| < 6) or the Mills-ratio continued fraction.
const gdpBigPrec = 320

func gdpBF(x float64) *big.Float { return new(big.Float).SetPrec(gdpBigPrec).SetFloat64(x) }
func gdpBNew() *big.Float        { return new(big.Float).SetPrec(gdpBigPrec) }

var gdpBigLn2 = func() *big.Float {
	s := gdpBNew() // ln 2 = Σ_{k≥1} 1/(k·2^k)
	for k := 1; k < 400; k++ {
		t := gdpBNew().SetMantExp(gdpBF(1), -k)
		s.Add(s, t.Quo(t, gdpBF(float64(k))))
	}
	return s
}()

var gdpBigSqrt2Pi = func() *big.Float {
	// π = 16 atan(1/5) − 4 atan(1/239) (Machin).
	atanInv := func(n float64) *big.Float {
		x := gdpBNew().Quo(gdpBF(1), gdpBF(n))
		x2 := gdpBNew().Mul(x, x)
		s, p := gdpBNew().Set(x), gdpBNew().Set(x)
		for k := 1; k < 400; k++ {
			p.Mul(p, x2)
			t := gdpBNew().Quo(p, gdpBF(float64(2*k+1)))
			if k%2 == 1 {
				s.Sub(s, t)
			} else {
				s.Add(s, t)
			}
		}
		return s
	}
	a, b := atanInv(5), atanInv(239)
	pi := gdpBNew().Sub(a.Mul(a, gdpBF(16)), b.Mul(b, gdpBF(4)))
	return gdpBNew().Sqrt(pi.Mul(pi, gdpBF(2)))
}()

func gdpBigExp(x *big.Float) *big.Float {
	xf, _ := x.Float64()
	k := math.Round(xf / math.Ln2)
	r := gdpBNew().Sub(x, gdpBNew().Mul(gdpBF(k), gdpBigLn2))
	const m = 20 // e^r = (e^{r/2^m})^(2^m)
	r.SetMantExp(r, -m)
	sum, term := gdpBF(1), gdpBF(1)
	for n := 1; n < 200; n++ {
		term.Mul(term, r)
		term.Quo(term, gdpBF(float64(n)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -gdpBigPrec-10 {
			break
		}
	}
	for i := 0; i < m; i++ {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// gdpBigQ returns Q(x) = Φ(−x).
func gdpBigQ(x *big.Float) *big.Float {
	if x.Sign() < 0 {
		return gdpBNew().Sub(gdpBF(1), gdpBigQ(gdpBNew().Neg(x)))
	}
	xf, _ := x.Float64()
	x2 := gdpBNew().Mul(x, x)
	phi := gdpBigExp(gdpBNew().Neg(gdpBNew().Quo(x2, gdpBF(2))))
	phi.Quo(phi, gdpBigSqrt2Pi)
	if xf < 6 {
		// Φ(x) − ½ = φ(x)·Σ x^{2n+1}/(2n+1)!!
		s, t := gdpBNew().Set(x), gdpBNew().Set(x)
		for n := 1; n < 2000; n++ {
			t.Mul(t, x2)
			t.Quo(t, gdpBF(float64(2*n+1)))
			s.Add(s, t)
			if t.MantExp(nil)-s.MantExp(nil) < -gdpBigPrec-10 {
				break
			}
		}
		return s.Sub(gdpBF(0.5), s.Mul(s, phi))
	}
	// Q = φ·M, M = 1/(x+1/(x+2/(x+3/(x+…)))).
	d := gdpBNew()
	for k := 4000; k >= 1; k-- {
		d = gdpBNew().Quo(gdpBF(float64(k)), d.Add(d, x))
	}
	m := gdpBNew().Quo(gdpBF(1), d.Add(d, x))
	return m.Mul(m, phi)
}

// gdpBigDelta returns δ(ε; μ) = Q(ε/μ − μ/2) − e^ε·Q(ε/μ + μ/2) and
// −dδ/dε = e^ε·Q(ε/μ + μ/2), for the float64 inputs taken exactly.
func gdpBigDelta(mu, eps float64) (delta, slope float64) {
	s := gdpBNew().Quo(gdpBF(eps), gdpBF(mu))
	h := gdpBNew().Quo(gdpBF(mu), gdpBF(2))
	qa := gdpBigQ(gdpBNew().Sub(s, h))
	sl := gdpBigQ(gdpBNew().Add(s, h))
	sl.Mul(sl, gdpBigExp(gdpBF(eps)))
	delta, _ = qa.Sub(qa, sl).Float64()
	slope, _ = sl.Float64()
	return delta, slope
}

// TestGDPEpsilonConservativeHighPrecision guards against the cancellation
// in δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for small μ, where the two
// terms agree to a fraction μ/(ε/μ) and the rounding of each made the
// bisection return an ε whose true δ was above the target (μ = 1e-3,
// δ = 1e-12: by 2.5e-11 relative; μ = 3e-4: 9e-11). Against the 320-bit
// reference: δ(ε(μ, δ)) ≤ δ·(1+1e-13), and ε is within 1e-9 of the true
// root (one Newton step from ε in high precision).
func TestGDPEpsilonConservativeHighPrecision(t *testing.T) {
	for _, tc := range gdpDeltaReference { // the reference itself, vs mpmath
		got, _ := gdpBigDelta(tc.mu, tc.eps)
		assertRel(t, "big.Float δ vs mpmath", got, tc.want, 1e-15)
	}
	var worst float64
	for _, mu := range []float64{1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1, 2, 3.99, 4, 4.01, 10, 30, 100} {
		for _, delta := range []float64{1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2} {
			eps, err := GDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			d, slope := gdpBigDelta(mu, eps)
			if eps == 0 {
				if d > delta {
					t.Errorf("μ=%g δ=%g: ε = 0 but δ(0) = %g", mu, delta, d)
				}
				continue
			}
			worst = math.Max(worst, d/delta-1)
			if d > delta*(1+1e-13) {
				t.Errorf("μ=%g δ=%g: δ(ε = %.17g) = %.17g is above the target by %.3g relative", mu, delta, eps, d, d/delta-1)
			}
			root := eps + (d-delta)/slope
			if math.Abs(eps-root) > 1e-9*root {
				t.Errorf("μ=%g δ=%g: ε = %.17g, true %.17g", mu, delta, eps, root)
			}
			// GDPDelta itself, near the root.
			assertRel(t, "GDPDelta vs big.Float", GDPDelta(mu, eps), d, 1e-13)
		}
	}
	t.Logf("largest relative excess of δ(ε) over the target: %.3g", worst)
}
