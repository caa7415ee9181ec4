package dp

// Empirical privacy auditing: the statistics core of `dpgnn audit`.
//
// A mechanism M is (ε, δ)-DP for neighbours G, G′ only if every test that
// tries to tell M(G) from M(G′) has false-positive rate FPR (G′ called "G")
// and false-negative rate FNR (G called "G′") with
//
//	FPR + e^ε·FNR ≥ 1 − δ   and   FNR + e^ε·FPR ≥ 1 − δ
//
// (Kairouz, Oh & Viswanath 2015; the trade-off function view of Dong, Roth &
// Su 2019). Running M many times on each side, fixing a test, and bounding
// FPR and FNR from above with exact (Clopper–Pearson) binomial confidence
// bounds turns this into a high-probability lower bound on ε (Jagielski,
// Ullman & Oprea 2020; Nasr et al. 2021). A lower bound above the ε the
// accountant claims means the implementation (or its proof) is broken; a
// lower bound below it says nothing more than "not caught".

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// ClopperPearsonUpper returns the one-sided Clopper–Pearson upper confidence
// bound, at confidence level level, on the success probability p of a
// binomial with k successes in n trials: the p_hi with
// P(Bin(n, p_hi) ≤ k) = 1 − level, i.e. the level-quantile of
// Beta(k+1, n−k); it is 1 when k = n. For every p, P(p ≤ p_hi) ≥ level
// (the bound is exact, not asymptotic, and conservative).
//
// It returns NaN for n < 1, k < 0, k > n or level outside (0, 1).
func ClopperPearsonUpper(k, n int, level float64) float64 {
	if n < 1 || k < 0 || k > n || !(level > 0 && level < 1) {
		return math.NaN()
	}
	if k == n {
		return 1
	}
	if k == 0 {
		// P(Bin(n,p) = 0) = (1−p)^n = 1 − level, in closed form.
		return -math.Expm1(math.Log1p(-level) / float64(n))
	}
	return betaQuantileUp(float64(k+1), float64(n-k), level)
}

// ClopperPearsonLower returns the one-sided Clopper–Pearson lower confidence
// bound, at confidence level level, on the success probability p of a
// binomial with k successes in n trials: the p_lo with
// P(Bin(n, p_lo) ≥ k) = 1 − level, i.e. the (1−level)-quantile of
// Beta(k, n−k+1); it is 0 when k = 0. For every p, P(p ≥ p_lo) ≥ level.
//
// It returns NaN for n < 1, k < 0, k > n or level outside (0, 1).
func ClopperPearsonLower(k, n int, level float64) float64 {
	if n < 1 || k < 0 || k > n || !(level > 0 && level < 1) {
		return math.NaN()
	}
	// By symmetry, the lower bound for k successes is one minus the upper
	// bound for n − k failures.
	return 1 - ClopperPearsonUpper(n-k, n, level)
}

// betaQuantileUp returns the y-quantile of Beta(a, b), never below the true
// quantile by more than rounding: cephes' inverse is checked against the
// forward function and, if it landed below, moved up by bisection.
func betaQuantileUp(a, b, y float64) float64 {
	x := mathext.InvRegIncBeta(a, b, y)
	if !(x >= 0 && x <= 1) {
		x = 0 // not expected; the bisection below recovers
	}
	if mathext.RegIncBeta(a, b, x) >= y {
		return x
	}
	q, err := bisect(func(q float64) (bool, error) { return mathext.RegIncBeta(a, b, q) >= y, nil },
		x, 1, safeAbove, bisectOpts{relTol: 1e-15})
	if err != nil {
		return 1 // I(1) = 1 ≥ y: not expected, and 1 bounds every quantile
	}
	return q
}

