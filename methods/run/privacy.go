package run

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
)

// The budget rules every command applies (train, sweep, tune, inspect,
// audit, reproduce through their shared flags; account through its own):
// one rule everywhere, so a budget one command refuses no other accepts.
const (
	// MinEpsilon is the smallest finite ε (nats) a run claims or a
	// calculator calibrates for. Published budgets run from about 0.01 to
	// 10, so a smaller one is a mistyped flag far more often than a plan,
	// and at δ > 0 the noise that meets it is set by δ rather than by ε
	// (the exact Gaussian accountant reaches ε = 0 with finite noise).
	MinEpsilon = 1e-6
	// MaxDelta is the largest δ any (ε, δ) claim of dpgnn is made at. δ is
	// the probability with which the claim may fail outright: a mechanism
	// that publishes the whole dataset with probability δ (and nothing
	// otherwise) is (0, δ)-DP, so at δ = 0.5 the claim allows publishing
	// every person's data in half the runs. The usual rule is δ well below
	// one over the number of people, which no flag check can know (the
	// count is private at node level); 0.01 is a ceiling no meaningful
	// claim reaches — it lets any one record out in one run of a hundred —
	// and five times the largest δ the implemented papers use (DPAR's
	// 2e-3). A given δ above it is refused; --delta auto never exceeds it;
	// --delta paper above it is refused.
	MaxDelta = 1e-2
)

// CheckEpsilon checks a privacy budget ε given by the flag named flag
// (e.g. "--epsilon"): a number at least MinEpsilon, or +Inf (no privacy).
// text is the value as typed ("" to print e).
func CheckEpsilon(flag string, e float64, text string) error {
	if text == "" {
		text = strconv.FormatFloat(e, 'g', -1, 64)
	}
	switch {
	case math.IsNaN(e) || e <= 0:
		return fmt.Errorf("%s must be positive (or inf), got %s", flag, text)
	case e < MinEpsilon:
		return fmt.Errorf("%s %s is implausibly small (below %g): use a budget such as 0.1, 1 or 8", flag, text, MinEpsilon)
	}
	return nil
}

// CheckDelta checks a δ given by the flag named flag: a number in
// (0, MaxDelta]. text is the value as typed ("" to print d).
func CheckDelta(flag string, d float64, text string) error {
	if text == "" {
		text = strconv.FormatFloat(d, 'g', -1, 64)
	}
	switch {
	case math.IsNaN(d) || d <= 0 || d >= 1:
		return fmt.Errorf("%s must be a number in (0, %g], got %s", flag, MaxDelta, text)
	case d > MaxDelta:
		return fmt.Errorf("%s %s is above %g, where an (ε, δ) claim says nothing (publishing the whole dataset with probability δ meets it): "+
			"use δ well below one over the number of people in the data, e.g. 1e-5", flag, text, MaxDelta)
	}
	return nil
}

// DeltaUnits describes a method's privacy units for δ.
type DeltaUnits struct {
	// Unit names the privacy unit ("directed edge", "undirected edge",
	// "node").
	Unit string
	// Possible is a public upper bound on the number of units (0 when
	// none is public, as at node level).
	Possible float64
	// Paper is the method's paper convention: δ and a description; it may
	// read private counts.
	Paper func() (float64, string, error)
	// PaperPublic says that Paper reads no private data (a constant, as
	// ASGL's 1e-5). False, the default, is the safe reading: the report
	// lists a δ from --delta paper as treated as public (DeltaUse).
	PaperPublic bool
}

// EdgeUnits are the δ units of an edge-level run on n nodes: possible units
// n(n−1) directed entries or n(n−1)/2 undirected pairs; paper is the
// method's convention on the private edge count.
func EdgeUnits(n int, undirected bool, paper func() (float64, string, error)) DeltaUnits {
	u := DeltaUnits{Unit: "directed edge", Possible: float64(n) * float64(n-1), Paper: paper}
	if undirected {
		u.Unit, u.Possible = "undirected edge", u.Possible/2
	}
	return u
}

