package dpnn

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// PrivateConfig is DP-SGD over declared Examples as the accountant sees
// it: everything a plan needs, none of it read off the private data except
// N (the example count, treated as public by the DP-SGD convention; the
// run's report says so).
type PrivateConfig struct {
	// Name keys the plan's release and the ledger entry ("dpsgd" if
	// empty).
	Name string
	// N, R and Change are the examples' count, occurrence bound and
	// change (Examples' fields; Private checks they agree).
	N, R, Change int
	// What describes one example ("a training node's 1-hop rooted
	// subgraph"), for the plan.
	What string
	// BatchSize is the expected Poisson batch size B: q = min(1, B/N).
	BatchSize int
	// SampleRate, when > 0, is the Poisson rate q itself (BatchSize is
	// then unused): for a method whose examples are ids of a public
	// universe of which only some hold rows (Examples.Start's empty
	// examples) and whose rate is set from another public count (DPAR: B
	// over the expected size q′·N_train of its node subsample, N the node
	// ids). The noisy sum is still divided by q·N.
	SampleRate float64
	// Deleted and Inserted, when set, are the exact group pair's split of
	// the R changed examples (dp.Occurrences: at most Deleted clipped
	// vectors leave the sum and Inserted enter it); the method proves them
	// with R. Zero: derived by dp.
	Deleted, Inserted int
	// WithoutReplacement selects fixed-size sampling: every step draws
	// exactly BatchSize of the N ids without replacement (dp.FixedSample)
	// and divides the noisy sum by B; one step is dp.HypergeomGaussian's
	// Step, Occurrences{R, Change, SampledWithoutReplacement{N, B,
	// Gaussian{z}}} (ASGL's players). SampleRate, Deleted and Inserted
	// must be unset.
	WithoutReplacement bool
	// StepCount, when > 0, is the number of noisy steps (Epochs is then
	// unused): for a loop whose step count is not ⌈epochs/q⌉ (ASGL: the
	// players' steps per phase and epoch).
	StepCount int
	// PoolRows, for pooled examples (Examples.Weights), is the output
	// rows of the training path's pooling product (SGDConfig.PoolRows).
	PoolRows int
	// Epochs: the run takes ⌈epochs/q⌉ steps (Steps), exactly.
	Epochs int
	// Clip is C, the L2 bound of one example's gradient.
	Clip float64
}

// ConfigFor is a PrivateConfig for x's count, bound and change.
func ConfigFor(x *Examples, batch, epochs int, clip float64) PrivateConfig {
	return PrivateConfig{N: x.N, R: x.R, Change: x.Change, What: x.What, BatchSize: batch, Epochs: epochs, Clip: clip}
}

// LedgerName is the name of the release in the plan and the ledger.
func (c PrivateConfig) LedgerName() string {
	if c.Name == "" {
		return "dpsgd"
	}
	return c.Name
}

// Validate checks the configuration.
func (c PrivateConfig) Validate() error {
	if c.N <= 0 || c.R < 1 || (c.Change != 1 && c.Change != 2) {
		return fmt.Errorf("dp: DP-SGD over %d examples with R = %d and Change = %d: want N ≥ 1, R ≥ 1 and Change 1 or 2", c.N, c.R, c.Change)
	}
	if (c.BatchSize <= 0 && c.SampleRate <= 0) || (c.Epochs <= 0 && c.StepCount <= 0) {
		return fmt.Errorf("dp: DP-SGD with batch size %d and %d epochs: want both positive", c.BatchSize, c.Epochs)
	}
	if c.WithoutReplacement {
		if c.BatchSize > c.N || c.SampleRate != 0 || c.Deleted != 0 || c.Inserted != 0 {
			return fmt.Errorf("dp: DP-SGD with fixed batches of %d out of %d ids: want 1 … N, and no Poisson rate or group-pair split", c.BatchSize, c.N)
		}
		if err := c.hypergeom(1, 1).Validate(); err != nil {
			return err
		}
	}
	if c.SampleRate > 0 {
		if err := dp.CheckRate(c.SampleRate); err != nil {
			return err
		}
	}
	return dp.CheckPositiveFinite("clipping bound C", c.Clip)
}

// Rate is the Poisson rate q: SampleRate when set, else min(1, B/N).
func (c PrivateConfig) Rate() float64 {
	if c.SampleRate > 0 {
		return c.SampleRate
	}
	return math.Min(1, float64(c.BatchSize)/float64(c.N))
}

// Steps is the number of noisy steps, ⌈epochs/q⌉: the plan's count and the
// trainer's.
func (c PrivateConfig) Steps() int {
	if c.StepCount > 0 {
		return c.StepCount
	}
	return Steps(c.Epochs, c.Rate())
}

// hypergeom is fixed-size sampling's accounting of steps steps at z.
func (c PrivateConfig) hypergeom(z float64, steps int) dp.HypergeomGaussian {
	return dp.HypergeomGaussian{Population: c.N, Batch: c.BatchSize, Occurrences: c.R, Multiplier: z, Change: float64(c.Change), Steps: steps}
}

// invalid is an event of infinite cost (a calibration search never takes
// an invalid z as cheap; a ledger holding it reports ε = ∞).
func invalid(what string) dp.Event {
	return dp.RDPEvent{Name: "invalid DP-SGD " + what, Curve: func(float64) float64 { return math.Inf(1) }}
}

// NoiseStd is the std of the noise added to the clipped sum at multiplier
// z: z·R·Change·C (z is the std over the sensitivity R·Change·C of the
// whole released sum, dp's one convention).
func (c PrivateConfig) NoiseStd(z float64) float64 {
	return dp.OccurrencesNoiseStd(z, c.R, float64(c.Change), c.Clip)
}

