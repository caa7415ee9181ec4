package dpnn

import (
	"errors"
	"fmt"
	"github.com/dpgnn/dpgnn/dp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/internal/vec"
	"github.com/dpgnn/dpgnn/nn"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
)

// SGDConfig configures DP-SGD (Abadi et al. 2016) as Opacus runs it.
type SGDConfig struct {
	// Clip is C, the L2 bound on each sample's gradient over all trainable
	// parameters concatenated (flat clipping).
	Clip float64
	// Multiplier is z, the noise multiplier: the summed clipped gradient
	// gets N(0, (z·C)²) noise per coordinate.
	Multiplier float64
	// Rate is q, the Poisson sampling probability of each sample (0 when
	// Batch selects fixed-size batches).
	Rate float64
	// Batch > 0 selects fixed-size sampling instead of Poisson sampling:
	// every step draws exactly Batch of the Samples without replacement
	// (dp.FixedSample, from the noise source), and the noisy sum is divided by
	// Batch. Rate must then be 0. Poisson accounting does not apply to such
	// steps: the Recorder's event says how one is accounted
	// (HypergeomGaussian.Step for ASGL's discriminators).
	Batch int
	// Samples is the number of training samples n; with Poisson sampling
	// the expected batch size is B = q·n and the noisy sum is divided by B,
	// not by the realised batch size.
	Samples int
	// Present, when non-nil (length Samples, Poisson sampling only), says
	// which of the Samples ids hold a sample: the Poisson draw runs over all
	// Samples ids and keeps the present ones, so the draw of an id does not
	// depend on which others are present, and an absent id (whose clipped
	// gradient would be 0) costs no work. Samples is then a public universe
	// of ids and the noisy sum is still divided by q·Samples, a number that
	// does not depend on which ids are present.
	Present []bool
	// Capacity is the number of samples one run of the graph holds (its
	// batch rows for one-row samples). A sampled batch larger than this is
	// processed in chunks; noise is added once.
	Capacity int
	// Recorder records every step that adds noise, as its event (one
	// noisy step: dp.PoissonGaussianEvent{Rate, Multiplier, 1} with plain
	// Poisson sampling, the caller's step event otherwise); it is built
	// from the run's plan (dp.Plan.Recorder), which refused it if the
	// plan declares no such release. With plain Poisson sampling (no
	// Examples, no Batch) its event must be of the kind of that Poisson
	// Gaussian step, so the noise and rate drawn are the ones recorded.
	// Nil: the steps are recorded nowhere (tests, and noise-free runs; a
	// private run whose plan declares the steps then fails Plan.Check).
	Recorder *dp.Recorder
	// Examples, when set, declares the examples (Samples must be
	// Examples.N, Capacity counts batch rows, Poisson sampling only): the
	// construction steps with StepExamples, which lays out every chunk's
	// rows and builds its row groups itself, and BuildSGD refuses a
	// training path whose row-mixing products can join two one-row
	// examples.
	Examples *Examples
	// OneRow, on the plain path (no Examples), declares that every
	// sample is one batch row, its own row group (the fill calls
	// Groups.Singletons): the training path is then checked as over
	// one-row Examples — row-local, no product joining two rows, no row
	// selection across rows, batch inputs emptied before every fill —
	// which a plain construction is not (run.Module's DP-SGD: DP-MLP and
	// the GAP, ProGAP and CARIBOU modules).
	OneRow bool
	// PoolRows, for pooled Examples (Examples.Weights), is the number of
	// output rows of the pooling product: a chunk holds at most this many
	// examples, and every product from the batch rows to PoolRows rows on
	// the training path is checked against the examples at every step.
	PoolRows int
}

// ExpectedBatch is q·n with Poisson sampling and Batch with fixed-size
// batches: what the noisy sum is divided by.
func (c SGDConfig) ExpectedBatch() float64 {
	if c.Batch > 0 {
		return float64(c.Batch)
	}
	return c.Rate * float64(c.Samples)
}