// EpsilonLowerBound returns a lower bound on ε, holding with probability at
// least confidence, for a mechanism claimed (ε, delta)-DP, from one fixed
// test's outcomes: fp false positives among negatives runs on G′ (G′ called
// "G") and fn false negatives among positives runs on G (G called "G′").
//
// With FPR_hi = ClopperPearsonUpper(fp, negatives, c) and FNR_hi =
// ClopperPearsonUpper(fn, positives, c) at c = 1 − (1−confidence)/2 each
// (a union bound, so both hold together with probability ≥ confidence),
//
//	ε_lb = max(0, ln((1−δ−FNR_hi)/FPR_hi), ln((1−δ−FPR_hi)/FNR_hi)),
//
// since an (ε, δ)-DP mechanism has FPR + e^ε·FNR ≥ 1−δ and
// FNR + e^ε·FPR ≥ 1−δ for every test. A term whose numerator is not
// positive contributes nothing. FPR_hi and FNR_hi are positive whenever the
// counts are valid, so ε_lb is finite. ε is in nats.
//
// The test must be fixed before the runs it is evaluated on are seen (Audit
// chooses it on separate runs); choosing it on the same runs voids the
// confidence statement.
//
// It returns NaN for invalid input: negatives or positives < 1, a count
// outside [0, its total], delta outside [0, 1), or confidence outside
// (0, 1).
func EpsilonLowerBound(fp, negatives, fn, positives int, delta, confidence float64) float64 {
	if negatives < 1 || positives < 1 || fp < 0 || fp > negatives || fn < 0 || fn > positives ||
		!(delta >= 0 && delta < 1) || !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	level := 1 - (1-confidence)/2
	return epsFromUppers(ClopperPearsonUpper(fp, negatives, level), ClopperPearsonUpper(fn, positives, level), delta)
}

// epsFromUppers is the ε lower bound from upper bounds on FPR and FNR.
func epsFromUppers(fprHi, fnrHi, delta float64) float64 {
	lb := 0.0
	if num := 1 - delta - fnrHi; num > 0 {
		lb = math.Max(lb, math.Log(num)-math.Log(fprHi))
	}
	if num := 1 - delta - fprHi; num > 0 {
		lb = math.Max(lb, math.Log(num)-math.Log(fnrHi))
	}
	return lb
}

// MinAuditRuns is the fewest runs Audit accepts in each part (estimation
// and evaluation) of each side.
const MinAuditRuns = 10

// AuditConfig configures Audit; the zero value uses the defaults.
type AuditConfig struct {
	// EstimateFraction is the fraction of each side's runs (the first ones)
	// used to choose the test: the direction and the threshold. The rest are
	// the evaluation runs the bound is computed on. 0 means the default,
	// DefaultEstimateFraction(dimension, runs).
	EstimateFraction float64
	// Confidence is the probability with which EpsilonLB is a valid lower
	// bound, in (0, 1); 0 means 0.95.
	Confidence float64
	// Delta is the δ of the guarantee under test, in [0, 1): EpsilonLB
	// bounds from below the smallest ε for which the mechanism is
	// (ε, Delta)-DP. 0 means pure DP.
	Delta float64
}

// DefaultConfidence is the confidence Audit uses when AuditConfig.Confidence
// is 0.
const DefaultConfidence = 0.95

// DefaultEstimateFraction returns the fraction of runs Audit uses to choose
// its test when AuditConfig.EstimateFraction is 0, for outputs of the given
// dimension and the given number of runs per side (the smaller side). It
// depends on these sizes only, never on the values, so it cannot bias the
// bound.
//
// The bound's power comes from the evaluation runs: at small rates it is
// limited by the Clopper–Pearson bound on a tail count, so every run moved
// to evaluation helps. The estimation runs must estimate the mean difference
// (whose error grows like sqrt(dimension/runs)) and place the threshold. It
// returns 0.2 for one-dimensional outputs (only a sign to estimate) and when
// that leaves at least 200 estimation runs per coordinate (runs ≥
// 1000·dimension), and 0.5 otherwise. Measured on Gaussian mechanisms
// (ε_lb averaged over seeds): 1 coordinate, 10,000 runs, ε = 2: 0.80 at 0.2,
// 0.76 at 0.5; 8 coordinates, 10,000 runs: 0.78 at 0.2, 0.75 at 0.5;
// 64 coordinates, 10,000 runs: 0.71 at 0.2, 0.74 at 0.5; 256 coordinates,
// 2,000 runs, ε = 4: 0.71 at 0.2, 0.86 at 0.5.
func DefaultEstimateFraction(dimension, runs int) float64 {
	if dimension <= 1 || runs >= 1000*dimension {
		return 0.2
	}
	return 0.5
}

