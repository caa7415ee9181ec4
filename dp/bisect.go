package dp

import (
	"errors"
	"fmt"
	"math"
)

// safeSide says on which side of a crossing the privacy-conservative values
// lie: those at which bisect's predicate holds.
type safeSide int

const (
	// safeAbove: the predicate holds at and above the crossing (a noise
	// level, a total ε, a tail radius); bisect returns the upper end.
	safeAbove safeSide = iota + 1
	// safeBelow: the predicate holds at and below the crossing (a per-round
	// ε₀ that a budget allows); bisect returns the lower end.
	safeBelow
)

func (s safeSide) String() string {
	switch s {
	case safeAbove:
		return "above"
	case safeBelow:
		return "below"
	}
	return fmt.Sprintf("safeSide(%d)", int(s))
}

// bisectOpts are bisect's settings. The zero value bisects at arithmetic
// midpoints to float64 resolution and does not widen the bracket.
type bisectOpts struct {
	// log bisects at geometric midpoints √(lo·hi), halving the bracket's
	// ratio rather than its width: for scale parameters such as noise
	// multipliers, whose bracket may span orders of magnitude. It needs
	// lo > 0. Where rounding puts √(lo·hi) on an end (adjacent or nearly
	// adjacent floats), the arithmetic midpoint is used.
	log bool
	// relTol stops the bisection once hi − lo ≤ relTol·lo (in log mode
	// this is hi/lo − 1 ≤ relTol): every point of the bracket, the
	// crossing included, is then within relTol of the returned end,
	// relative to the crossing.
	relTol float64
	// absTol stops it once hi − lo ≤ absTol, which also works while lo = 0
	// (a bracket starting at 0 whose crossing may be 0).
	absTol float64
	// minLo > 0 lets the bracket grow downwards, lo halving (the old lo
	// becoming hi) while lo/2 ≥ minLo; 0 keeps lo.
	minLo float64
	// maxHi > 0 lets it grow upwards, hi doubling (the old hi becoming lo)
	// while 2·hi ≤ maxHi; 0 keeps hi.
	maxHi float64
}

// errNoSafeValue is wrapped by bisect's error when no value within the
// widening limits satisfies the predicate.
var errNoSafeValue = errors.New("dp: bisection found no value on the safe side")

