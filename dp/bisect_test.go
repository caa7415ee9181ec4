package dp

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// threshold is the predicate of a crossing at c: x ≥ c safe (safeAbove) or
// x ≤ c safe (safeBelow). It records every x it is asked about.
type threshold struct {
	c     float64
	side  safeSide
	calls []float64
}

func (p *threshold) holds(x float64) bool {
	if p.side == safeAbove {
		return x >= p.c
	}
	return x <= p.c
}

func (p *threshold) safe(x float64) (bool, error) {
	p.calls = append(p.calls, x)
	return p.holds(x), nil
}

// nearestUnsafe is the evaluated unsafe point closest to the crossing: the
// other end of bisect's final bracket.
func (p *threshold) nearestUnsafe(t *testing.T) float64 {
	t.Helper()
	best := math.NaN()
	for _, x := range p.calls {
		if p.holds(x) {
			continue
		}
		if math.IsNaN(best) || p.side == safeAbove && x > best || p.side == safeBelow && x < best {
			best = x
		}
	}
	if math.IsNaN(best) {
		t.Fatal("no unsafe point was evaluated")
	}
	return best
}

func TestBisectReturnsSafeEnd(t *testing.T) {
	const c = 0.7
	for _, tc := range []struct {
		side safeSide
		opts bisectOpts
	}{
		{safeAbove, bisectOpts{relTol: 1e-3}},
		{safeAbove, bisectOpts{relTol: 1e-3, log: true}},
		{safeBelow, bisectOpts{relTol: 1e-3}},
		{safeBelow, bisectOpts{relTol: 1e-3, log: true}},
	} {
		p := &threshold{c: c, side: tc.side}
		x, err := bisect(p.safe, 0.1, 5, tc.side, tc.opts)
		if err != nil {
			t.Fatalf("%v %+v: %v", tc.side, tc.opts, err)
		}
		if !p.holds(x) {
			t.Errorf("%v %+v: returned %g, which is unsafe", tc.side, tc.opts, x)
		}
		other := p.nearestUnsafe(t)
		if tc.side == safeAbove && !(x >= c && other < c && x-other <= 1e-3*other) ||
			tc.side == safeBelow && !(x <= c && other > c && other-x <= 1e-3*x) {
			t.Errorf("%v %+v: returned %g, unsafe end %g, crossing %g", tc.side, tc.opts, x, other, c)
		}
	}
}

// With no tolerance it bisects to float64 resolution, so an exact
// threshold predicate gives the crossing itself, on either side.
func TestBisectFullResolution(t *testing.T) {
	for _, c := range []float64{1e-300, 0.1, 1, math.Pi, 12345.678, 1e300} {
		for _, side := range []safeSide{safeAbove, safeBelow} {
			for _, log := range []bool{false, true} {
				lo, hi := c/3, min(c*3, math.MaxFloat64)
				p := &threshold{c: c, side: side}
				x, err := bisect(p.safe, lo, hi, side, bisectOpts{log: log})
				if err != nil || x != c {
					t.Errorf("c=%g %v log=%t: got %g, %v", c, side, log, x, err)
				}
				if log && len(p.calls) > 70 {
					t.Errorf("c=%g %v log: %d evaluations", c, side, len(p.calls))
				}
			}
		}
	}
}

func TestBisectTolerance(t *testing.T) {
	for _, relTol := range []float64{1e-3, 1e-9, 1e-14} {
		for _, log := range []bool{false, true} {
			for _, c := range []float64{2e-3, 0.5, 3, 700} {
				p := &threshold{c: c, side: safeAbove}
				x, err := bisect(p.safe, 1e-3, 1e3, safeAbove, bisectOpts{log: log, relTol: relTol})
				if err != nil {
					t.Fatal(err)
				}
				n := len(p.calls)
				lo := p.nearestUnsafe(t)
				// Met, but not overshot by more than one halving (log:
				// the ratio's square root).
				if !(x-lo <= relTol*lo && x-lo > relTol*lo/4) {
					t.Errorf("relTol=%g log=%t c=%g: bracket [%.17g, %.17g], relative width %g", relTol, log, c, lo, x, (x-lo)/lo)
				}
				if log {
					// log2(ln(1e6)/relTol) halvings, plus the two ends.
					if want := int(math.Ceil(math.Log2(math.Log(1e6)/relTol))) + 3; n > want {
						t.Errorf("relTol=%g log c=%g: %d evaluations, want ≤ %d", relTol, c, n, want)
					}
				}
			}
		}
	}
	// Absolute tolerance with a bracket starting at 0 whose crossing is 0:
	// x > 0 is safe, 0 is not.
	calls := 0
	x, err := bisect(func(x float64) (bool, error) { calls++; return x > 0, nil }, 0, 1, safeAbove, bisectOpts{absTol: 1e-6})
	if err != nil || !(x > 0 && x <= 1e-6 && x > 0.25e-6) {
		t.Errorf("absTol: got %g, %v", x, err)
	}
	if calls > 24 {
		t.Errorf("absTol: %d evaluations", calls)
	}
	// relTol alone never holds while lo = 0: it then runs to resolution.
	x, err = bisect(func(x float64) (bool, error) { return x > 0, nil }, 0, 1, safeAbove, bisectOpts{relTol: 1e-3})
	if err != nil || x != math.SmallestNonzeroFloat64 {
		t.Errorf("relTol with crossing 0: got %g, %v", x, err)
	}
}