// AuditResult is the outcome of Audit. Every float field is finite, so it
// marshals to JSON as is. "Positive" means "the run came from G";
// "negative" means "from G′".
type AuditResult struct {
	// EpsilonLB is the ε lower bound (nats): with probability at least
	// Confidence over the runs, the mechanism is not (ε, Delta)-DP for any
	// ε < EpsilonLB. 0 means the test did not tell G from G′.
	EpsilonLB  float64 `json:"epsilon_lb"`
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	// Statistic describes the test in words.
	Statistic string `json:"statistic"`

	// MuLB is a lower bound on μ for a μ-GDP release (a Gaussian mechanism
	// with μ = sensitivity/std): every test of a μ-GDP mechanism has
	// Φ⁻¹(1 − FPR) − Φ⁻¹(FNR) ≤ μ (Dong, Roth & Su 2019), and MuLB is that
	// difference at the Clopper–Pearson upper bounds of a second test
	// (threshold ThresholdGDP, chosen on the estimation runs to maximise it;
	// FPGDP and FNGDP its evaluation errors). EpsilonLBGDP is the ε at Delta
	// of MuLB-GDP. With probability at least Confidence the release is not
	// μ-GDP for any μ < MuLB: for a release claimed as a Gaussian mechanism
	// (its claim is a μ-GDP claim) that refutes every claimed ε below
	// EpsilonLBGDP, with far fewer runs than EpsilonLB needs (Nasr et al.
	// 2023). For other claims only EpsilonLB applies.
	MuLB         float64 `json:"mu_lb"`
	EpsilonLBGDP float64 `json:"epsilon_lb_gdp"`
	ThresholdGDP float64 `json:"threshold_gdp"`
	GIfAboveGDP  bool    `json:"g_if_above_gdp"`
	FPGDP        int     `json:"fp_gdp"`
	FNGDP        int     `json:"fn_gdp"`

	// Trials and TrialsNeighbour are the runs on G and on G′; Dimension is
	// the length of each run's output.
	Trials          int `json:"trials"`
	TrialsNeighbour int `json:"trials_neighbour"`
	Dimension       int `json:"dimension"`

	// EstimateFraction is the fraction of runs used to choose the test;
	// EstimatePositives and EstimateNegatives are those runs' counts (the
	// first runs of G and of G′).
	EstimateFraction  float64 `json:"estimate_fraction"`
	EstimatePositives int     `json:"estimate_positives"`
	EstimateNegatives int     `json:"estimate_negatives"`
	// EstimateEpsilonLB is the bound the chosen test achieves on the
	// estimation runs. It is NOT a valid bound (the test was tuned on those
	// runs); it is reported to compare with EpsilonLB.
	EstimateEpsilonLB float64 `json:"estimate_epsilon_lb"`

	// DirectionNorm is the Euclidean norm of the mean difference
	// mean(G) − mean(G′) on the estimation runs, in output units.
	DirectionNorm float64 `json:"direction_norm"`
	// Threshold is the cut on the score ⟨x, d⟩. A run is called "G" when its
	// score is ≥ Threshold if GIfAbove, and when it is < Threshold
	// otherwise.
	Threshold float64 `json:"threshold"`
	GIfAbove  bool    `json:"g_if_above"`

	// The test's outcome on the evaluation runs: FP of Negatives runs on G′
	// were called "G", FN of Positives runs on G were called "G′".
	FP        int `json:"fp"`
	Negatives int `json:"negatives"`
	FN        int `json:"fn"`
	Positives int `json:"positives"`
	// FPR and FNR are the observed rates FP/Negatives and FN/Positives;
	// FPRUpper and FNRUpper their one-sided Clopper–Pearson upper bounds at
	// level 1 − (1−Confidence)/2 each.
	FPR      float64 `json:"fpr"`
	FNR      float64 `json:"fnr"`
	FPRUpper float64 `json:"fpr_upper"`
	FNRUpper float64 `json:"fnr_upper"`
}

