package gcon

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"gonum.org/v1/gonum/mathext"
)

// GammaNorm is the vector noise of objective perturbation (GCON, Wei et al.,
// Eq. 14; Chaudhuri et al. 2011): a vector b ∈ R^Dim with density
// proportional to exp(−Beta·‖b‖₂).
//
// Sampling follows GCON's Algorithm 2 exactly: the radius ‖b‖ is drawn from
// Erlang/Gamma(shape Dim, RATE Beta) — density x^{Dim−1} e^{−Beta x}
// Beta^Dim/(Dim−1)!, mean Dim/Beta, variance Dim/Beta² — and the direction is
// uniform on the unit sphere (a normalised standard Gaussian vector).
// Beta is a rate (units 1/length), not a scale. Each coordinate then has mean
// 0 and E[b bᵀ] = ((Dim+1)/Beta²)·I. Its privacy meaning is GCON's
// (Calibrate): with Beta from Calibrate, the perturbed minimiser is
// (ε, δ)-edge-DP, δ covering the event that one of the c columns has a
// norm above c_sf (TailRadius at p = δ/c, Beta = 1).
type GammaNorm struct {
	Beta float64 // rate β > 0 of the radius law (1/length)
	Dim  int     // dimension d ≥ 1
}

// errNilSource is returned for a nil noise source.
var errNilSource = errors.New("gcon: nil noise source")

// Validate reports whether the configuration is usable.
func (g GammaNorm) Validate() error {
	if err := dp.CheckPositiveFinite("Gamma-norm rate beta", g.Beta); err != nil {
		return err
	}
	return dp.CheckCount("Gamma-norm dimension", g.Dim)
}

// MeanNorm returns E‖b‖ = Dim/Beta.
func (g GammaNorm) MeanNorm() float64 { return float64(g.Dim) / g.Beta }

// Sample draws one vector b of length Dim from src: first the radius
// (sampleGamma), then Dim standard normals for the direction, redrawn in
// the (probability-zero) case that all are 0.
func (g GammaNorm) Sample(src *dp.Source) ([]float64, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errNilSource
	}
	r := sampleGamma(float64(g.Dim), src) / g.Beta
	b := make([]float64, g.Dim)
	for {
		var ss float64
		for i := range b {
			b[i] = src.Normal()
			ss += b[i] * b[i]
		}
		if ss > 0 {
			s := r / math.Sqrt(ss)
			for i := range b {
				b[i] *= s
			}
			return b, nil
		}
	}
}

// TailRadius returns the radius u with P[‖b‖ > u] = p, i.e. the
// (1−p)-quantile of Gamma(shape Dim, rate Beta), computed from the
// complementary regularised incomplete gamma function Q (accurate for tiny
// p) and polished by bisection. With Beta = 1 and p = δ/c this is GCON's
// c_sf (GCON Eq. 21).
//
// It never returns a radius below the quantile, as computed by Q: Q(d, ·)
// is decreasing, so "Q(d, u) ≤ p" holds exactly at and above the quantile,
// and dp.SearchAbove returns a u at which it holds (within a relative 1e-15
// of the quantile). A radius a hair too small would let ‖b‖ exceed it with
// probability above p, which δ would not cover. Q's own float64 accuracy
// (gonum's mathext.GammaIncRegComp) is assumed.
func (g GammaNorm) TailRadius(p float64) (float64, error) {
	if err := g.Validate(); err != nil {
		return 0, err
	}
	if math.IsNaN(p) || p <= 0 || p >= 1 {
		return 0, fmt.Errorf("gcon: tail probability must lie in (0, 1), got %g", p)
	}
	d := float64(g.Dim)
	u, err := dp.SearchAbove(func(u float64) bool { return mathext.GammaIncRegComp(d, u) <= p }, 0, d+1, 1e-15)
	if err != nil {
		return 0, fmt.Errorf("gcon: tail radius for p=%g: %w", p, err)
	}
	return u / g.Beta, nil
}

// sampleGamma draws from Gamma(shape a ≥ 1, scale 1) by Marsaglia & Tsang
// (2000), "A simple method for generating gamma variables", ACM TOMS 26(3).
// Shape 1 is one src.Exponential(); otherwise each attempt reads
// src.Normal() then src.Uniform() (the order seeded runs depend on).
func sampleGamma(a float64, src *dp.Source) float64 {
	if a == 1 {
		return src.Exponential()
	}
	d := a - 1.0/3
	c := 1 / (3 * math.Sqrt(d))
	for {
		x := src.Normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := src.Uniform()
		if u < 1-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