func TestBisectGrowsBracket(t *testing.T) {
	for _, tc := range []struct {
		c      float64
		side   safeSide
		lo, hi float64
	}{
		{1e6, safeAbove, 0.5, 1},  // up to a safe hi
		{1e-6, safeAbove, 0.5, 1}, // down to an unsafe lo
		{1e6, safeBelow, 0.5, 1},  // up to an unsafe hi
		{1e-6, safeBelow, 0.5, 1}, // down to a safe lo
	} {
		for _, log := range []bool{false, true} {
			p := &threshold{c: tc.c, side: tc.side}
			opts := bisectOpts{log: log, relTol: 1e-12, minLo: 1e-12, maxHi: 1e12}
			x, err := bisect(p.safe, tc.lo, tc.hi, tc.side, opts)
			if err != nil {
				t.Fatalf("c=%g %v: %v", tc.c, tc.side, err)
			}
			// 1e-12 and the rounding of hi/lo − 1.
			if !p.holds(x) || math.Abs(x-tc.c) > 1.001e-12*tc.c {
				t.Errorf("c=%g %v log=%t: got %.17g", tc.c, tc.side, log, x)
			}
		}
	}
	// Growth from a bracket starting at 0.
	x, err := bisect(func(x float64) (bool, error) { return x >= 1e30, nil }, 0, 1, safeAbove, bisectOpts{relTol: 1e-12, maxHi: math.MaxFloat64})
	if err != nil || !(x >= 1e30 && x-1e30 <= 1e-12*1e30) {
		t.Errorf("from 0: got %g, %v", x, err)
	}
}

func TestBisectNoSafeValue(t *testing.T) {
	never := func(float64) (bool, error) { return false, nil }
	for _, tc := range []struct {
		side safeSide
		opts bisectOpts
	}{
		{safeAbove, bisectOpts{}},
		{safeAbove, bisectOpts{maxHi: 100}},
		{safeAbove, bisectOpts{maxHi: math.MaxFloat64}},
		{safeBelow, bisectOpts{}},
		{safeBelow, bisectOpts{minLo: 1e-3}},
		{safeBelow, bisectOpts{minLo: math.SmallestNonzeroFloat64}},
	} {
		if x, err := bisect(never, 0.5, 1, tc.side, tc.opts); !errors.Is(err, errNoSafeValue) {
			t.Errorf("%v %+v: got %g, %v; want errNoSafeValue", tc.side, tc.opts, x, err)
		}
	}
	// A crossing just beyond maxHi is not found either.
	p := &threshold{c: 300, side: safeAbove}
	if x, err := bisect(p.safe, 0.5, 1, safeAbove, bisectOpts{maxHi: 300}); !errors.Is(err, errNoSafeValue) {
		t.Errorf("crossing beyond maxHi: got %g, %v", x, err)
	}
	// A side stated wrongly is caught rather than answered with an unsafe
	// value.
	p = &threshold{c: 0.7, side: safeBelow}
	if x, err := bisect(p.safe, 0.5, 1, safeAbove, bisectOpts{maxHi: 1e6}); !errors.Is(err, errNoSafeValue) {
		t.Errorf("wrong side: got %g, %v", x, err)
	}
}

// A crossing beyond the limits on the unsafe side gives the outermost safe
// value tried.
func TestBisectCrossingBeyondUnsafeLimit(t *testing.T) {
	always := func(float64) (bool, error) { return true, nil }
	for _, tc := range []struct {
		side safeSide
		opts bisectOpts
		want float64
	}{
		{safeAbove, bisectOpts{}, 0.5},
		{safeAbove, bisectOpts{minLo: 0.1}, 0.125},
		{safeBelow, bisectOpts{}, 1},
		{safeBelow, bisectOpts{maxHi: 10}, 8},
	} {
		if x, err := bisect(always, 0.5, 1, tc.side, tc.opts); err != nil || x != tc.want {
			t.Errorf("%v %+v: got %g, %v; want %g", tc.side, tc.opts, x, err, tc.want)
		}
	}
}