// Audit measures an empirical ε lower bound from runs of one release of a
// mechanism: g[i] is the output vector of run i on G, gp[i] of run i on the
// neighbour G′ (independent runs; all of the same length, coordinates
// aligned by the caller).
//
// The test is a linear projection with a threshold. The first
// EstimateFraction of each side's runs (in the order given: shuffle first
// if the order carries information) choose it: the direction
// d = mean(g_est) − mean(gp_est), scores s(x) = ⟨x, d⟩, and the threshold
// and orientation whose predicted bound on the evaluation runs is largest
// (see chooseThreshold: candidates between consecutive distinct estimation
// scores, rated by EpsilonLowerBound at the evaluation sizes with the
// estimation rates taken at their Clopper–Pearson upper bounds). The
// remaining runs evaluate the fixed test, and EpsilonLB is
// EpsilonLowerBound on their counts. Because the test depends on the
// estimation runs only, which are independent of the evaluation runs, the
// confidence statement holds exactly (Clopper–Pearson, union bound over
// FPR and FNR), whatever the mechanism.
//
// Power. The bound is limited by the number of runs, not only by the
// mechanism: for the Gaussian mechanism at ε = 2, δ = 1e-5, even the best
// threshold known in advance, with every one of 10,000 runs per side used
// for evaluation, gives about 0.93 (about 1.05 with 20,000 and 1.29 with
// 100,000 evaluation runs). A projection on the mean difference only sees
// mechanisms whose output distributions differ in mean.
//
// The inputs are read, never modified or copied: memory is one vector of
// the dimension plus one score per estimation run. Each estimation run is
// read twice (for the direction, then for its score), every other run once.
//
// It fails for empty or ragged inputs, zero-length outputs, G and G′
// outputs of different lengths, NaN or infinite values, fewer than
// MinAuditRuns runs in either part of either side, and invalid settings.
func Audit(g, gp [][]float64, cfg AuditConfig) (AuditResult, error) {
	if len(g) == 0 || len(gp) == 0 {
		return AuditResult{}, fmt.Errorf("dp: audit needs runs on both G and G′, got %d and %d", len(g), len(gp))
	}
	dim := len(g[0])
	if dim == 0 {
		return AuditResult{}, errors.New("dp: audit: run 0 on G has an empty output")
	}
	for _, side := range []struct {
		name string
		runs [][]float64
	}{{"G", g}, {"G′", gp}} {
		for i, x := range side.runs {
			if len(x) != dim {
				return AuditResult{}, fmt.Errorf("dp: audit: run %d on %s has %d values, want %d (the length of run 0 on G)", i, side.name, len(x), dim)
			}
		}
	}
	return audit(
		func(i int, _ bool) ([]float64, error) { return g[i], nil },
		func(i int, _ bool) ([]float64, error) { return gp[i], nil },
		len(g), len(gp), cfg)
}

// AuditSampler returns the output of run i (0 ≤ i < trials) of one side of
// an audit. first is true the first time AuditStream asks for run i and
// false when it asks again.
//
// AuditStream asks for every estimation run twice (the direction needs all
// of them before any score can be computed, and holding them all may not
// fit in memory): the sampler should return the same output both times,
// e.g. by deriving run i's randomness from (seed, side, i) with
// Source.Split. The bound stays valid if it does not (a fresh draw is as
// independent of the evaluation runs as the first one), but the reported
// test then mixes two samples. The returned slice is only read, and not
// kept after the next call.
type AuditSampler func(i int, first bool) ([]float64, error)

// AuditStream is Audit with the runs produced on demand instead of held in
// memory: g(i, ·) and gp(i, ·) give run i on G and on G′, for
// i = 0, …, trials−1 on each side. Memory is one run at a time plus the
// direction and one score per estimation run, so releases of any size can
// be audited. Runs are requested in order, estimation runs of G then of G′
// (first = true), the same again (first = false), then the evaluation runs
// of G and of G′ (first = true); each run is requested with first = true
// exactly once. A sampler error is returned, wrapped with the run and the
// side, and stops the audit.
func AuditStream(g, gp AuditSampler, trials int, cfg AuditConfig) (AuditResult, error) {
	if g == nil || gp == nil {
		return AuditResult{}, errors.New("dp: audit needs a sampler for G and for G′")
	}
	if err := CheckCount("audit trials", trials); err != nil {
		return AuditResult{}, err
	}
	return audit(g, gp, trials, trials, cfg)
}