// single reports whether one unit changes one example by at most C: the
// plain Poisson-subsampled Gaussian.
func (c PrivateConfig) single() bool {
	return c.R == 1 && c.Change == 1 && c.Deleted == 0 && c.Inserted == 0
}

// StepEvent is the event of one noisy step at multiplier z:
// Occurrences{R, Change, Poisson{q, Gaussian{z}}}, or the plain Poisson
// Gaussian step when R = Change = 1.
func (c PrivateConfig) StepEvent(z float64) dp.Event {
	if c.WithoutReplacement {
		h := c.hypergeom(z, 1)
		e, err := h.Step()
		if err != nil {
			return invalid(h.String())
		}
		return e
	}
	if c.single() {
		return dp.PoissonGaussianEvent{Rate: c.Rate(), Multiplier: z, Steps: 1}
	}
	return dp.Occurrences{R: c.R, Change: float64(c.Change), Deleted: c.Deleted, Inserted: c.Inserted,
		Event: dp.Poisson{Rate: c.Rate(), Event: dp.GaussianEvent{Multiplier: z, Count: 1}}}
}

// Event is the plan's event of all Steps at multiplier z:
// Composed{T, StepEvent(z)} (PoissonGaussianEvent with T steps when R =
// Change = 1).
func (c PrivateConfig) Event(z float64) dp.Event {
	if c.WithoutReplacement {
		h := c.hypergeom(z, c.Steps())
		e, err := h.Event()
		if err != nil {
			return invalid(h.String())
		}
		return e
	}
	if c.single() {
		return dp.PoissonGaussianEvent{Rate: c.Rate(), Multiplier: z, Steps: c.Steps()}
	}
	return dp.Composed{Count: c.Steps(), Event: c.StepEvent(z)}
}

// Planned is the plan's release at multiplier z (an invalid z gives an
// event of infinite cost, so a calibration search never takes it as
// cheap).
func (c PrivateConfig) Planned(z float64) dp.Planned {
	ev := c.Event(z)
	if err := ev.Validate(); err != nil {
		ev = dp.RDPEvent{Name: "invalid DP-SGD at z=" + fmt.Sprint(z), Curve: func(float64) float64 { return math.Inf(1) }}
	}
	what := fmt.Sprintf("DP-SGD: %d Poisson steps at rate %.4g over %d examples (%s), clip %g, noise std %.4g",
		c.Steps(), c.Rate(), c.N, c.What, c.Clip, c.NoiseStd(z))
	if c.WithoutReplacement {
		what = fmt.Sprintf("DP-SGD: %d steps, each a batch of %d of the %d examples (%s) drawn without replacement, clip %g, noise std %.4g",
			c.Steps(), c.BatchSize, c.N, c.What, c.Clip, c.NoiseStd(z))
	}
	if !c.single() {
		what += fmt.Sprintf("; one unit changes at most R=%d examples, each by at most %d·C", c.R, c.Change)
	}
	return dp.Planned{Name: c.LedgerName(), Kind: "dp-sgd", Event: ev, What: what}
}

// Noise is the plan's noise record at multiplier z.
func (c PrivateConfig) Noise(z float64) map[string]float64 {
	return map[string]float64{"std": c.NoiseStd(z), "clip": c.Clip, "rate": c.Rate(), "steps": float64(c.Steps()),
		"occurrences": float64(c.R), "change": float64(c.Change)}
}

// Private builds DP-SGD over the examples x on the model's recorded
// training path at multiplier z (0: the same pipeline clipped, without
// noise): Poisson sampling at c.Rate(), noise std c.NoiseStd(z), every
// noisy step recorded by rec, the recorder of the plan's release
// c.LedgerName() whose event must be of the kind of c.StepEvent(z) —
// the mechanism records its own releases; a nil rec is refused when
// z > 0, and a rec of another name or step event before anything is
// drawn. Capacity is in rows: DefaultCapacity examples of x's largest
// size. perRowLoss and outputs are as for BuildSGD; the construction steps
// with StepExamples (trainers.SGDTask.FillBatch).
func Private(m *nn.Model, perRowLoss *G.Node, outputs []*G.Node, x *Examples, c PrivateConfig, z float64, rec *dp.Recorder, src *dp.Source) (*SGD, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if x == nil || x.N != c.N || x.R != c.R || x.Change != c.Change {
		return nil, errors.New("dp: DP-SGD: the examples' count, occurrence bound and change must be the plan's")
	}
	if z > 0 {
		if rec == nil {
			return nil, errors.New("dp: DP-SGD with noise needs the recorder of its planned release")
		}
		if step := c.StepEvent(z); rec.Name() != c.LedgerName() || !dp.SameKind(rec.Event(), step) {
			return nil, fmt.Errorf("dp: DP-SGD releases %q as %v per step, its recorder records %q as %v", c.LedgerName(), step, rec.Name(), rec.Event())
		}
	}
	cfg := SGDConfig{Clip: c.Clip, Multiplier: c.NoiseStd(z) / c.Clip, Rate: c.Rate(), Samples: c.N,
		Capacity: perRowLoss.Shape()[0], Examples: x, PoolRows: c.PoolRows}
	if c.WithoutReplacement {
		cfg.Rate, cfg.Batch = 0, c.BatchSize
	}
	if z > 0 {
		cfg.Recorder = rec
	}
	return BuildSGD(m, perRowLoss, cfg, src, outputs)
}

// RowCapacity is the batch rows DP-SGD over x needs at rate q:
// DefaultCapacity(q, N) examples of x's largest size.
func RowCapacity(x *Examples, q float64) int { return DefaultCapacity(q, x.N) * x.MaxRows() }
