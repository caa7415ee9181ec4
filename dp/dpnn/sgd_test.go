package dpnn

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// sgdCase describes a random model and batch for comparing the ghost-norm
// DP-SGD nodes with the one-sample-at-a-time reference.
type sgdCase struct {
	name   string
	sparse bool
	norm   layers.NormKind
	groups []int // row → sample
	clip   float64
	inDrop float64 // input dropout on the sparse features (DP path only)
}

const sgdF, sgdC = 6, 3

func sgdInputs(rows int) ([]float64, *graphs.CSR, []int) {
	r := rand.New(rand.NewPCG(11, 12))
	x := make([]float64, rows*sgdF)
	var src, dst []int
	var val []float64
	for i := range x {
		x[i] = r.NormFloat64()
		if r.Float64() < 0.5 {
			src, dst, val = append(src, i/sgdF), append(dst, i%sgdF), append(val, x[i])
		}
	}
	labels := make([]int, rows)
	for i := range labels {
		labels[i] = r.IntN(sgdC)
	}
	return x, graphs.FromCOO(rows, sgdF, src, dst, val), labels
}

// buildSGDModel builds the same MLP (same seed, same parameter values) in
// recording mode (for DP-SGD) or plainly (for the reference). A non-nil xs
// replaces the sparse input (the reference for input dropout gets the
// dropped-out values the DP path saw); the returned Sparse is the input.
func buildSGDModel(t *testing.T, tc sgdCase, record bool, xs *graphs.CSR) (*nn.Model, *nn.CrossEntropy, *G.Node, *nn.Sparse) {
	t.Helper()
	rows := len(tc.groups)
	x, xs0, _ := sgdInputs(rows)
	if xs == nil {
		xs = xs0
	}
	var sp *nn.Sparse
	m := nn.NewModel(42)
	var ce *nn.CrossEntropy
	var loss *G.Node
	err := nn.Build(func() error {
		cfg := layers.MLPConfig{Dims: []int{sgdF, 5, 4, sgdC}, Activation: layers.SELU, Norm: tc.norm, PlainLast: true}
		if record {
			cfg.InputDropout = tc.inDrop
		}
		p, err := layers.NewMLP(m, "mlp", cfg)
		if err != nil {
			return err
		}
		if record {
			m.StartRecording()
		}
		var logits *G.Node
		if tc.sparse {
			sp = nn.NewSparse("X", xs)
			logits = p.ForwardSparse(sp)
		} else {
			logits = p.Forward(m.Input("X", x, rows, sgdF))
		}
		m.StopRecording()
		if ce, err = nn.NewCrossEntropy(m, logits, "loss"); err != nil {
			return err
		}
		loss = G.Must(G.Sum(ce.PerRow))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, ce, loss, sp
}

func TestGhostClippingMatchesPerSampleReference(t *testing.T) {
	cases := []sgdCase{
		{"dense", false, layers.NormNone, []int{0, 1, 2, 3, 4}, 0.5, 0},
		{"dense-groupnorm", false, layers.NormGroup, []int{0, 1, 2, 3, 4, 5}, 0.8, 0},
		{"sparse", true, layers.NormNone, []int{0, 1, 2, 3}, 0.6, 0},
		{"grouped-rows", false, layers.NormGroup, []int{0, 0, 1, 2, 2, 2, 3}, 0.7, 0},
		{"grouped-sparse-with-padding", true, layers.NormGroup, []int{0, 1, 1, 2, -1, -1}, 0.9, 0},
		{"no-clipping", false, layers.NormGroup, []int{0, 1, 2}, 1e6, 0},
		// Input dropout replaces the sparse input by its kept entries before the step:
		// the ghost norms and clipped sums must use the dropped-out values.
		{"sparse-input-dropout", true, layers.NormGroup, []int{0, 1, 2, 3, 4}, 0.6, 0.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := len(tc.groups)
			_, _, labels := sgdInputs(rows)
			samples := 0
			for _, g := range tc.groups {
				samples = max(samples, g+1)
			}
			var live []int
			for r, g := range tc.groups {
				if g >= 0 {
					live = append(live, r)
				}
			}
			// DP-SGD path, noise off, B = 1 so Noisy = Clipped.
			m, ce, _, sp := buildSGDModel(t, tc, true, nil)
			s, err := BuildSGD(m, ce.PerRow, SGDConfig{Clip: tc.clip, Multiplier: 0, Rate: 1, Samples: 1, Capacity: rows}, dp.NewSource(1), nil)
			if err != nil {
				t.Fatal(err)
			}
			copy(s.Groups.Of, tc.groups)
			s.Groups.Samples = samples
			if err := ce.SetRows(live, labels); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Step(); err != nil {
				t.Fatal(err)
			}
			got, err := m.Grads()
			if err != nil {
				t.Fatal(err)
			}
			normSq := nn.Values(s.NormSq)

			// Reference: one sample at a time through ordinary gradients, on
			// the input values the DP step saw.
			var seen *graphs.CSR
			if tc.inDrop > 0 {
				seen = sp.A.Clone() // the kept entries only
				_, xs, _ := sgdInputs(rows)
				if dropped := xs.NNZ() - seen.NNZ(); dropped <= 0 || dropped == xs.NNZ() {
					t.Fatalf("input dropout dropped %d of %d entries: the test does not exercise it", dropped, xs.NNZ())
				}
			}
			ref, rce, rloss, _ := buildSGDModel(t, tc, false, seen)
			if err := ref.Compile(rloss, nil); err != nil {
				t.Fatal(err)
			}
			want := make([][]float64, len(ref.Params))
			for i, p := range ref.Params {
				want[i] = make([]float64, p.Size())
			}
			clippedSeen := 0
			for smp := 0; smp < samples; smp++ {
				var rs []int
				for r, g := range tc.groups {
					if g == smp {
						rs = append(rs, r)
					}
				}
				if err := rce.SetRows(rs, labels); err != nil {
					t.Fatal(err)
				}
				if _, err := ref.Step(); err != nil {
					t.Fatal(err)
				}
				g, err := ref.Grads()
				if err != nil {
					t.Fatal(err)
				}
				n2 := 0.0
				for _, gi := range g {
					for _, v := range gi {
						n2 += v * v
					}
				}
				if math.Abs(n2-normSq[smp]) > 1e-9*math.Max(1, n2) {
					t.Errorf("sample %d: ghost squared norm %.12g, reference %.12g", smp, normSq[smp], n2)
				}
				c := math.Min(1, tc.clip/(math.Sqrt(n2)+1e-6))
				if c < 1 {
					clippedSeen++
				}
				for i, gi := range g {
					for j, v := range gi {
						want[i][j] += c * v
					}
				}
			}
			if tc.clip < 1 && clippedSeen == 0 {
				t.Fatalf("test does not exercise clipping")
			}
			for i := range want {
				for j := range want[i] {
					if d := math.Abs(got[i][j] - want[i][j]); d > 1e-9*math.Max(1, math.Abs(want[i][j])) {
						t.Fatalf("%s[%d]: ghost clipped sum %.12g, reference %.12g", m.Params[i].Name, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}

func TestDPSGDRefusesBatchNorm(t *testing.T) {
	tc := sgdCase{norm: layers.NormBatch, groups: []int{0, 1, 2}}
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	_, err := BuildSGD(m, ce.PerRow, SGDConfig{Clip: 1, Multiplier: 1, Rate: 0.5, Samples: 3, Capacity: 3}, dp.NewSource(1), nil)
	if err == nil || !strings.Contains(err.Error(), "GroupNorm") {
		t.Fatalf("BatchNorm under DP-SGD: got %v, want an error pointing to GroupNorm", err)
	}
}

func TestDPSGDRefusesUnrecordedParameter(t *testing.T) {
	tc := sgdCase{groups: []int{0, 1, 2}}
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	m.NewParam("stray", nn.Constant(0), 2)
	_, err := BuildSGD(m, ce.PerRow, SGDConfig{Clip: 1, Multiplier: 1, Rate: 0.5, Samples: 3, Capacity: 3}, dp.NewSource(1), nil)
	if err == nil || !strings.Contains(err.Error(), "stray") {
		t.Fatalf("got %v, want an error naming the parameter", err)
	}
}

// TestDPSGDNoiseScale checks that the privatised gradient of an empty batch
// is exactly noise with standard deviation z·C/B (KS test), that one
// example's clipped gradient has norm C, and that noise is drawn once per
// step even when a batch is split into chunks.
func TestDPSGDNoiseScale(t *testing.T) {
	tc := sgdCase{norm: layers.NormGroup, groups: []int{0, 1, 2, 3}}
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	const z, c = 1.3, 0.7
	cfg := SGDConfig{Clip: c, Multiplier: z, Rate: 1e-9, Samples: 4, Capacity: 4}
	s, err := BuildSGD(m, ce.PerRow, cfg, dp.NewSource(5), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, labels := sgdInputs(4)
	fill := func(samples []int) error {
		s.Groups.Singletons(len(samples))
		return ce.SetRows(samples, labels)
	}
	var draws []float64
	for step := 0; step < 40; step++ {
		g, st, err := s.Step(fill)
		if err != nil {
			t.Fatal(err)
		}
		if st.BatchSize != 0 {
			t.Fatalf("rate 1e-9 sampled %d", st.BatchSize)
		}
		for _, gi := range g {
			draws = append(draws, gi...)
		}
	}
	std := z * c / cfg.ExpectedBatch()
	for i := range draws {
		draws[i] /= std
	}
	if d := ksNormal(draws); d > 1.63/math.Sqrt(float64(len(draws))) { // p ≈ 0.01
		t.Fatalf("noise is not N(0, (zC/B)²): KS distance %.4f over %d draws", d, len(draws))
	}

	// One sample, no noise: the clipped gradient has norm exactly C when
	// the raw gradient is larger.
	for _, n := range s.Noise {
		n.Std = 0
	}
	cfg1 := cfg
	cfg1.Multiplier, cfg1.Rate, cfg1.Samples = 0, 1, 1
	m1, ce1, _, _ := buildSGDModel(t, tc, true, nil)
	s1, err := BuildSGD(m1, ce1.PerRow, SGDConfig{Clip: 1e-3, Multiplier: 0, Rate: 1, Samples: 1, Capacity: 4}, dp.NewSource(5), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, st, err := s1.Step(func(samples []int) error {
		s1.Groups.Singletons(len(samples))
		return ce1.SetRows(samples, labels)
	})
	if err != nil {
		t.Fatal(err)
	}
	n2 := 0.0
	for _, gi := range g {
		for _, v := range gi {
			n2 += v * v
		}
	}
	if st.BatchSize != 1 || math.Abs(math.Sqrt(n2)-1e-3) > 1e-9 {
		t.Fatalf("one clipped example: norm %.12g, want C = 1e-3 (batch %d)", math.Sqrt(n2), st.BatchSize)
	}

	// Chunks: capacity 1 with 4 samples at q = 1 → 4 chunks, one noise draw.
	m2, ce2, _, _ := buildSGDModel(t, tc, true, nil)
	s2, err := BuildSGD(m2, ce2.PerRow, SGDConfig{Clip: 1, Multiplier: 1, Rate: 1, Samples: 4, Capacity: 1}, dp.NewSource(5), nil)
	if err != nil {
		t.Fatal(err)
	}
	// rows = 4 but capacity 1 sample per run
	_, st, err = s2.Step(func(samples []int) error {
		for r := range s2.Groups.Of {
			s2.Groups.Of[r] = -1
		}
		for k := range samples {
			s2.Groups.Of[k] = k
		}
		s2.Groups.Samples = len(samples)
		return ce2.SetRows(samples, labels)
	})
	if err != nil {
		t.Fatal(err)
	}
	draws2 := 0
	for _, n := range s2.Noise {
		draws2 += n.Draws
	}
	if st.BatchSize != 4 || draws2 != len(s2.Noise) {
		t.Fatalf("chunked step: batch %d, noise drawn %d times for %d parameters", st.BatchSize, draws2, len(s2.Noise))
	}
}

// ksNormal is the Kolmogorov–Smirnov distance between the sample and N(0,1).
func ksNormal(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	d := 0.0
	for i, v := range s {
		f := 0.5 * math.Erfc(-v/math.Sqrt2)
		d = math.Max(d, math.Max(math.Abs(f-float64(i)/float64(len(s))), math.Abs(f-float64(i+1)/float64(len(s)))))
	}
	return d
}

// TestDPSGDFixedBatch: with SGDConfig.Batch every step fills exactly Batch
// distinct samples, drawn without replacement from the noise source (the
// same draw dp.FixedSample makes from a source in the same state), divides by
// Batch, and records the caller's StepEvent once per noisy step; the
// configuration is checked.
func TestDPSGDFixedBatch(t *testing.T) {
	tc := sgdCase{norm: layers.NormGroup, groups: []int{0, 1, 2, 3, 4, 5}}
	_, _, labels := sgdInputs(6)
	ledger := dp.NewLedger()
	h := dp.HypergeomGaussian{Population: 6, Batch: 3, Occurrences: 2, Multiplier: 1, Change: 2, Steps: 20}
	step, err := h.Step()
	if err != nil {
		t.Fatal(err)
	}
	all, err := h.Event()
	if err != nil {
		t.Fatal(err)
	}
	plan := &dp.Plan{Level: "node", Epsilon: math.Inf(1), Delta: 1e-5, Accountant: "rdp", Releases: []dp.Planned{{Name: "d", Event: all}}}
	rec, err := plan.Recorder(ledger, "d", step)
	if err != nil {
		t.Fatal(err)
	}
	cfg := SGDConfig{Clip: 1, Multiplier: 0.5, Batch: 3, Samples: 6, Capacity: 2, Recorder: rec}
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	s, err := BuildSGD(m, ce.PerRow, cfg, dp.NewSource(9), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ExpectedBatch() != 3 {
		t.Fatalf("ExpectedBatch %v, want 3", cfg.ExpectedBatch())
	}
	ref := dp.NewSource(9)
	for range 20 {
		var got []int
		_, st, err := s.Step(func(samples []int) error {
			got = append(got, samples...)
			s.Groups.Singletons(len(samples))
			return ce.SetRows(samples, labels)
		})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := dp.FixedSample(ref, 6, 3)
		for _, n := range s.Noise { // the noise the step drew after the batch
			ref.FillNormal(make([]float64, len(n.Last)))
		}
		if st.BatchSize != 3 || len(got) != 3 || !slicesEqual(got, want) {
			t.Fatalf("batch %v (size %d), want exactly %v from the noise source", got, st.BatchSize, want)
		}
	}
	if n := len(ledger.Entries()); n != 20 {
		t.Fatalf("%d ledger entries for 20 noisy steps", n)
	}
	if e := ledger.Entries()[0].Event; e.String() != step.String() {
		t.Fatalf("ledger records %v, want the step event %v", e, step)
	}
	if err := plan.Check(ledger); err != nil {
		t.Fatalf("20 noisy steps against a plan of 20: %v", err)
	}
	for _, bad := range []SGDConfig{
		{Clip: 1, Multiplier: 1, Batch: 7, Samples: 6, Capacity: 2},
		{Clip: 1, Multiplier: 1, Batch: 3, Rate: 0.5, Samples: 6, Capacity: 2},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDPSGDAhead: steps that sample the next batch and draw its noise
// ahead (Ahead) release the same privatised gradients, bit for bit, over
// the same batches as steps that draw them in turn — with several chunks
// per step, and after SetSource drops what was drawn ahead.
func TestDPSGDAhead(t *testing.T) {
	tc := sgdCase{norm: layers.NormGroup, groups: []int{0, 1, 2, 3, 4, 5}}
	_, _, labels := sgdInputs(6)
	cfg := SGDConfig{Clip: 1, Multiplier: 0.8, Rate: 0.6, Samples: 6, Capacity: 2}
	var runs [2][][]float64
	for k, ahead := range []bool{false, true} {
		m, ce, _, _ := buildSGDModel(t, tc, true, nil)
		s, err := BuildSGD(m, ce.PerRow, cfg, dp.NewSource(3), nil)
		if err != nil {
			t.Fatal(err)
		}
		const steps = 8
		for i := range steps {
			if i == 4 {
				s.SetSource(dp.NewSource(77)) // drops a batch and noise drawn ahead
			}
			s.Ahead = ahead && i+1 < steps && i != 3
			var batch []float64
			g, _, err := s.Step(func(samples []int) error {
				for _, v := range samples {
					batch = append(batch, float64(v))
				}
				s.Groups.Singletons(len(samples))
				return ce.SetRows(samples, labels)
			})
			if err != nil {
				t.Fatal(err)
			}
			runs[k] = append(runs[k], batch)
			for _, gi := range g {
				runs[k] = append(runs[k], append([]float64(nil), gi...))
			}
		}
	}
	if len(runs[0]) != len(runs[1]) {
		t.Fatalf("%d and %d released vectors", len(runs[0]), len(runs[1]))
	}
	// A step that fails after a step drew ahead waits for that drawing
	// (the race detector checks it), and the next step runs.
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	s, err := BuildSGD(m, ce.PerRow, cfg, dp.NewSource(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	fill := func(samples []int) error {
		s.Groups.Singletons(len(samples))
		return ce.SetRows(samples, labels)
	}
	s.Ahead = true
	if _, _, err := s.Step(fill); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Step(func([]int) error { return errors.New("fill failed") }); err == nil {
		t.Fatal("a failing fill did not fail the step")
	}
	if _, _, err := s.Step(fill); err != nil {
		t.Fatal(err)
	}
	for i := range runs[0] {
		a, b := runs[0][i], runs[1][i]
		if len(a) != len(b) {
			t.Fatalf("release %d: %d and %d values", i, len(a), len(b))
		}
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				t.Fatalf("release %d, value %d: in turn %v, ahead %v", i, j, a[j], b[j])
			}
		}
	}
}

// TestDPSGDPresent: with Present, a step's batch is the Poisson draw over all
// Samples ids (the same draw dp.PoissonSample makes from a source in the
// same state) restricted to the present ids, the noisy sum is still divided
// by q·Samples, and a malformed flag set is refused.
func TestDPSGDPresent(t *testing.T) {
	tc := sgdCase{norm: layers.NormGroup, groups: []int{0, 1, 2, 3, 4, 5}}
	_, _, labels := sgdInputs(6)
	present := []bool{true, false, true, true, false, true}
	cfg := SGDConfig{Clip: 1, Multiplier: 0, Rate: 0.5, Samples: 6, Present: present, Capacity: 6}
	m, ce, _, _ := buildSGDModel(t, tc, true, nil)
	s, err := BuildSGD(m, ce.PerRow, cfg, dp.NewSource(9), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ExpectedBatch() != 3 {
		t.Fatalf("ExpectedBatch %v, want q·Samples = 3", cfg.ExpectedBatch())
	}
	ref := dp.NewSource(9)
	absentDrawn := 0
	for range 40 {
		var got []int
		if _, _, err := s.Step(func(samples []int) error {
			got = append(got, samples...)
			s.Groups.Singletons(len(samples))
			return ce.SetRows(samples, labels)
		}); err != nil {
			t.Fatal(err)
		}
		var want []int
		for _, i := range dp.PoissonSample(ref, 6, 0.5) {
			if present[i] {
				want = append(want, i)
			} else {
				absentDrawn++
			}
		}
		if !slicesEqual(got, want) {
			t.Fatalf("batch %v, want the draw's present ids %v", got, want)
		}
	}
	if absentDrawn == 0 {
		t.Fatal("test set-up: no absent id was ever drawn")
	}
	for _, bad := range []SGDConfig{
		{Clip: 1, Rate: 0.5, Samples: 6, Present: present[:5], Capacity: 6},
		{Clip: 1, Batch: 2, Samples: 6, Present: present, Capacity: 6},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "present") {
			t.Errorf("%+v: err = %v, want a refusal naming the present ids", bad, err)
		}
	}
}

// TestDPSGDDropoutFromMechanismSource: the training path's dropout masks
// are drawn from the DP-SGD mechanism source, not from the model's seed (a
// seed written in a run's record would make the masks known): with no noise
// and every sample in the batch, the same model seed and source give the
// same gradient, another source another gradient, and the model seed alone
// does not fix them.
func TestDPSGDDropoutFromMechanismSource(t *testing.T) {
	tc := sgdCase{sparse: true, norm: layers.NormNone, groups: []int{0, 1, 2, 3}, inDrop: 0.5}
	_, _, labels := sgdInputs(4)
	release := func(src uint64) []float64 {
		m, ce, _, _ := buildSGDModel(t, tc, true, nil)
		s, err := BuildSGD(m, ce.PerRow, SGDConfig{Clip: 100, Multiplier: 0, Rate: 1, Samples: 4, Capacity: 4}, dp.NewSource(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Release(func(samples []int) error {
			s.Groups.Singletons(len(samples))
			return ce.SetRows(samples, labels)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(a, b []float64) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	a, b, c := release(1), release(1), release(2)
	if !same(a, b) {
		t.Fatal("the same model seed and mechanism source gave different gradients")
	}
	if same(a, c) {
		t.Fatal("another mechanism source gave the same gradient: the dropout masks follow the model's seed")
	}
}