// audit is the shared body of Audit and AuditStream: nG runs from g, nGp
// from gp.
func audit(g, gp AuditSampler, nG, nGp int, cfg AuditConfig) (AuditResult, error) {
	if cfg.Confidence == 0 {
		cfg.Confidence = DefaultConfidence
	}
	if !(cfg.Confidence > 0 && cfg.Confidence < 1) {
		return AuditResult{}, fmt.Errorf("dp: audit confidence must lie in (0, 1), got %g", cfg.Confidence)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return AuditResult{}, fmt.Errorf("dp: audit delta must lie in [0, 1), got %g", cfg.Delta)
	}
	if cfg.EstimateFraction != 0 && !(cfg.EstimateFraction > 0 && cfg.EstimateFraction < 1) {
		return AuditResult{}, fmt.Errorf("dp: audit estimate fraction must lie in (0, 1), got %g", cfg.EstimateFraction)
	}
	// Run 0 on G fixes the dimension (and, through it, the default split).
	x0, err := g(0, true)
	if err != nil {
		return AuditResult{}, fmt.Errorf("dp: audit: run 0 on G: %w", err)
	}
	dim := len(x0)
	if dim == 0 {
		return AuditResult{}, errors.New("dp: audit: run 0 on G has an empty output")
	}
	if cfg.EstimateFraction == 0 {
		cfg.EstimateFraction = DefaultEstimateFraction(dim, min(nG, nGp))
	}
	mPos := int(math.Round(cfg.EstimateFraction * float64(nG)))
	mNeg := int(math.Round(cfg.EstimateFraction * float64(nGp)))
	for _, c := range []struct {
		name        string
		total, used int
	}{{"G", nG, mPos}, {"G′", nGp, mNeg}} {
		if c.used < MinAuditRuns || c.total-c.used < MinAuditRuns {
			return AuditResult{}, fmt.Errorf("dp: audit: %d runs on %s split %d/%d (estimate fraction %g); each part needs at least %d",
				c.total, c.name, c.used, c.total-c.used, cfg.EstimateFraction, MinAuditRuns)
		}
	}
	sides := [2]struct {
		name   string
		sample AuditSampler
		m, n   int
	}{{"G", g, mPos, nG}, {"G′", gp, mNeg, nGp}}
	get := func(side, i int, first bool) ([]float64, error) {
		s := sides[side]
		if side == 0 && i == 0 && first {
			return x0, nil
		}
		x, err := s.sample(i, first)
		if err != nil {
			return nil, fmt.Errorf("dp: audit: run %d on %s: %w", i, s.name, err)
		}
		if len(x) != dim {
			return nil, fmt.Errorf("dp: audit: run %d on %s has %d values, want %d (the length of run 0 on G)", i, s.name, len(x), dim)
		}
		return x, nil
	}

	// Pass 1: the direction d = mean(g_est) − mean(gp_est).
	d := make([]float64, dim)
	for side, sign := range [2]float64{1, -1} {
		scale := sign / float64(sides[side].m)
		for i := range sides[side].m {
			x, err := get(side, i, true)
			if err != nil {
				return AuditResult{}, err
			}
			for j, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return AuditResult{}, fmt.Errorf("dp: audit: run %d on %s has value %g at coordinate %d", i, sides[side].name, v, j)
				}
				d[j] += scale * v
			}
		}
	}
	var norm float64
	for _, v := range d {
		norm = math.Hypot(norm, v)
	}
	if math.IsInf(norm, 0) || math.IsNaN(norm) {
		return AuditResult{}, errors.New("dp: audit: the mean difference overflows; rescale the outputs")
	}

	// Pass 2: the estimation scores, and the test chosen on them.
	var est [2][]float64
	for side := range sides {
		est[side] = make([]float64, sides[side].m)
		for i := range est[side] {
			x, err := get(side, i, false)
			if err != nil {
				return AuditResult{}, err
			}
			if est[side][i], err = score(x, d, sides[side].name, i); err != nil {
				return AuditResult{}, err
			}
		}
	}
	level := 1 - (1-cfg.Confidence)/2
	nPos, nNeg := nG-mPos, nGp-mNeg
	thr, above := chooseThreshold(est[0], est[1], nPos, nNeg, cfg.Delta, level)
	var estFP, estFN int
	for _, s := range est[0] {
		if !calledG(s, thr, above) {
			estFN++
		}
	}
	for _, s := range est[1] {
		if calledG(s, thr, above) {
			estFP++
		}
	}
	estLB := epsFromUppers(ClopperPearsonUpper(estFP, mNeg, level), ClopperPearsonUpper(estFN, mPos, level), cfg.Delta)
	thrMu, aboveMu := chooseThresholdFor(est[0], est[1], nPos, nNeg, level, muFromUppers)

	// Pass 3: the fixed test on the evaluation runs. errs[side] counts the
	// runs of G called "G′" (false negatives) and of G′ called "G" (false
	// positives).
	var errs, errsMu [2]int
	for side := range sides {
		for i := sides[side].m; i < sides[side].n; i++ {
			x, err := get(side, i, true)
			if err != nil {
				return AuditResult{}, err
			}
			s, err := score(x, d, sides[side].name, i)
			if err != nil {
				return AuditResult{}, err
			}
			if calledG(s, thr, above) == (side == 1) {
				errs[side]++
			}
			if calledG(s, thrMu, aboveMu) == (side == 1) {
				errsMu[side]++
			}
		}
	}
	fn, fp := errs[0], errs[1]
	fprHi := ClopperPearsonUpper(fp, nNeg, level)
	fnrHi := ClopperPearsonUpper(fn, nPos, level)
	mu := muFromUppers(ClopperPearsonUpper(errsMu[1], nNeg, level), ClopperPearsonUpper(errsMu[0], nPos, level))
	epsMu := 0.0
	if mu > 0 {
		if epsMu, err = GDPEpsilon(mu, math.Max(cfg.Delta, 1e-300)); err != nil {
			return AuditResult{}, err
		}
	}
	return AuditResult{
		MuLB:         mu,
		EpsilonLBGDP: epsMu,
		ThresholdGDP: thrMu,
		GIfAboveGDP:  aboveMu,
		FPGDP:        errsMu[1],
		FNGDP:        errsMu[0],
		EpsilonLB:    epsFromUppers(fprHi, fnrHi, cfg.Delta),
		Confidence:   cfg.Confidence,
		Delta:        cfg.Delta,
		Statistic: fmt.Sprintf("projection on the difference of means, threshold chosen on the estimation part "+
			"(first %d of %d runs on G, first %d of %d on G′); counts from the other runs", mPos, nG, mNeg, nGp),
		Trials:            nG,
		TrialsNeighbour:   nGp,
		Dimension:         dim,
		EstimateFraction:  cfg.EstimateFraction,
		EstimatePositives: mPos,
		EstimateNegatives: mNeg,
		EstimateEpsilonLB: estLB,
		DirectionNorm:     norm,
		Threshold:         thr,
		GIfAbove:          above,
		FP:                fp,
		Negatives:         nNeg,
		FN:                fn,
		Positives:         nPos,
		FPR:               float64(fp) / float64(nNeg),
		FNR:               float64(fn) / float64(nPos),
		FPRUpper:          fprHi,
		FNRUpper:          fnrHi,
	}, nil
}