func TestBisectPredicateError(t *testing.T) {
	boom := errors.New("boom")
	for _, failAt := range []int{1, 2, 3, 10} {
		calls := 0
		_, err := bisect(func(x float64) (bool, error) {
			calls++
			if calls == failAt {
				return false, boom
			}
			return x >= 0.3, nil
		}, 0.5, 1, safeAbove, bisectOpts{minLo: 1e-3, relTol: 1e-9})
		if !errors.Is(err, boom) || calls != failAt {
			t.Errorf("failure at call %d: got %v after %d calls", failAt, err, calls)
		}
	}
}

func TestBisectInvalid(t *testing.T) {
	ok := func(x float64) (bool, error) { return x >= 0.5, nil }
	nan := math.NaN()
	for i, tc := range []struct {
		f      func(float64) (bool, error)
		lo, hi float64
		side   safeSide
		opts   bisectOpts
	}{
		{nil, 0, 1, safeAbove, bisectOpts{}},
		{ok, 0, 1, 0, bisectOpts{}},
		{ok, 0, 1, 3, bisectOpts{}},
		{ok, 1, 1, safeAbove, bisectOpts{}},
		{ok, 2, 1, safeAbove, bisectOpts{}},
		{ok, -1, 1, safeAbove, bisectOpts{}},
		{ok, nan, 1, safeAbove, bisectOpts{}},
		{ok, 0, nan, safeAbove, bisectOpts{}},
		{ok, 0, math.Inf(1), safeAbove, bisectOpts{}},
		{ok, 0, 1, safeAbove, bisectOpts{log: true}},
		{ok, 0.1, 1, safeAbove, bisectOpts{relTol: -1}},
		{ok, 0.1, 1, safeAbove, bisectOpts{relTol: nan}},
		{ok, 0.1, 1, safeAbove, bisectOpts{absTol: -1}},
		{ok, 0.1, 1, safeAbove, bisectOpts{minLo: 0.2}},
		{ok, 0.1, 1, safeAbove, bisectOpts{minLo: -1}},
		{ok, 0.1, 1, safeAbove, bisectOpts{minLo: nan}},
		{ok, 0, 1, safeAbove, bisectOpts{minLo: 1e-3}},
		{ok, 0.1, 1, safeAbove, bisectOpts{maxHi: 0.5}},
		{ok, 0.1, 1, safeAbove, bisectOpts{maxHi: math.Inf(1)}},
		{ok, 0.1, 1, safeAbove, bisectOpts{maxHi: nan}},
	} {
		if x, err := bisect(tc.f, tc.lo, tc.hi, tc.side, tc.opts); err == nil || errors.Is(err, errNoSafeValue) {
			t.Errorf("case %d: got %g, %v; want an invalid-argument error", i, x, err)
		}
	}
}

// stepFunction is a monotone step function: g(x) = vals[i] on
// [breaks[i-1], breaks[i]) (breaks[-1] = 0, breaks[n] = ∞), vals
// increasing or decreasing.
type stepFunction struct {
	breaks, vals []float64
}

func (s stepFunction) at(x float64) float64 {
	return s.vals[sort.SearchFloat64s(s.breaks, math.Nextafter(x, math.Inf(1)))]
}