// Validate checks the configuration.
func (c SGDConfig) Validate() error {
	if err := dp.CheckPositiveFinite("clipping bound C", c.Clip); err != nil {
		return err
	}
	if err := dp.CheckNonNegativeFinite("noise multiplier", c.Multiplier); err != nil {
		return err
	}
	if c.Samples <= 0 || c.Capacity <= 0 {
		return fmt.Errorf("dp: DP-SGD needs positive sample count and capacity, got %d and %d", c.Samples, c.Capacity)
	}
	if x := c.Examples; x != nil {
		if x.N != c.Samples || (c.Batch != 0 && x.Present != nil) || c.Capacity < x.MaxRows() {
			return fmt.Errorf("dp: DP-SGD over %d examples of up to %d rows: want Samples = %d (got %d), Poisson sampling over a universe with absent ids (batch %d) and a capacity of at least %d rows (got %d)",
				x.N, x.MaxRows(), x.N, c.Samples, c.Batch, x.MaxRows(), c.Capacity)
		}
	}
	if c.OneRow && c.Examples != nil {
		return errors.New("dp: DP-SGD: OneRow is for the plain path; declared Examples say their rows themselves (dpnn.OneRow)")
	}
	if pooled := c.Examples != nil && c.Examples.Weights != nil; pooled != (c.PoolRows > 0) {
		return fmt.Errorf("dp: DP-SGD: pooled examples need the pooling product's output rows and only they take them (PoolRows %d)", c.PoolRows)
	}
	if c.Present != nil && (len(c.Present) != c.Samples || c.Batch != 0) {
		return fmt.Errorf("dp: DP-SGD's present ids: %d flags for %d samples (Poisson sampling only)", len(c.Present), c.Samples)
	}
	if c.Batch != 0 {
		if c.Batch < 0 || c.Batch > c.Samples {
			return fmt.Errorf("dp: DP-SGD fixed batch of %d samples out of %d, want 1 … %d", c.Batch, c.Samples, c.Samples)
		}
		if c.Rate != 0 {
			return fmt.Errorf("dp: DP-SGD with a fixed batch of %d takes no Poisson rate (got %g)", c.Batch, c.Rate)
		}
		return c.checkRecorder()
	}
	if err := dp.CheckRate(c.Rate); err != nil {
		return err
	}
	return c.checkRecorder()
}

// checkRecorder refuses a plain Poisson step recorded as another kind of
// event than the one it draws.
func (c SGDConfig) checkRecorder() error {
	if c.Recorder == nil || c.Batch != 0 || c.Examples != nil {
		return nil
	}
	if step := (dp.PoissonGaussianEvent{Rate: c.Rate, Multiplier: c.Multiplier, Steps: 1}); !dp.SameKind(c.Recorder.Event(), step) {
		return fmt.Errorf("dp: DP-SGD draws %v per step but records %v under %q", step, c.Recorder.Event(), c.Recorder.Name())
	}
	return nil
}

// DefaultCapacity is a batch capacity that a Poisson batch exceeds with
// negligible probability (mean + 10 standard deviations + 8), capped at n.
func DefaultCapacity(q float64, n int) int {
	mean := q * float64(n)
	c := int(math.Ceil(mean + 10*math.Sqrt(mean*(1-q)) + 8))
	return min(c, n)
}