// score returns ⟨x, d⟩, or an error naming the run if x has a non-finite
// value or the product overflows.
func score(x, d []float64, side string, run int) (float64, error) {
	var s float64
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("dp: audit: run %d on %s has value %g at coordinate %d", run, side, v, j)
		}
		s += v * d[j]
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("dp: audit: the score of run %d on %s overflows; rescale the outputs", run, side)
	}
	return s, nil
}

func calledG(s, thr float64, above bool) bool {
	if above {
		return s >= thr
	}
	return s < thr
}

// chooseThreshold returns the threshold and orientation (true: score ≥ thr
// means "G") to evaluate on nPos runs of G and nNeg runs of G′, chosen on
// the estimation scores pos (runs on G) and neg (runs on G′) only; both are
// sorted in place.
//
// Candidates lie midway between consecutive distinct estimation scores (any
// threshold in between classifies these runs alike), in both orientations.
// Each is rated by the bound it is predicted to give on the evaluation
// runs: its estimation rates, taken pessimistically as their
// Clopper–Pearson upper bounds at level, times the evaluation sizes, as
// counts for EpsilonLowerBound at the evaluation sizes. The pessimism is
// what keeps the choice away from the far tails, where a rate estimated
// from a handful of runs (often zero) looks best on the estimation runs by
// luck and fails on the evaluation runs (the winner's curse); the scaling to
// the evaluation sizes lets it go as far into the tails as the evaluation
// runs can support, not only as far as the estimation runs can. Ties go to
// the larger TPR − FPR on the estimation runs, then to the lowest
// threshold.
func chooseThreshold(pos, neg []float64, nPos, nNeg int, delta, level float64) (thr float64, above bool) {
	return chooseThresholdFor(pos, neg, nPos, nNeg, level, func(fprHi, fnrHi float64) float64 { return epsFromUppers(fprHi, fnrHi, delta) })
}