// Over random monotone step functions, a random target, side, mode,
// tolerance, bracket and limits, the result is always safe: on the safe
// side of the true crossing (computed from the breaks) and, when the
// crossing was within reach, within the tolerance of it; a failure happens
// only when no safe value was within reach.
func TestBisectPropertySafeSide(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	logUniform := func(a, b float64) float64 {
		return math.Exp(math.Log(a) + r.Float64()*(math.Log(b)-math.Log(a)))
	}
	var failures, bracketed int
	for trial := 0; trial < 50000; trial++ {
		n := 1 + r.IntN(20)
		s := stepFunction{breaks: make([]float64, n), vals: make([]float64, n+1)}
		for i := range s.breaks {
			s.breaks[i] = logUniform(1e-8, 1e8)
		}
		sort.Float64s(s.breaks)
		v := r.Float64()
		for i := range s.vals {
			s.vals[i] = v
			v += 0.01 + r.Float64()
		}
		side := safeAbove
		if r.IntN(2) == 0 {
			side = safeBelow
		} else {
			// Decreasing, like ε in the noise: safe above the crossing.
			for i, j := 0, len(s.vals)-1; i < j; i, j = i+1, j-1 {
				s.vals[i], s.vals[j] = s.vals[j], s.vals[i]
			}
		}
		// The budget lies between two values (or beyond all of them), so
		// the crossing is a break (or 0 or ∞); g ≤ target is safe.
		k := r.IntN(n + 2)
		var target float64
		switch {
		case k == 0:
			target = min(s.vals[0], s.vals[n]) - 0.5 // nothing is safe
		case k == n+1:
			target = max(s.vals[0], s.vals[n]) + 0.5 // everything is safe
		default:
			sorted := append([]float64(nil), s.vals...)
			sort.Float64s(sorted)
			target = (sorted[k-1] + sorted[k]) / 2
		}
		safe := func(x float64) (bool, error) { return s.at(x) <= target, nil }
		// The true crossing: the first break at which safety changes.
		crossing := math.Inf(1)
		if side == safeBelow {
			crossing = 0
		}
		if ok0, _ := safe(0); k == 0 || k == n+1 {
			if side == safeAbove && ok0 {
				crossing = 0
			}
			if side == safeBelow && ok0 {
				crossing = math.Inf(1)
			}
		} else {
			for i := range s.breaks {
				before, _ := safe(math.Nextafter(s.breaks[i], 0))
				after, _ := safe(s.breaks[i])
				if before != after {
					crossing = s.breaks[i]
					break
				}
			}
		}
		// safe(x) holds for x ≥ crossing (safeAbove) or x < crossing
		// (safeBelow: the break itself has the next, larger value).
		onSafeSide := func(x float64) bool {
			if side == safeAbove {
				return x >= crossing
			}
			return x < crossing || crossing == math.Inf(1)
		}

		opts := bisectOpts{log: r.IntN(2) == 0}
		switch r.IntN(3) {
		case 0:
			opts.relTol = logUniform(1e-15, 1e-2)
		case 1:
			opts.absTol = logUniform(1e-12, 1)
		}
		lo := logUniform(1e-9, 1e9)
		hi := lo * logUniform(1.0001, 1e4)
		if !opts.log && r.IntN(4) == 0 {
			lo = 0
		}
		if r.IntN(2) == 0 && lo > 0 {
			opts.minLo = lo * logUniform(1e-12, 1)
		}
		if r.IntN(2) == 0 {
			opts.maxHi = hi * logUniform(1, 1e12)
		}

		x, err := bisect(safe, lo, hi, side, opts)
		// The reachable range: hi·2^j ≤ maxHi and lo/2^j ≥ minLo.
		top, bottom := hi, lo
		for opts.maxHi > 0 && 2*top <= opts.maxHi {
			top *= 2
		}
		for opts.minLo > 0 && bottom/2 >= opts.minLo {
			bottom /= 2
		}
		if err != nil {
			reachable, _ := safe(top)
			if side == safeBelow {
				reachable, _ = safe(bottom)
			}
			if !errors.Is(err, errNoSafeValue) || reachable {
				t.Fatalf("trial %d: %v (safe value reachable: %t)", trial, err, reachable)
			}
			failures++
			continue
		}
		if ok, _ := safe(x); !ok || !onSafeSide(x) {
			t.Fatalf("trial %d: %v crossing %g, bracket [%g, %g], %+v: returned %g, unsafe", trial, side, crossing, lo, hi, opts, x)
		}
		if crossing > bottom && crossing < top {
			bracketed++
			tol := max(opts.absTol, opts.relTol*crossing, 2*(math.Nextafter(crossing, math.Inf(1))-crossing))
			if math.Abs(x-crossing) > tol {
				t.Fatalf("trial %d: %v crossing %g, %+v: returned %g, off by %g > %g", trial, side, crossing, opts, x, math.Abs(x-crossing), tol)
			}
		}
	}
	// Every outcome was exercised.
	if failures < 1000 || bracketed < 10000 {
		t.Errorf("%d failures, %d bracketed crossings", failures, bracketed)
	}
	t.Logf("%d failures, %d bracketed crossings", failures, bracketed)
}