// SGD is the DP-SGD construction on a model's recorded training path: the
// nodes for per-sample squared gradient norms (ghost norms), clip factors,
// clipped gradient sums, the Gaussian noise and the division by the
// expected batch size. All of them are ordinary nodes of the model's
// expression graph, visible to `dpgnn inspect`.
type SGD struct {
	Cfg    SGDConfig
	Groups *nn.RowGroups
	// LossSum is Σ of the per-row losses of the batch.
	LossSum *G.Node
	// NormSq holds per-sample squared gradient norms (length Capacity
	// rows); Factors the clip factors min(1, C/(‖g‖+1e-6)).
	NormSq, Factors *G.Node
	// ParamNormSq holds per-sample squared norms of each parameter's
	// gradient (diagnostics; they sum to NormSq).
	ParamNormSq []*G.Node
	// Clipped[i] is Σ_samples clip·gradient of parameter i; Noisy[i] is
	// (Clipped[i] + N(0, (zC)²)) / B, what the optimiser receives.
	Clipped, Noisy []*G.Node
	Noise          []*nn.Noise
	noiseSizes     []int // entries of each noise vector (its parameter's)
	// SkipNoiseNorm leaves StepStats.NoiseNorm 0: a pass over every noise
	// draw that only a trace reads.
	SkipNoiseNorm bool
	// Ahead, set before a Step, promises that Step will be called again
	// with nothing else reading the source in between. The Step then
	// samples the next batch and starts drawing the next noise before it
	// returns, so the drawing overlaps the optimiser's update as well as
	// the next graph run. The source is read in the same order either way.
	Ahead bool

	model *nn.Model
	src   *dp.Source
	total [][]float64 // Step's result over several chunks, reused
	// next is the batch a Step with Ahead sampled for the following one,
	// whose noise is being drawn (hasNext).
	next    []int
	hasNext bool
	// a Step's chunks and per-parameter sums, reused by the next
	chunks  [][]int
	paramSq []float64
	// mixing are the training path's row-mixing products, checked
	// against the row groups of every chunk.
	mixing []nn.Mixing
	// pools are its pooling products (SGDConfig.PoolRows), checked the
	// same way.
	pools []nn.Mixing
	// reads are its fixed row selections (nn.CheckRowLocal), checked the
	// same way.
	reads []nn.RowReads
	// inputs are its batch inputs, emptied before every fill
	// (nn.RowLocal.Reset): one the fill does not write holds no
	// position-dependent value.
	inputs *nn.RowLocal
	batch  Batch // the chunk's layout (StepExamples)
}

// sample draws a step's batch from the source: Poisson with Cfg.Rate, or
// exactly Cfg.Batch without replacement.
func (s *SGD) sample() ([]int, error) {
	if s.Cfg.Batch > 0 {
		return dp.FixedSample(s.src, s.Cfg.Samples, s.Cfg.Batch)
	}
	batch := dp.PoissonSample(s.src, s.Cfg.Samples, s.Cfg.Rate)
	if s.Cfg.Present != nil {
		batch = slices.DeleteFunc(batch, func(i int) bool { return !s.Cfg.Present[i] })
	}
	if x := s.Cfg.Examples; x != nil && x.Present != nil {
		// absent ids: drawn like the others, then dropped (Examples.Present)
		batch = slices.DeleteFunc(batch, x.absent)
	}
	return batch, nil
}

// dropAhead discards a batch and noise drawn ahead.
func (s *SGD) dropAhead() {
	nn.WaitNoise(s.Noise)
	s.next, s.hasNext = nil, false
}