// chooseThresholdFor is chooseThreshold for any rating of the upper bounds
// (FPR, FNR) that is non-increasing in both.
func chooseThresholdFor(pos, neg []float64, nPos, nNeg int, level float64, rate func(fprHi, fnrHi float64) float64) (thr float64, above bool) {
	slices.Sort(pos)
	slices.Sort(neg)
	mPos, mNeg := len(pos), len(neg)
	// Upper bounds by count (each a Beta quantile, by far the costliest
	// step), memoised.
	estPos, estNeg := cpTable(mPos, level), cpTable(mNeg, level)
	evalPos, evalNeg := cpTable(nPos, level), cpTable(nNeg, level)
	predict := func(fp, fn int) float64 {
		kfp := int(math.Round(float64(nNeg) * estNeg(fp)))
		kfn := int(math.Round(float64(nPos) * estPos(fn)))
		return rate(evalNeg(kfp), evalPos(kfn))
	}
	// quick is a cheap upper bound on predict, to skip candidates that
	// cannot win without computing their Beta quantiles. It replaces each
	// Clopper–Pearson bound by a lower bound on it (k/n, exact at k = 0):
	// at level ≥ ½ the bound is at least the median of Beta(k+1, n−k),
	// which lies between that law's mode k/(n−1) and its mean (k+1)/(n+1),
	// both ≥ k/n. Rounding and epsFromUppers are monotone, so quick ≥ predict.
	cpLow := func(k, n int) float64 {
		if k == 0 {
			return ClopperPearsonUpper(0, n, level)
		}
		return float64(k) / float64(n)
	}
	quick := func(fp, fn int) float64 {
		kfp := int(math.Round(float64(nNeg) * float64(fp) / float64(mNeg)))
		kfn := int(math.Round(float64(nPos) * float64(fn) / float64(mPos)))
		return rate(cpLow(kfp, nNeg), cpLow(kfn, nPos))
	}

	best, bestGap := -1.0, math.Inf(-1)
	consider := func(t float64, fp, fn int) {
		// Orientation "score ≥ t is G": fp of neg are ≥ t, fn of pos are < t.
		// The opposite orientation swaps both counts for their complements.
		for _, o := range [2]struct {
			above  bool
			fp, fn int
		}{{true, fp, fn}, {false, mNeg - fp, mPos - fn}} {
			if quick(o.fp, o.fn) < best {
				continue
			}
			lb := predict(o.fp, o.fn)
			gap := 1 - float64(o.fn)/float64(mPos) - float64(o.fp)/float64(mNeg)
			if lb > best || (lb == best && gap > bestGap) {
				best, bestGap, thr, above = lb, gap, t, o.above
			}
		}
	}
	// Sweep the distinct scores in increasing order. Before candidate t,
	// i runs of pos and j runs of neg lie below t.
	i, j := 0, 0
	prev := math.Inf(-1)
	for i < mPos || j < mNeg {
		v := math.Inf(1)
		if i < mPos {
			v = pos[i]
		}
		if j < mNeg && neg[j] < v {
			v = neg[j]
		}
		t := v
		if !math.IsInf(prev, -1) {
			t = prev/2 + v/2
		}
		consider(t, mNeg-j, i)
		for i < mPos && pos[i] == v {
			i++
		}
		for j < mNeg && neg[j] == v {
			j++
		}
		prev = v
	}
	// Above every score: nothing is called "G" (or everything, reversed).
	consider(math.Nextafter(prev, math.Inf(1)), 0, mPos)
	return thr, above
}

