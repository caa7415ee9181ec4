package gcon

import (
	"math"
	"testing"
)

// TestLossConstants is unit test 6: the grid suprema over x ∈ [−50, 50],
// y ∈ {0, 1} reproduce c1, c2, c3 (never above, within 1e-4 relative), and
// the derivatives match central finite differences.
func TestLossConstants(t *testing.T) {
	for _, l := range []Loss{
		mustLoss(t, SoftMargin, 1, 0), mustLoss(t, SoftMargin, 7, 0),
		mustLoss(t, PseudoHuber, 1, 0.1), mustLoss(t, PseudoHuber, 7, 0.2), mustLoss(t, PseudoHuber, 3, 0.5),
	} {
		c1, c2, c3 := l.Constants()
		var m1, m2, m3 float64
		for _, y := range []float64{0, 1} {
			for k := 0; k <= 200000; k++ {
				x := -50 + float64(k)*5e-4
				m1 = math.Max(m1, math.Abs(l.D1(x, y)))
				m2 = math.Max(m2, math.Abs(l.D2(x, y)))
				m3 = math.Max(m3, math.Abs(l.D3(x, y)))
			}
		}
		for _, s := range []struct {
			name     string
			got, sup float64
		}{{"c1", m1, c1}, {"c2", m2, c2}, {"c3", m3, c3}} {
			if s.got > s.sup*(1+1e-12) || s.got < s.sup*(1-1e-4) {
				t.Errorf("%v c=%d δ_l=%g: grid sup of %s = %.10g, constant %.10g", l.Kind, l.Classes, l.DeltaL, s.name, s.got, s.sup)
			}
		}
		// Finite differences.
		const h = 1e-5
		for _, y := range []float64{0, 1} {
			for _, x := range []float64{-7, -1.3, -0.2, 0, 0.4, 1, 2.5, 9} {
				fd1 := (l.Value(x+h, y) - l.Value(x-h, y)) / (2 * h)
				fd2 := (l.D1(x+h, y) - l.D1(x-h, y)) / (2 * h)
				fd3 := (l.D2(x+h, y) - l.D2(x-h, y)) / (2 * h)
				for _, s := range []struct {
					name    string
					an, num float64
				}{{"ℓ'", l.D1(x, y), fd1}, {"ℓ''", l.D2(x, y), fd2}, {"ℓ'''", l.D3(x, y), fd3}} {
					if math.Abs(s.an-s.num) > 1e-6*math.Max(1, math.Abs(s.an)) {
						t.Errorf("%v δ_l=%g x=%g y=%g: %s = %.10g, finite difference %.10g", l.Kind, l.DeltaL, x, y, s.name, s.an, s.num)
					}
				}
			}
		}
		// Convexity and the value at the target.
		for _, x := range []float64{-3, 0, 3} {
			if l.D2(x, 1) <= 0 {
				t.Errorf("%v: ℓ'' ≤ 0 at %g", l.Kind, x)
			}
		}
	}
	// Soft margin equals −(1/c)[y log σ + (1−y) log(1−σ)] where that is stable.
	l := mustLoss(t, SoftMargin, 4, 0)
	for _, x := range []float64{-3, 0.5, 2} {
		s := 1 / (1 + math.Exp(-x))
		assertRel(t, "SM y=1", l.Value(x, 1), -math.Log(s)/4, 1e-12)
		assertRel(t, "SM y=0", l.Value(x, 0), -math.Log(1-s)/4, 1e-12)
	}
	if _, err := ParseLoss("hinge"); err == nil {
		t.Error("unknown loss accepted")
	}
	if _, err := NewLoss(PseudoHuber, 3, 0); err == nil {
		t.Error("δ_l = 0 accepted")
	}
}