// mixingOf is the products find lists for any of nodes, each once.
func mixingOf(nodes []*G.Node, find func(*G.Node) []nn.Mixing) []nn.Mixing {
	var out []nn.Mixing
	seen := map[nn.Mixing]bool{}
	for _, n := range nodes {
		for _, x := range find(n) {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// BuildSGD adds the DP-SGD nodes to m. perRowLoss is the vector of per-row
// losses of the recorded training path (rows = batch capacity in rows; a
// sample's loss is the sum of its rows' losses, padding rows must have loss
// 0). It refuses models whose recorded path mixes samples (BatchNorm) or has
// parameters without a per-sample rule. It compiles m with the privatised
// gradients; outputs are the evaluation outputs.
func BuildSGD(m *nn.Model, perRowLoss *G.Node, cfg SGDConfig, src *dp.Source, outputs []*G.Node) (*SGD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errors.New("dp: DP-SGD needs a noise source")
	}
	if mix := m.MixesSamples(); len(mix) > 0 {
		return nil, fmt.Errorf("dp: DP-SGD needs per-sample layers, but the training path has %s, which mixes samples in a batch; use GroupNorm (--norm groupnorm) instead of BatchNorm", strings.Join(mix, ", "))
	}
	rows := perRowLoss.Shape()[0]
	recs := m.PerSampleRecords()
	byParam, err := m.PerSampleRules(rows)
	if err != nil {
		return nil, fmt.Errorf("dp: %w", err)
	}
	s := &SGD{Cfg: cfg, Groups: &nn.RowGroups{Of: make([]int, rows)}, model: m, src: src}
	// Only a construction that knows its batch rows are its samples' rows
	// is checked: over declared Examples, or with OneRow (run.Module's
	// one-row samples). A plain construction without either (tests, and
	// code outside the repository) keeps the old guarantee only: the
	// BatchNorm refusal above.
	if cfg.Examples != nil || cfg.OneRow {
		// Every op from the batch inputs to the loss must be row-local or
		// a product checked below (nn.CheckRowLocal: a whitelist).
		rl, err := m.CheckRowLocal(perRowLoss, rows, cfg.PoolRows)
		if err != nil {
			return nil, fmt.Errorf("dp: %w", err)
		}
		s.reads, s.inputs = rl.Reads, rl
		if x := cfg.Examples; x != nil && x.Start != nil && len(rl.Reads) > 0 {
			// Over examples of several rows declared by Start, whether a
			// fixed row selection stays within one example depends on the
			// examples' sizes, which are the data: a step would pass on G
			// and be refused on G − v (the second outside audit of issue
			// 38). One-row examples are checked once below, generated
			// ones against their fill's tags.
			return nil, fmt.Errorf("dp: %s on the DP-SGD training path selects batch rows by fixed positions, and these examples span several rows each: whether it stays within one example would depend on the examples' sizes (the data); aggregate within examples with a product over the batch adjacency instead", rl.Reads[0].Op)
		}
		// The products checked at every step: those on the way to the
		// loss and those on the way to every per-sample rule's inputs (a
		// rule input off the loss path may hold a product of its own: the
		// third outside audit of issue 38, Δ 58.8 for 1).
		reached := []*G.Node{perRowLoss}
		for _, r := range recs {
			dense, _ := r.Rule.Inputs()
			reached = append(reached, dense...)
		}
		s.mixing = mixingOf(reached, func(n *G.Node) []nn.Mixing { return m.RowMixing(n, rows) })
		if cfg.PoolRows > 0 {
			s.pools = mixingOf(reached, func(n *G.Node) []nn.Mixing { return m.PoolMixing(n, rows, cfg.PoolRows) })
			if len(s.pools) == 0 {
				return nil, fmt.Errorf("dp: DP-SGD over pooled examples: the training path has no %d×%d pooling product", cfg.PoolRows, rows)
			}
			if cfg.PoolRows == rows {
				// A square product then has the pool's shape too: it is
				// checked as a pool (output row k reads only batch example
				// k's rows), the stricter reading; a within-example
				// aggregation over the batch rows is refused in this
				// shape (give the pool fewer rows than the batch).
				s.mixing = nil
			}
		}
		for r := range s.Groups.Of { // an empty batch until the first step
			s.Groups.Of[r] = -1
		}
	}
	if x := cfg.Examples; cfg.OneRow || x != nil && x.Start == nil && x.Generated == 0 {
		// One-row examples: batch rows i ≠ j may hold two examples, so any
		// off-diagonal entry of a fixed product is refused now.
		single := &nn.RowGroups{Of: make([]int, rows), Samples: rows}
		single.Singletons(rows)
		if err := nn.CheckBlocks(s.mixing, single, func(k int) string { return fmt.Sprintf("the example in batch row %d", k) }); err != nil {
			return nil, fmt.Errorf("dp: one-row examples: %w", err)
		}
		if err := nn.CheckRowReads(s.reads, single, func(k int) string { return fmt.Sprintf("the example in batch row %d", k) }); err != nil {
			return nil, fmt.Errorf("dp: one-row examples: %w", err)
		}
	}
	build := func() error {
		s.LossSum = G.Must(nn.SumAll(perRowLoss))
		var probes G.Nodes
		seen := map[*G.Node]bool{}
		for _, r := range recs {
			if !seen[r.Probe] {
				seen[r.Probe] = true
				probes = append(probes, r.Probe)
			}
		}
		deltas, err := m.Grad(s.LossSum, probes...)
		if err != nil {
			return fmt.Errorf("gradients at the layer outputs: %w", err)
		}
		delta := map[*G.Node]*G.Node{}
		for i, p := range probes {
			delta[p] = deltas[i]
		}
		// per-sample squared norms, one term per parameter
		norms := make([]*G.Node, len(m.Params))
		for i, p := range m.Params {
			r := byParam[p]
			d := delta[r.Probe]
			n, err := r.Rule.NormSq(d, s.Groups, p.Name)
			if err != nil {
				return fmt.Errorf("parameter %s (%s): %w", p.Name, r.Rule, err)
			}
			norms[i] = n
		}
		s.ParamNormSq = norms
		if len(norms) == 1 {
			s.NormSq = norms[0]
		} else {
			s.NormSq = norms[0] // ((n₀ + n₁) + n₂) + …
			for _, n := range norms[1:] {
				s.NormSq = G.Must(nn.Add(s.NormSq, n))
				G.WithName("dpsgd.norm2")(s.NormSq)
			}
			m.Tag(s.NormSq, nn.DPTagPrefix+"per-sample norm² (all parameters)")
		}
		s.Factors = G.Must(nn.ClipFactors(s.NormSq, cfg.Clip))
		rowFactors := G.Must(nn.ExpandToRows(s.Factors, s.Groups))
		scaled := map[*G.Node]*G.Node{} // probe → c∘δ
		for _, p := range probes {
			scaled[p] = nn.ScaleRows(delta[p], rowFactors)
			m.Tag(scaled[p], nn.DPTagPrefix+"clipped output gradient")
		}
		b := cfg.ExpectedBatch()
		for _, p := range m.Params {
			r := byParam[p]
			cd := scaled[r.Probe]
			sum, err := r.Rule.ClippedSum(cd)
			if err != nil {
				return fmt.Errorf("parameter %s (%s): %w", p.Name, r.Rule, err)
			}
			noise := &nn.Noise{Name: p.Name, Std: cfg.Multiplier * cfg.Clip, Src: src}
			noisy, err := nn.AddNoiseDiv(sum, noise, b)
			if err != nil {
				return err
			}
			m.Tag(sum, nn.DPTagPrefix+"clipped-sum")
			m.Tag(noisy, nn.DPTagPrefix+"noisy-grad")
			s.Clipped = append(s.Clipped, sum)
			s.Noisy = append(s.Noisy, noisy)
			s.Noise = append(s.Noise, noise)
			s.noiseSizes = append(s.noiseSizes, p.Node.Shape().TotalSize())
		}
		return m.CompileGradients(s.LossSum, s.Noisy, outputs, append([]*G.Node{s.NormSq, s.Factors}, s.ParamNormSq...)...)
	}
	// Every node built here is a privacy node for inspection ("dp:dp-sgd"),
	// except the gradients at the layer outputs (Model.Grad labels them);
	// the main ones are tagged with what they are.
	err = m.TagNew(nn.DPTagPrefix+"dp-sgd", func() error { return nn.Build(build) })
	if err != nil {
		return nil, fmt.Errorf("dp: building DP-SGD: %w", err)
	}
	if s.inputs != nil {
		if err := s.checkLayouts(); err != nil {
			return nil, err
		}
	}
	s.keyDropout()
	return s, nil
}

// keyDropout makes the training path's dropout masks draw from a child of
// the mechanism source (nn.Model.SetDropoutStream says why).
func (s *SGD) keyDropout() {
	s.model.SetDropoutStream(rand.New(s.src.Split("dpsgd.dropout")))
}

// SetSource replaces the source the Poisson sampling, the noise and the
// training path's dropout masks are drawn from (an audit gives every
// replayed step its own source).
func (s *SGD) SetSource(src *dp.Source) {
	s.dropAhead()
	s.src = src
	for _, n := range s.Noise {
		n.Src = src
	}
	s.keyDropout()
}

// StepStats describes one DP-SGD step (for traces).
type StepStats struct {
	BatchSize   int                // realised batch size
	ClippedFrac float64            // fraction of sampled samples with clip factor < 1
	MeanNorm    float64            // mean per-sample gradient norm before clipping
	ParamNorms  map[string]float64 // RMS over the batch of per-sample norms, per parameter
	NoiseNorm   float64            // L2 norm of all noise added (before division by B)
	Loss        float64            // mean loss over the sampled samples
}

// Step runs one DP-SGD step: it draws a batch of the Cfg.Samples samples
// from the noise source (Poisson with Cfg.Rate, or exactly Cfg.Batch
// without replacement), calls fill with each chunk of at most Capacity
// sample ids (fill loads their rows into the batch inputs and sets
// Groups), runs the graph, and returns the privatised gradient
// (Σ clipped + N(0,(zC)²))/B of every parameter (B = ExpectedBatch),
// in buffers the next Step overwrites. Noise is added exactly once per
// step, also for an empty batch.
func (s *SGD) Step(fill func(samples []int) error) ([][]float64, StepStats, error) {
	if s.Cfg.Examples != nil {
		return nil, StepStats{}, errNoExamples
	}
	return s.step(fill)
}

// StepExamples is Step over the declared Examples: it draws a Poisson
// sample of example ids, splits it into chunks whose rows fit the batch
// capacity, and for each chunk lays out its examples' rows (Batch), sets
// the row groups from the blocks, calls fill (which loads the rows'
// inputs, the loss rows and the batch adjacency; the groups it finds are
// the framework's and are set again after it returns), checks every
// row-mixing product of the training path against the groups (one pass
// over their entries), and runs the graph. Noise is added once per step.
func (s *SGD) StepExamples(fill func(b *Batch) error) ([][]float64, StepStats, error) {
	x := s.Cfg.Examples
	if x == nil {
		return nil, StepStats{}, errors.New("dp: DP-SGD: StepExamples needs declared Examples")
	}
	return s.step(func(chunk []int) error {
		if err := x.layout(chunk, len(s.Groups.Of), s.Cfg.PoolRows, &s.batch, s.Groups); err != nil {
			return err
		}
		of, n := slices.Clone(s.Groups.Of), s.Groups.Samples
		if err := fill(&s.batch); err != nil {
			return err
		}
		if x.Generated > 0 {
			return x.tagged(&s.batch, s.Groups) // the fill's tags, checked
		}
		copy(s.Groups.Of, of) // a fill function cannot re-tag rows
		s.Groups.Samples = n
		return nil
	})
}

func (s *SGD) step(fill func(samples []int) error) ([][]float64, StepStats, error) {
	batch, drawn := s.next, s.hasNext
	s.next, s.hasNext = nil, false
	done := false
	defer func() {
		if !done { // a failed step: no drawing may outlive it
			s.dropAhead()
		}
	}()
	if !drawn {
		var err error
		if batch, err = s.sample(); err != nil {
			return nil, StepStats{}, err
		}
	}
	chunks := s.chunks[:0]
	if x := s.Cfg.Examples; x != nil {
		var err error
		if chunks, err = x.chunks(batch, s.Cfg.Capacity, s.Cfg.PoolRows, chunks); err != nil {
			return nil, StepStats{}, err
		}
	} else {
		for lo := 0; lo < len(batch); lo += s.Cfg.Capacity {
			chunks = append(chunks, batch[lo:min(lo+s.Cfg.Capacity, len(batch))])
		}
	}
	if len(chunks) == 0 {
		chunks = append(chunks, nil)
	}
	s.chunks = chunks
	st := StepStats{BatchSize: len(batch), ParamNorms: map[string]float64{}}
	var total [][]float64
	std := s.Cfg.Multiplier * s.Cfg.Clip
	lossSum, normSum, clipped := 0.0, 0.0, 0
	if len(s.paramSq) != len(s.model.Params) {
		s.paramSq = make([]float64, len(s.model.Params))
	}
	paramSq := s.paramSq
	clear(paramSq)
	for ci, chunk := range chunks {
		last := ci == len(chunks)-1
		for _, n := range s.Noise {
			if last {
				n.Std = std
			} else {
				n.Std = 0
			}
		}
		if s.inputs != nil {
			if err := s.inputs.Reset(); err != nil {
				return nil, st, err
			}
		}
		if err := fill(chunk); err != nil {
			return nil, st, err
		}
		if s.Groups.Samples != len(chunk) {
			return nil, st, fmt.Errorf("dp: fill set %d samples for a chunk of %d", s.Groups.Samples, len(chunk))
		}
		if s.inputs != nil {
			if err := s.inputs.Check(); err != nil {
				return nil, st, fmt.Errorf("dp: DP-SGD: %w", err)
			}
		}
		if s.Cfg.Examples != nil || s.Cfg.OneRow {
			if err := nn.CheckBlocks(s.mixing, s.Groups, s.exampleName(chunk)); err != nil {
				return nil, st, fmt.Errorf("dp: DP-SGD: %w", err)
			}
			if err := nn.CheckPools(s.pools, s.Groups, s.exampleName(chunk)); err != nil {
				return nil, st, fmt.Errorf("dp: DP-SGD: %w", err)
			}
			if err := nn.CheckRowReads(s.reads, s.Groups, s.exampleName(chunk)); err != nil {
				return nil, st, fmt.Errorf("dp: DP-SGD: %w", err)
			}
		}
		if last && std > 0 && !drawn {
			// The noise does not depend on the batch: draw it while the
			// graph computes the clipped sums.
			nn.PrefetchNoise(s.Noise, s.noiseSizes)
		}
		loss, err := s.model.Step()
		if last {
			nn.WaitNoise(s.Noise) // consumed by the run (a noise drawn ahead waits for the last chunk)
		}
		if err != nil {
			return nil, st, err
		}
		if last && std > 0 && s.Ahead {
			// The source's next reads: the next batch, then its noise.
			if s.next, err = s.sample(); err != nil {
				return nil, st, err
			}
			s.hasNext = true
			nn.PrefetchNoise(s.Noise, s.noiseSizes)
		}
		lossSum += loss
		grads, err := s.model.Grads()
		if err != nil {
			return nil, st, err
		}
		switch {
		case len(chunks) == 1:
			total = grads // the graph's own buffers, which the next Step overwrites
		default:
			if s.total == nil {
				s.total = make([][]float64, len(grads))
				for i, g := range grads {
					s.total[i] = make([]float64, len(g))
				}
			}
			total = s.total
			for i, g := range grads {
				if ci == 0 {
					copy(total[i], g)
				} else {
					vec.Add(total[i], total[i], g)
				}
			}
		}
		ns := nn.Values(s.NormSq)
		fs := nn.Values(s.Factors)
		for k := 0; k < len(chunk); k++ {
			normSum += math.Sqrt(ns[k])
			if fs[k] < 1 {
				clipped++
			}
		}
		for i, pn := range s.ParamNormSq {
			v := nn.Values(pn)
			for k := 0; k < len(chunk); k++ {
				paramSq[i] += v[k]
			}
		}
	}
	if std > 0 {
		s.Cfg.Recorder.Record()
	}
	if !s.SkipNoiseNorm {
		noise := 0.0
		for _, n := range s.Noise {
			noise += floats.Dot(n.Last, n.Last)
		}
		st.NoiseNorm = math.Sqrt(noise)
	}
	if len(batch) > 0 {
		st.ClippedFrac = float64(clipped) / float64(len(batch))
		st.MeanNorm = normSum / float64(len(batch))
		st.Loss = lossSum / float64(len(batch))
		for i, p := range s.model.Params {
			st.ParamNorms[p.Name] = math.Sqrt(paramSq[i] / float64(len(batch)))
		}
	}
	done = true
	return total, st, nil
}

// exampleName names batch example k of a chunk by its sample id.
func (s *SGD) exampleName(chunk []int) func(k int) string {
	return func(k int) string {
		if k < len(chunk) {
			return fmt.Sprintf("example %d", chunk[k])
		}
		return fmt.Sprintf("batch example %d", k)
	}
}

// Release runs one Step and returns the privatised gradients of every
// parameter concatenated in parameter order: what a step releases, as an
// audit compares it.
func (s *SGD) Release(fill func(samples []int) error) ([]float64, error) {
	grads, _, err := s.Step(fill)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, g := range grads {
		out = append(out, g...)
	}
	return out, nil
}

// ReleaseExamples is Release over declared Examples (StepExamples).
func (s *SGD) ReleaseExamples(fill func(b *Batch) error) ([]float64, error) {
	grads, _, err := s.StepExamples(fill)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, g := range grads {
		out = append(out, g...)
	}
	return out, nil
}

// Steps is the number of DP-SGD steps of `epochs` passes at rate q over n
// samples as the accountant is told: ⌈epochs/q⌉ (one epoch is 1/q expected
// steps). Training runs exactly this many steps.
func Steps(epochs int, q float64) int {
	return int(math.Ceil(float64(epochs) / q))
}