// muFromUppers is the μ-GDP lower bound Φ⁻¹(1 − FPR) − Φ⁻¹(FNR) at upper
// bounds of the two rates (0 when it is not positive).
func muFromUppers(fprHi, fnrHi float64) float64 {
	if !(fprHi < 1 && fnrHi < 1) {
		return 0
	}
	probit := func(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
	return math.Max(0, probit(1-fprHi)-probit(fnrHi))
}

// cpTable returns k ↦ ClopperPearsonUpper(k, n, level), memoised.
func cpTable(n int, level float64) func(int) float64 {
	memo := make([]float64, n+1)
	return func(k int) float64 {
		if memo[k] == 0 {
			memo[k] = ClopperPearsonUpper(k, n, level)
		}
		return memo[k]
	}
}

// AuditGaussian audits a bare Gaussian mechanism calibrated to (eps, delta):
// a query of L2 sensitivity 1 released with N(0, σ²) noise, where σ is the
// smallest noise std for which the exact (analytic, Balle & Wang 2018)
// Gaussian characterisation gives (eps, delta)-DP — CalibrateNoise of one
// GaussianEvent with the "gdp" accountant, whose bisection returns the conservative end (σ
// rounded up by at most a relative 1e-9), so the mechanism's true ε at
// delta is at most eps and tight to that precision. It draws trials runs on
// G (output 1 + noise) and trials on G′ (output 0 + noise), all from
// NewSource(seed), and runs Audit on them; cfg.Delta = 0 is replaced by
// delta. It returns the audit and σ.
//
// It is the audit's own calibration check: EpsilonLB exceeds eps with
// probability at most 1 − Confidence, and comes close to eps only with very
// many runs (at eps = 2: about 0.8 with 10,000 runs per side, 1.2 with
// 100,000; see Audit).
//
// Every run is held in memory (8 bytes per run and side, plus 8 per
// estimation run's score): trials above MaxAuditGaussianTrials are refused
// before anything is allocated.
func AuditGaussian(eps, delta float64, trials int, seed uint64, cfg AuditConfig) (AuditResult, float64, error) {
	if err := CheckPositiveFinite("audit epsilon", eps); err != nil {
		return AuditResult{}, 0, err
	}
	if err := CheckCount("audit trials", trials); err != nil {
		return AuditResult{}, 0, err
	}
	if trials > MaxAuditGaussianTrials {
		return AuditResult{}, 0, fmt.Errorf("dp: audit trials %d: a Gaussian audit holds every run in memory (16 bytes per trial, %.3g GB here); at most %d",
			trials, 16*float64(trials)/1e9, MaxAuditGaussianTrials)
	}
	sigma, err := CalibrateNoise(eps, delta, "gdp", func(z float64) []Event { return []Event{GaussianEvent{Multiplier: z, Count: 1}} })
	if err != nil {
		return AuditResult{}, 0, err
	}
	if cfg.Delta == 0 {
		cfg.Delta = delta
	}
	noise := make([]float64, 2*trials)
	NewSource(seed).FillNormal(noise)
	for i := range trials {
		noise[i] = 1 + sigma*noise[i]
		noise[trials+i] *= sigma
	}
	res, err := audit(func(i int, _ bool) ([]float64, error) { return noise[i : i+1 : i+1], nil },
		func(i int, _ bool) ([]float64, error) { return noise[trials+i : trials+i+1 : trials+i+1], nil }, trials, trials, cfg)
	return res, sigma, err
}

// MaxAuditGaussianTrials is the most runs per side AuditGaussian accepts:
// 2²⁷, 2 GiB of runs (and at most 1 GiB of estimation scores).
const MaxAuditGaussianTrials = 1 << 27
