package dp

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// quadRDP computes D_α(μ1‖μ0) (dir=1) or D_α(μ0‖μ1) (dir=0) by Simpson in log space.
func quadRDP(q, z, alpha float64, dir int) float64 {
	lo := -40*z - 2
	hi := alpha + 40*z + 2
	if z < 1 {
		hi = alpha/(z*z)*0 + alpha + 40*z + 2
	}
	n := 100000
	h := (hi - lo) / float64(n)
	logf := func(x float64) float64 {
		lphi := -x*x/(2*z*z) - math.Log(z) - 0.5*math.Log(2*math.Pi)
		// log(1-q + q e^{(2x-1)/(2z^2)})
		lr := logAdd(math.Log1p(-q), math.Log(q)+(2*x-1)/(2*z*z))
		if dir == 1 {
			return lphi + alpha*lr
		}
		return lphi + (1-alpha)*lr
	}
	vals := make([]float64, n+1)
	m := math.Inf(-1)
	for i := 0; i <= n; i++ {
		vals[i] = logf(lo + float64(i)*h)
		if vals[i] > m {
			m = vals[i]
		}
	}
	var s float64
	for i, v := range vals {
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		s += w * math.Exp(v-m)
	}
	return (m + math.Log(s*h/3)) / (alpha - 1)
}

func TestScratchDirections(t *testing.T) {
	worst := 0.0
	for _, q := range []float64{1e-3, 0.01, 0.1, 0.3, 0.5, 0.8, 0.99} {
		for _, z := range []float64{0.3, 0.5, 0.8, 1, 2, 5} {
			for _, a := range []float64{1.01, 1.1, 1.37, 1.5, 1.99, 2.5, 3.3, 5.75, 9.5, 17.25} {
				got := SubsampledGaussianRDP(q, z, a)
				d1 := quadRDP(q, z, a, 1)
				d0 := quadRDP(q, z, a, 0)
				if math.IsInf(got, 1) || d1 > 700 {
					continue
				}
				r := (math.Max(d0, d1) - got) / math.Max(d0, d1)
				if r > worst {
					worst = r
				}
				if r > 1e-7 {
					fmt.Printf("q=%g z=%g a=%g got=%.10g d1=%.10g d0=%.10g rel=%.3g\n", q, z, a, got, d1, d0, r)
				}
				if d0 > d1*(1+1e-9) {
					fmt.Printf("  REVERSE DIRECTION LARGER q=%g z=%g a=%g d1=%.10g d0=%.10g\n", q, z, a, d1, d0)
				}
			}
		}
	}
	fmt.Println("worst rel underestimate", worst)
}

func TestScratchTiming(t *testing.T) {
	for _, c := range [][3]float64{{0.5, 100, 1.01}, {0.5, 1e4, 1.01}, {0.5, 1e6, 1.01}, {0.5, 1e8, 1.5}, {1e-9, 1, 1.5}, {0.999999, 1, 1.5}, {0.01, 0.01, 1.5}, {0.01, 0.05, 10.5}, {0.3, 0.1, 100.5}, {0.01, 1e3, 1000.5}} {
		st := time.Now()
		v := SubsampledGaussianRDP(c[0], c[1], c[2])
		vi := SubsampledGaussianRDP(c[0], c[1], math.Ceil(c[2]))
		fmt.Printf("q=%g z=%g a=%g -> %.6g (ceil-int %.6g) in %v\n", c[0], c[1], c[2], v, vi, time.Since(st))
	}
}

func TestScratchDirections2(t *testing.T) {
	worst := 0.0
	for _, q := range []float64{1e-4, 0.02, 0.2, 0.5, 0.9} {
		for _, z := range []float64{0.1, 0.2, 0.4, 3, 20} {
			for _, a := range []float64{1.001, 1.05, 1.5, 4.5, 30.5, 100.5, 250.25} {
				got := SubsampledGaussianRDP(q, z, a)
				d1 := quadRDP(q, z, a, 1)
				d0 := quadRDP(q, z, a, 0)
				if math.IsInf(got, 1) {
					fmt.Printf("INF q=%g z=%g a=%g d1=%.6g\n", q, z, a, d1)
					continue
				}
				r := (math.Max(d0, d1) - got) / math.Max(d0, d1)
				if r > worst {
					worst = r
				}
				if r > 1e-7 || got > 1.01*d1 {
					fmt.Printf("q=%g z=%g a=%g got=%.10g d1=%.10g d0=%.10g rel=%.3g\n", q, z, a, got, d1, d0, r)
				}
				if d0 > d1*(1+1e-9) {
					fmt.Printf("  REVERSE DIRECTION LARGER q=%g z=%g a=%g d1=%.10g d0=%.10g\n", q, z, a, d1, d0)
				}
			}
		}
	}
	fmt.Println("worst rel underestimate", worst)
}