// bisect finds the crossing of a monotone predicate on [0, ∞) and returns
// the end of its final bracket on the safe side: safe(x) reports whether x
// is privacy-conservative (the noise meets the budget, the claimed ε covers
// the mechanism, ...), and side says whether those x lie above or below the
// crossing. The returned value is always one at which safe returned true,
// so it is the crossing rounded towards the safe side by at most the
// tolerance — never the other end of the bracket, which may be up to the
// tolerance on the unsafe side. That matters because calibration must
// never under-report ε: a noise level a hair below the crossing, or a
// reported ε a hair below the true one, breaks the guarantee it claims,
// however small the tolerance.
//
// The bracket [lo, hi] (0 ≤ lo < hi, finite) is first made to straddle the
// crossing: the end on the safe side (hi for safeAbove, lo for safeBelow)
// must satisfy safe and the other end must not. Where one does not, the
// bracket moves outwards by factors of 2 in that direction, as far as
// opts.minLo and opts.maxHi allow (see bisectOpts). If no safe value is
// found within them, bisect fails with an error wrapping errNoSafeValue.
// If no unsafe value is found, the crossing lies beyond the limit and
// bisect returns the outermost safe value it evaluated (e.g. for safeAbove,
// lo itself when it is safe and the bracket may not grow downwards).
//
// It then bisects, at arithmetic or (opts.log) geometric midpoints, until
// the bracket meets opts.relTol or opts.absTol, or until no float64 lies
// strictly inside it, which bounds the number of evaluations (about 2100
// for an arithmetic bisection of the whole float64 range, 64 for a
// geometric one) even when both tolerances are 0. A predicate that is not
// monotone still yields a value at which it holds. An error from safe is
// returned at once, as is one for invalid arguments.
func bisect(safe func(x float64) (bool, error), lo, hi float64, side safeSide, opts bisectOpts) (float64, error) {
	if safe == nil {
		return 0, errors.New("dp: bisection needs a predicate")
	}
	if side != safeAbove && side != safeBelow {
		return 0, fmt.Errorf("dp: bisection: invalid safe side %v", side)
	}
	if !(lo >= 0 && lo < hi && hi <= math.MaxFloat64) || (opts.log && lo == 0) {
		return 0, fmt.Errorf("dp: bisection: invalid bracket [%g, %g] (log %t)", lo, hi, opts.log)
	}
	if !(opts.relTol >= 0 && opts.absTol >= 0) ||
		!(opts.minLo == 0 || opts.minLo > 0 && opts.minLo <= lo) ||
		!(opts.maxHi == 0 || opts.maxHi >= hi && opts.maxHi <= math.MaxFloat64) {
		return 0, fmt.Errorf("dp: bisection: invalid settings %+v for bracket [%g, %g]", opts, lo, hi)
	}
	above := side == safeAbove
	// ends returns the bracket's end on the safe side and the other one.
	ends := func() (safeEnd, other float64) {
		if above {
			return hi, lo
		}
		return lo, hi
	}
	// grow moves the bracket one step up (hi doubling) or down (lo
	// halving), the old end becoming the inner one; it reports false when
	// the limits forbid the step.
	grow := func(up bool) bool {
		if up {
			if !(opts.maxHi > 0 && 2*hi <= opts.maxHi) {
				return false
			}
			lo, hi = hi, 2*hi
		} else {
			if !(opts.minLo > 0 && lo/2 >= opts.minLo) {
				return false
			}
			lo, hi = lo/2, lo
		}
		return true
	}
	// Find a safe end, growing towards the safe side.
	first, _ := ends()
	x := first
	ok, err := safe(x)
	if err != nil {
		return 0, err
	}
	otherUnsafe := false // whether the other end is known to be unsafe
	for !ok {
		if !grow(above) {
			return 0, fmt.Errorf("%w (tried %g to %g)", errNoSafeValue, first, x)
		}
		otherUnsafe = true // the old end, now the inner one
		x, _ = ends()
		if ok, err = safe(x); err != nil {
			return 0, err
		}
	}
	// Find an unsafe other end, growing away from the safe side.
	if !otherUnsafe {
		_, x = ends()
		if ok, err = safe(x); err != nil {
			return 0, err
		}
		for ok {
			if !grow(!above) {
				return x, nil // safe as far as the bracket may grow
			}
			_, x = ends()
			if ok, err = safe(x); err != nil {
				return 0, err
			}
		}
	}

	for !(hi-lo <= opts.absTol || opts.log && hi/lo-1 <= opts.relTol || !opts.log && hi-lo <= opts.relTol*lo) {
		mid := lo + (hi-lo)/2
		if opts.log {
			g := math.Sqrt(lo * hi)
			if g == 0 || math.IsInf(g, 1) { // lo·hi under- or overflowed
				g = math.Sqrt(lo) * math.Sqrt(hi)
			}
			if lo < g && g < hi { // else rounding, near resolution
				mid = g
			}
		}
		if !(lo < mid && mid < hi) {
			break // lo and hi are adjacent floats
		}
		if ok, err = safe(mid); err != nil {
			return 0, err
		}
		if ok == above {
			hi = mid
		} else {
			lo = mid
		}
	}
	if above {
		return hi, nil
	}
	return lo, nil
}

// SearchAbove returns the smallest x ≥ lo, up to a relative tolerance, at
// which the monotone predicate safe holds, rounded towards the safe side:
// safe(x) is false below a crossing c and true at and above it (a total ε
// that covers a mechanism, a tail radius whose survival is small enough),
// and the returned x is always one at which safe returned true, so never
// below c. It is dp's conservative bisection, for callers outside dp that
// invert a bound of their own.
//
// Contract, for 0 ≤ lo < hi ≤ math.MaxFloat64 and relTol ≥ 0:
//
//   - the result x satisfies safe(x) = true, whatever safe is (a
//     non-monotone predicate still gets a value at which it holds);
//   - for a monotone safe with crossing c > lo: c ≤ x ≤ c·(1 + relTol),
//     or x is the next float64 above the last unsafe point evaluated when
//     relTol is below float64 resolution (relTol = 0 bisects to adjacent
//     floats);
//   - if safe(lo) already holds (c ≤ lo), x = lo: the bracket never grows
//     downwards;
//   - if safe(hi) does not hold, the bracket grows upwards, hi doubling (the
//     old hi becoming lo) while it stays ≤ math.MaxFloat64; if no safe value
//     is found that way, SearchAbove returns an error and no value.
//
// The number of evaluations is bounded even at relTol = 0 (at most about
// 1,024 doublings plus 2,100 arithmetic bisection steps over the whole
// float64 range; about 50 steps at relTol = 1e-15 once the bracket is
// within a factor 2 of c). A nil predicate, an invalid bracket or a
// negative or NaN relTol is an error.
func SearchAbove(safe func(x float64) bool, lo, hi, relTol float64) (float64, error) {
	if safe == nil {
		return 0, errors.New("dp: search needs a predicate")
	}
	x, err := bisect(func(x float64) (bool, error) { return safe(x), nil },
		lo, hi, safeAbove, bisectOpts{relTol: relTol, maxHi: math.MaxFloat64})
	if errors.Is(err, errNoSafeValue) {
		return 0, fmt.Errorf("dp: search: no value in [%g, %g] at which the predicate holds", lo, math.MaxFloat64)
	}
	return x, err
}