// PaperDigits is GAP's and ProGAP's δ convention, 10^−digits(count), on a
// private count of units.
func PaperDigits(count int, what string) func() (float64, string, error) {
	return func() (float64, string, error) {
		d, err := dp.DeltaAuto(count)
		return d, fmt.Sprintf("paper convention: 10^-digits of the %s (%d; a private count, treated as public)", what, count), err
	}
}

// ResolveDelta returns the run's δ and a sentence saying where it came from
// (see DeltaRule).
func ResolveDelta(c *methods.Context, u DeltaUnits) (float64, string, error) {
	switch c.DeltaRule {
	case methods.DeltaGiven, "":
		if c.Delta > 0 {
			return c.Delta, "given (--delta)", nil
		}
		if c.DeltaRule == methods.DeltaGiven {
			return 0, "", fmt.Errorf("--delta must be in (0, 1), got %g", c.Delta)
		}
	case methods.DeltaPaper:
		if u.Paper == nil {
			return 0, "", fmt.Errorf("--delta paper: this method's paper has no δ convention; pass --delta")
		}
		d, source, err := u.Paper()
		if err == nil && d > MaxDelta {
			// The count the convention reads is treated as public (DeltaUse),
			// and the δ it gives is printed in every report: refusing it
			// tells no more than accepting it would.
			return 0, "", fmt.Errorf("--delta paper gives δ = %g here, above %g, where an (ε, δ) claim says nothing: pass --delta (e.g. 1e-5)", d, MaxDelta)
		}
		return d, source, err
	}
	if !(u.Possible >= 1) && !c.Private() {
		return 0, "no privacy", nil
	}
	if !(u.Possible >= 1) {
		return 0, "", fmt.Errorf("--delta auto: at %s level no count of privacy units is public (the number of %ss is private); "+
			"pass --delta (e.g. 1e-5, well below one over the number of people in the data) or --delta paper (the paper's rule on the private count)", c.Level, u.Unit)
	}
	digits := len(strconv.FormatFloat(math.Floor(u.Possible), 'f', 0, 64))
	if d := math.Pow10(-digits); d > MaxDelta {
		// A graph of a few nodes: any smaller δ is below one over the
		// possible units too, and MaxDelta is the ceiling of every claim.
		return MaxDelta, fmt.Sprintf("auto: %g, the ceiling of every claim, below one over the %.4g possible %ss among the graph's nodes (a public bound on their number)",
			MaxDelta, u.Possible, u.Unit), nil
	}
	d := math.Pow10(-digits)
	return d, fmt.Sprintf("auto: 10^-%d, below one over the %.4g possible %ss among the graph's nodes (a public bound on their number)", digits, u.Possible, u.Unit), nil
}

// Calibrated is a calibrated noise multiplier with the run's privacy plan.
type Calibrated struct {
	Multiplier float64
	Plan       *dp.Plan
}

