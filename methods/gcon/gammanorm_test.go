package gcon

import (
	"math"
	"strconv"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// The Gamma-norm sampler's law: statN draws per case, a law rejected at
// p < statAlpha (fixed seeds, so the outcome is stable).
const (
	statN     = 20000
	statAlpha = 1e-3
)

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// TestGammaNormRadiusAndDirection: the radius has the Gamma(Dim, rate Beta)
// law (moments and KS), every coordinate has E[b_i²] = (Dim+1)/Beta², and
// the direction is uniform on the sphere (its projections on e_1 and on the
// diagonal have the Beta((d−1)/2, (d−1)/2) law; a fair sign at d = 1).
func TestGammaNormRadiusAndDirection(t *testing.T) {
	for _, tc := range []struct {
		dim  int
		beta float64
	}{{1, 0.8}, {3, 2}, {16, 2.5}} {
		g := GammaNorm{Beta: tc.beta, Dim: tc.dim}
		src := dp.NewSource(uint64(40 + tc.dim))
		d := float64(tc.dim)
		radii := make([]float64, statN)
		proj := make([]float64, statN) // projection of the direction on e_1
		diag := make([]float64, statN) // projection on (1,…,1)/√d
		second := make([]float64, tc.dim)
		for n := range radii {
			b, err := g.Sample(src)
			if err != nil {
				t.Fatal(err)
			}
			var r, s float64
			for i, v := range b {
				r += v * v
				s += v
				second[i] += v * v
			}
			r = math.Sqrt(r)
			radii[n] = r
			proj[n] = b[0] / r
			diag[n] = s / (r * math.Sqrt(d))
		}
		// Radius ~ Gamma(shape d, rate β).
		k, rate := d, tc.beta
		testutil.CheckMoments(t, "radius", radii, k/rate, k/(rate*rate), 3*k*(k+2)/math.Pow(rate, 4))
		assertRel(t, "MeanNorm", g.MeanNorm(), d/tc.beta, 1e-15)
		if _, p := testutil.KSPValue(radii, func(r float64) float64 { return mathext.GammaIncReg(k, rate*r) }); p < statAlpha {
			t.Errorf("d=%d: radius fails KS against Gamma(%g, rate %g): p = %g", tc.dim, k, rate, p)
		}
		// E[b_i²] = (d+1)/β² for every coordinate.
		for i, s := range second {
			want := (d + 1) / (rate * rate)
			// Var(b_i²) ≤ E b_i⁴; use a generous 5% band at n = 20,000.
			if m := s / statN; math.Abs(m-want) > 0.05*want {
				t.Errorf("d=%d: E[b_%d²] = %.4g, want %.4g", tc.dim, i, m, want)
			}
		}
		// Direction: uniform on the sphere ⇒ (⟨u,x⟩+1)/2 ~ Beta((d−1)/2, (d−1)/2).
		if tc.dim == 1 {
			var pos int
			for _, p := range proj {
				if p != 1 && p != -1 {
					t.Fatalf("d=1 direction %v is not ±1", p)
				}
				if p > 0 {
					pos++
				}
			}
			if p := testutil.ChiSquarePValue([]int{pos, statN - pos}, []float64{0.5, 0.5}); p < statAlpha {
				t.Errorf("d=1: sign is not fair (%d of %d positive), p = %g", pos, statN, p)
			}
			continue
		}
		a := (d - 1) / 2
		beta := distuv.Beta{Alpha: a, Beta: a}
		for name, xs := range map[string][]float64{"e1": proj, "diagonal": diag} {
			if _, p := testutil.KSPValue(xs, func(v float64) float64 { return beta.CDF((v + 1) / 2) }); p < statAlpha {
				t.Errorf("d=%d: direction projection on %s fails KS: p = %g", tc.dim, name, p)
			}
		}
	}
	if _, err := (GammaNorm{Beta: 0, Dim: 3}).Sample(dp.NewSource(1)); err == nil {
		t.Error("beta 0: want an error")
	}
	if _, err := (GammaNorm{Beta: 1, Dim: 0}).Sample(dp.NewSource(1)); err == nil {
		t.Error("dim 0: want an error")
	}
	if _, err := (GammaNorm{Beta: 1, Dim: 2}).Sample(nil); err == nil {
		t.Error("nil source: want an error")
	}
}

// TestGammaNormTailRadius checks GCON's c_sf (Eq. 21) against reference
// values computed in float64, mostly for δ = 1/|E| with the |E| of GCON's
// Table II and c its number of classes.
func TestGammaNormTailRadius(t *testing.T) {
	for _, tc := range []struct {
		name string
		dim  int
		p    float64
		want float64
	}{
		{"d=16, δ/c=1e-5", 16, 1e-5, 39.04710018},
		{"Cora-ML d=16, δ=1/16316, c=7", 16, 1.0 / 16316 / 7, 39.25769121},
		{"PubMed d=64, δ=1/88648, c=3", 64, 1.0 / 88648 / 3, 106.3584222},
		{"Actor d=32, δ=1/30019, c=5", 32, 1.0 / 30019 / 5, 62.83596141},
	} {
		u, err := GammaNorm{Beta: 1, Dim: tc.dim}.TailRadius(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, tc.name, u, tc.want, 6e-9)
		assertRel(t, tc.name+" survival", mathext.GammaIncRegComp(float64(tc.dim), u), tc.p, 1e-10)
		u2, _ := GammaNorm{Beta: 4, Dim: tc.dim}.TailRadius(tc.p)
		assertRel(t, tc.name+" at beta 4", u2, u/4, 1e-15)
	}
	// The radius is never below the quantile (δ must cover P[‖b‖ > c_sf]):
	// over dimensions 1 … 4096 and tail probabilities 1e-15 … 0.5, the
	// survival at the radius is at most p, and 1e-12 (relative) below the
	// radius it is above p.
	for _, dim := range []int{1, 2, 3, 7, 16, 64, 301, 1433, 4096} {
		for _, p := range []float64{1e-15, 1e-10, 1.0 / 88648 / 3, 1e-3, 0.05, 0.5} {
			d := float64(dim)
			u, err := GammaNorm{Beta: 1, Dim: dim}.TailRadius(p)
			if err != nil {
				t.Fatal(err)
			}
			if q := mathext.GammaIncRegComp(d, u); q > p {
				t.Errorf("d=%d p=%g: radius %v has survival %g > p: below the quantile", dim, p, u, q)
			}
			if q := mathext.GammaIncRegComp(d, u*(1-1e-12)); q <= p {
				t.Errorf("d=%d p=%g: radius %v is not the smallest safe one (survival %g at u·(1−1e-12))", dim, p, u, q)
			}
		}
	}
	for _, p := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := (GammaNorm{Beta: 1, Dim: 3}).TailRadius(p); err == nil {
			t.Errorf("p=%v: want an error", p)
		}
	}
}

// TestExactGamma: Marsaglia–Tsang's output has the Gamma(a, 1)
// probability below each of seven quantiles (shape 1 is the exponential
// branch; the others go through the squeeze and the log test).
func TestExactGamma(t *testing.T) {
	const n = 1_000_000
	ps := []float64{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999}
	for _, a := range []float64{1, 1.5, 2, 5, 64, 1433} {
		src := dp.NewSource(107 + uint64(a))
		g := distuv.Gamma{Alpha: a, Beta: 1}
		qs := make([]float64, len(ps))
		for i, p := range ps {
			qs[i] = g.Quantile(p)
		}
		c := make([]int, len(ps))
		for range n {
			x := sampleGamma(a, src)
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("Gamma(%g) draw %v", a, x)
			}
			for i, q := range qs {
				if x <= q {
					c[i]++
				}
			}
		}
		for i, p := range ps {
			testutil.ExactBinom(t, "Gamma("+ftoa(a)+") below its "+ftoa(p)+" quantile", c[i], n, p)
		}
	}
}