// TestSearchAboveNeverUnsafe checks SearchAbove's contract over random
// crossings c spanning the float64 range, random brackets below, around
// and above c (lo = 0 included) and tolerances down to 0: the result is
// always a value at which the predicate holds (never below c), within
// relTol of c when c > lo (exactly c at relTol 0), lo itself when c ≤ lo,
// and the same value dp's bisection returns for the safe-above search it
// wraps (so callers moved onto it keep their results bit for bit).
func TestSearchAboveNeverUnsafe(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	logUniform := func(a, b float64) float64 {
		return math.Exp(math.Log(a) + r.Float64()*(math.Log(b)-math.Log(a)))
	}
	var grown, below int
	for trial := range 20000 {
		c := logUniform(1e-300, 1e300)
		var lo, hi float64
		switch r.IntN(4) {
		case 0: // bracket far below c: it must grow upwards
			hi = c * logUniform(1e-200, 1)
			lo = hi * logUniform(1e-3, 0.999)
		case 1: // around c
			lo = c * logUniform(1e-6, 1)
			hi = c * logUniform(1, 1e6)
		case 2: // above c: the answer is lo
			lo = c * logUniform(1, 1e6)
			hi = lo * logUniform(1.001, 1e3)
		default: // from 0
			hi = c * logUniform(1e-100, 1e100)
		}
		if !(lo < hi) || math.IsInf(hi, 0) {
			continue
		}
		relTol := 0.0
		if r.IntN(4) > 0 {
			relTol = logUniform(1e-16, 1e-1)
		}
		var calls int
		safe := func(x float64) bool { calls++; return x >= c }
		x, err := SearchAbove(safe, lo, hi, relTol)
		if err != nil {
			t.Fatalf("trial %d: c=%g [%g, %g] relTol %g: %v", trial, c, lo, hi, relTol, err)
		}
		if !safe(x) {
			t.Fatalf("trial %d: c=%g [%g, %g] relTol %g: returned %g, below the crossing", trial, c, lo, hi, relTol, x)
		}
		switch {
		case c <= lo:
			below++
			if x != lo {
				t.Fatalf("trial %d: crossing %g ≤ lo %g, returned %g, want lo", trial, c, lo, x)
			}
		case relTol == 0 && x != c:
			t.Fatalf("trial %d: relTol 0, crossing %g, returned %g", trial, c, x)
		case x-c > relTol*c:
			t.Fatalf("trial %d: crossing %g relTol %g, returned %g (rel err %g)", trial, c, relTol, x, (x-c)/c)
		}
		if c > hi {
			grown++
		}
		if calls > 3200 {
			t.Fatalf("trial %d: %d evaluations", trial, calls)
		}
		want, err := bisect(func(x float64) (bool, error) { return x >= c, nil }, lo, hi, safeAbove,
			bisectOpts{relTol: relTol, maxHi: math.MaxFloat64})
		if err != nil || want != x {
			t.Fatalf("trial %d: SearchAbove %g, bisect %g (%v)", trial, x, want, err)
		}
	}
	if grown < 2000 || below < 2000 {
		t.Errorf("too few grown (%d) or below-lo (%d) cases", grown, below)
	}

	// A predicate that is not monotone still gets a value at which it holds.
	for trial := range 2000 {
		c := logUniform(1e-10, 1e10)
		holes := make([]float64, 5)
		for i := range holes {
			holes[i] = c * logUniform(1, 1e3)
		}
		spiky := func(x float64) bool {
			for _, h := range holes {
				if x >= h && x < h*(1+1e-3) {
					return false
				}
			}
			return x >= c || math.Mod(x, 1) < 0.1
		}
		x, err := SearchAbove(spiky, 0, c*logUniform(1e-3, 1e3), 1e-12)
		if err != nil || !spiky(x) {
			t.Fatalf("trial %d: non-monotone: returned %g (%v), unsafe", trial, x, err)
		}
	}

	for _, tc := range []struct {
		name           string
		safe           func(float64) bool
		lo, hi, relTol float64
	}{
		{"nil predicate", nil, 0, 1, 0},
		{"negative lo", func(float64) bool { return true }, -1, 1, 0},
		{"empty bracket", func(float64) bool { return true }, 1, 1, 0},
		{"infinite hi", func(float64) bool { return true }, 0, math.Inf(1), 0},
		{"NaN hi", func(float64) bool { return true }, 0, math.NaN(), 0},
		{"negative tolerance", func(float64) bool { return true }, 0, 1, -1e-9},
		{"NaN tolerance", func(float64) bool { return true }, 0, 1, math.NaN()},
		{"never safe", func(float64) bool { return false }, 0, 1, 1e-9},
		{"safe only at +Inf", func(x float64) bool { return math.IsInf(x, 1) }, 1, 2, 1e-9},
	} {
		if x, err := SearchAbove(tc.safe, tc.lo, tc.hi, tc.relTol); err == nil {
			t.Errorf("%s: returned %g, want an error", tc.name, x)
		}
	}
}