// Calibrate is the plan-level calibration every method uses: it finds the
// smallest noise multiplier z whose releases(z) (each a dp.Planned: Name
// keys the run's ledger, where the mechanism records every release it
// makes under that name) meet the context's (ε, δ) under the named
// accountant (gdp, rdp, rdp-standard, pld, or dp.Auto: pld when it has a
// rule for every release's event, rdp otherwise, dp.AutoAccountant; the
// plan names the one chosen) — dp.CalibrateNoise on their events,
// the one search — and returns z with the run's privacy plan: its level
// and unit, δ and its source, the releases at z, and noise
// (method-specific noise levels, stds). With a fixed ctx.Multiplier it
// searches nothing and the plan states the ε that multiplier gives.
// Without privacy (ε = ∞ or level none) z is 0 and nothing is released.
func Calibrate(ctx *methods.Context, units DeltaUnits, accountant string, releases func(z float64) []dp.Planned, noise func(z float64) map[string]float64) (*Calibrated, error) {
	delta, source, err := ResolveDelta(ctx, units)
	if err != nil {
		return nil, err
	}
	rel, err := dp.NewRelation(string(ctx.Level), units.Unit)
	if err != nil {
		return nil, err
	}
	plan := &dp.Plan{Level: string(ctx.Level), Unit: units.Unit, Relation: rel, Epsilon: ctx.Epsilon, Delta: delta, DeltaSource: source, Accountant: "none"}
	if !ctx.Private() {
		plan.Epsilon, plan.Noise = math.Inf(1), noise(0)
		plan.Notes = []string{"ε = ∞: the same pipeline without noise"}
		return &Calibrated{Plan: plan}, nil
	}
	if u := DeltaUse(ctx, units, delta, source); u != nil {
		plan.Uses = append(plan.Uses, *u)
	}
	events := func(z float64) []dp.Event { return Events(releases(z)) }
	z := ctx.Multiplier
	auto := strings.EqualFold(accountant, dp.Auto)
	if auto {
		probe := z
		if probe <= 0 {
			probe = 1
		}
		accountant = dp.AutoAccountant(events(probe))
	}
	if z > 0 {
		// A fixed multiplier: the plan states the ε it gives. Under dp.Auto
		// both accountants bound the same releases, so the smaller ε is
		// proven too and the plan names the accountant that gave it (pld
		// reports ∞ where losses leave its grid and rdp stays finite, e.g.
		// DPAR's paper-rule noise at ε = 8).
		if plan.Epsilon, err = dp.EpsilonOf(accountant, events(z), delta); err != nil {
			return nil, err
		}
		if auto && accountant == "pld" {
			if e, err := dp.EpsilonOf("rdp", events(z), delta); err == nil && e < plan.Epsilon {
				plan.Epsilon, accountant = e, "rdp"
			}
		}
	} else if z, err = dp.CalibrateNoise(ctx.Epsilon, delta, accountant, events); err != nil {
		return nil, fmt.Errorf("calibrating the noise for ε=%g, δ=%g: %w", ctx.Epsilon, delta, err)
	}
	plan.Accountant, plan.Multiplier, plan.Releases = accountant, z, releases(z)
	plan.Noise = noise(z)
	plan.Noise["multiplier"] = z
	// The report composes the same events again: fail now, before any
	// release, if that would not meet the budget.
	if _, err := plan.Report(plan.AsPlanned()); err != nil {
		return nil, err
	}
	return &Calibrated{Multiplier: z, Plan: plan}, nil
}

// Events returns the events of the releases, in order.
func Events(rel []dp.Planned) []dp.Event {
	ev := make([]dp.Event, len(rel))
	for i, r := range rel {
		ev[i] = r.Event
	}
	return ev
}

// SGDRelease is the planned release of one DP-SGD run at noise multiplier
// z, named "dpsgd" in the ledger: steps Poisson-subsampled Gaussian steps
// at rate q, every sample's gradient clipped to clip, noise std z·clip on
// the clipped sum (sensitivity clip: one unit is one sample). A method's
// releases function passes it to Calibrate, with its other releases.
func SGDRelease(q float64, steps int, clip, z float64) dp.Planned {
	return dp.Planned{Name: "dpsgd", What: fmt.Sprintf("DP-SGD: %d Poisson steps at rate %.4g, clip %g, noise std %.4g·clip", steps, q, clip, z),
		Event: dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}}
}

// SGDNoise is the plan's noise record of SGDRelease: the std z·clip, the
// clip, the rate and the steps.
func SGDNoise(q float64, steps int, clip, z float64) map[string]float64 {
	return map[string]float64{"std": z * clip, "clip": clip, "rate": q, "steps": float64(steps)}
}

// Use kinds the framework adds to privacy reports (dp.Use.Kind).
const (
	// UseCount is a count of private data that sets a parameter of the
	// run (a rate, a number of steps, a population).
	UseCount = "count"
	// UseDelta is δ derived from a count.
	UseDelta = "delta"
	// UseSplit is how the run's training, validation and test parts were
	// drawn.
	UseSplit = "split"
	// UseNoise says where the mechanisms' randomness came from.
	UseNoise = "noise"
)