func TestScratchPerf(t *testing.T) {
	for _, z := range []float64{1, 10, 100, 1000, 1e4} {
		for _, q := range []float64{0.01, 0.5} {
			st := time.Now()
			a, _ := NewRDP()
			_ = a.Compose(PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: 100})
			t1 := time.Since(st)
			e, o, _ := a.EpsilonAndOrder(1e-5)
			fmt.Printf("z=%g q=%g compose %v total %v eps=%.6g order=%.4g\n", z, q, t1, time.Since(st), e, o)
		}
	}
	st := time.Now()
	zz, err := CalibratePoissonGaussian(0.5, 0.05, 1e-5, 10, ConversionImproved)
	fmt.Println("calib", zz, err, time.Since(st))
}

func TestScratchGDP(t *testing.T) {
	for _, mu := range []float64{1e-8, 1e-5, 1e-3, 0.01, 1, 10, 100, 1e4, 1e6, 1e8, 1e10, 1e12, 1e14, 1e15, 1e16, 1e17, 1e20, 1e100, 1e155, 1e160, 1e200} {
		for _, d := range []float64{1e-5, 1e-12, 0.5} {
			e, err := GDPEpsilon(mu, d)
			ld := logGDPDelta(mu, e)
			// approx lower bound: eps >= mu^2/2 + mu*t where Phi(-t) - phi(t)/(t+mu) = delta
			fmt.Printf("mu=%g d=%g eps=%.17g err=%v logδ(eps)=%.6g target %.6g  (rdp bound %.6g)\n", mu, d, e, err, ld, math.Log(d), mu*mu/2+mu*math.Sqrt(2*math.Log(1/d)))
		}
	}
	fmt.Println(GDPDelta(1, math.Inf(1)))
	g := NewGDP()
	_ = g.Compose(GDPEvent{Mu: 1})
	fmt.Println(g.Delta(math.Inf(1)))
}

func TestScratchExtreme(t *testing.T) {
	bad := 0
	for _, q := range []float64{1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-9} {
		for _, z := range []float64{1e-3, 0.01, 0.1, 0.3, 1, 10, 1e3} {
			for _, k := range []int{2, 3, 10, 100, 1000} {
				lo := SubsampledGaussianRDP(q, z, float64(k))
				hi := SubsampledGaussianRDP(q, z, float64(k+1))
				for _, tt := range []float64{1e-9, 0.25, 0.5, 0.75, 1 - 1e-9} {
					a := float64(k) + tt
					st := time.Now()
					v := SubsampledGaussianRDP(q, z, a)
					el := time.Since(st)
					cgfUp := ((1-tt)*float64(k-1)*lo + tt*float64(k)*hi) / (a - 1)
					if v < lo*(1-1e-9) || math.IsNaN(v) || el > 50*time.Millisecond || (v > cgfUp*(1+1e-6) && !math.IsInf(v, 1)) {
						bad++
						fmt.Printf("q=%g z=%g a=%g v=%.10g lo=%.10g hi=%.10g cgfUp=%.10g %v\n", q, z, a, v, lo, hi, cgfUp, el)
					}
				}
			}
		}
	}
	fmt.Println("bad", bad)
}

func TestScratchFallback(t *testing.T) {
	n, fb := 0, 0
	for lm := -6.0; lm <= 5; lm += 0.05 {
		mu := math.Pow(10, lm)
		for le := -8.0; le <= 5; le += 0.05 {
			eps := math.Pow(10, le)
			a := -eps/mu + mu/2
			b := -eps/mu - mu/2
			la := logNormCDF(a)
			lnb := logNormCDF(b)
			lb := eps + lnb
			n++
			if la-lb <= 0x1p-48*(eps+math.Abs(lnb)+math.Abs(la)) {
				if la > -700 {
					fb++
					if fb < 20 {
						fmt.Printf("fallback mu=%g eps=%g la=%g gap=%g\n", mu, eps, la, la-lb)
					}
				}
			}
		}
	}
	fmt.Println(n, fb)
}

func TestScratchMisc(t *testing.T) {
	st := time.Now()
	fmt.Println(SubsampledGaussianRDP(0.5, 1e9, 1.01), time.Since(st))
	st = time.Now()
	fmt.Println(SubsampledGaussianRDP(0.01, 1e12, 1.01), time.Since(st))
	st = time.Now()
	fmt.Println(SubsampledGaussianRDP(0.5, 1e-160, 1.5), SubsampledGaussianRDP(0.5, 5e-324, 2.5), SubsampledGaussianRDP(5e-324, 1, 2.5), SubsampledGaussianRDP(5e-324, 1, 2), time.Since(st))
	fmt.Println(SubsampledGaussianRDP(0.3, 0.5, 65536), SubsampledGaussianRDP(0.3, 0.5, 65537), SubsampledGaussianRDP(0.3, 0.5, 1e5+0.5), SubsampledGaussianRDP(0.3, 50, 1e6+0.5))
	worst := 0.0
	for _, q := range []float64{1e-6, 0.01, 0.3, 0.9} {
		for e := 1e-6; e < 1000; e *= 1.7 {
			in, _ := InnerEpsilon(e, q)
			back, _ := AmplifiedEpsilon(in, q)
			if r := back/e - 1; r > worst {
				worst = r
			}
		}
	}
	fmt.Println("inner roundtrip worst excess", worst)
}