// TrainCountUse is the report's use of the training-node count by DP-SGD
// over the training nodes (node level): N_train sets the Poisson rate
// q = min(1, B/N_train), the number of steps ⌈epochs/q⌉, the divisor q·N_train
// of the noisy sum and, through calibration, the noise multiplier. Removing
// a training node changes N_train by one, so all four depend on the private
// data outside any mechanism; DP-SGD's convention treats the count as
// public, and the accountant composes the steps of this N_train. Every
// method that trains with DP-SGD over the training nodes lists it (MLP,
// GAP and ProGAP via ap.Config.Plan; CARIBOU and DPAR can append it to
// their plans).
func TrainCountUse(nTrain int, rate float64) dp.Use {
	return dp.Use{Kind: UseCount,
		What: fmt.Sprintf("the training-node count N_train = %d sets DP-SGD's Poisson rate q = min(1, B/N_train) = %.4g, the number of steps ⌈epochs/q⌉, "+
			"the divisor q·N_train of the noisy sum and, through calibration, the noise multiplier", nTrain, rate),
		Covered: dp.TreatedAsPublic("the DP-SGD convention: removing a training node changes N_train by one, and the rate, the steps and the noise with it; " +
			"the accountant composes the steps of this N_train")}
}

// DeltaUse is the report's use of the data by δ's rule, nil when δ reads
// nothing (--delta given, or a paper rule with PaperPublic): delta and
// source are what ResolveDelta returned for u.
//   - auto (edge level): δ is computed from the node count N, which
//     edge-level neighbours share (G and G minus one edge have the same
//     nodes): public data.
//   - paper: the method's convention on a count of private units (edges,
//     training nodes). A neighbour's count can give another δ, and the
//     noise is calibrated at this δ: treated as public.
//
// Methods that resolve δ themselves (not through Calibrate) append it to
// their plans.
func DeltaUse(c *methods.Context, u DeltaUnits, delta float64, source string) *dp.Use {
	rule := c.DeltaRule
	if rule == "" { // ResolveDelta's reading of an unset rule
		rule = methods.DeltaAuto
		if c.Delta > 0 {
			rule = methods.DeltaGiven
		}
	}
	switch {
	case rule == methods.DeltaPaper && u.PaperPublic:
		return nil
	case rule == methods.DeltaPaper:
		return &dp.Use{Kind: UseDelta, What: fmt.Sprintf("δ = %.3g by --delta paper: %s", delta, source),
			Covered: dp.TreatedAsPublic("--delta paper: the paper's convention reads a private count of units; " +
				"a neighbour's count can give another δ, and the noise is calibrated at this one")}
	case rule == methods.DeltaAuto:
		return &dp.Use{Kind: UseDelta, What: fmt.Sprintf("δ = %.3g by --delta auto: %s", delta, source),
			Covered: "public data (the node count: G and G minus one edge have the same nodes)"}
	}
	return nil
}

// NoiseUse is the report's statement on the run's mechanism randomness,
// for every private run (Report adds it): without --secure-noise
// every draw — noise, Poisson and batch sampling, degree-bound and walk
// keys, the dropout masks of a DP-SGD training path, all from NoiseSource —
// follows from the seed the record states, so
// anyone who knows the seed can regenerate the noise and subtract it, and
// the guarantee, which assumes secret noise, does not hold against them;
// with --secure-noise the mechanisms are keyed from crypto/rand and the
// seed drives only the split, initialisation and the dropout of
// non-private training. A plan without
// releases draws no noise and says so.
func NoiseUse(c *methods.Context, plan *dp.Plan) dp.Use {
	const what = "the mechanisms' randomness (noise draws, Poisson and batch sampling, degree-bound and walk keys, DP-SGD's dropout masks)"
	switch {
	case plan == nil || len(plan.Releases) == 0:
		return dp.Use{Kind: UseNoise, What: "no mechanism draws noise in this run: it releases nothing computed from private data",
			Covered: "nothing to reproduce"}
	case c.SecureNoise:
		return dp.Use{Kind: UseNoise, What: what + " comes from crypto/rand (--secure-noise)",
			Covered: "not reproducible: the mechanisms are keyed from crypto/rand and no record holds the key; the seed in this record drives only the split, initialisation and the dropout of non-private training"}
	}
	return dp.Use{Kind: UseNoise, What: what + " comes from a stream keyed by the run's seed",
		Covered: "reproducible: every noise draw follows from the seed in this record; run with --secure-noise to key the mechanisms from crypto/rand " +
			"(the guarantee assumes secret noise: whoever knows the seed can regenerate and subtract it)"}
}
