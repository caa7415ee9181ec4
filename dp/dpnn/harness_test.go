package dpnn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// The shared harness of the audit regression tests: each test builds its
// construction on G and on G′ = G without example 0 (it keeps its id and
// has no rows), runs one noiseless DP-SGD step (z = 0) on each and compares
// the two clipped sums with dist against the declared R·Change·C.

// ---- Data and layouts ----

// dist is the L2 distance of two releases.
func dist(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(d)
}

// exampleIDs is 0, 1, …, n−1.
func exampleIDs(n int) []int {
	all := make([]int, n)
	for e := range all {
		all[e] = e
	}
	return all
}

// startRows is the Start of n examples of rows rows each, example 0 without
// rows when removed0 (G′).
func startRows(n, rows int, removed0 bool) []int {
	start := make([]int, n+1)
	for e := 0; e < n; e++ {
		r := rows
		if e == 0 && removed0 {
			r = 0
		}
		start[e+1] = start[e] + r
	}
	return start
}

// oneRowPair is the ids 0…n−1 and the Start of their n one-row examples on
// G and on G′ (example 0 keeps its id and has no rows).
func oneRowPair(n int) (all, startG, startG2 []int) {
	return exampleIDs(n), startRows(n, 1, false), startRows(n, 1, true)
}

// identityAdj is the examples' adjacency: every row a self-loop (each
// example one row, so block-diagonal).
func identityAdj(rows int) *graphs.CSR {
	src := make([]int, rows)
	for i := range src {
		src[i] = i
	}
	return graphs.FromCOO(rows, rows, src, src, nil)
}

// emptySparse is a rows × cols sparse leaf with no entries, for a fill to Set.
func emptySparse(name string, rows, cols int) *nn.Sparse {
	return nn.NewSparse(name, &graphs.CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)})
}

// signedRows is the data of examples ids, len(v) features each: example
// e's row is scale·(−1)^e·v, its label e mod 2.
func signedRows(ids []int, v []float64, scale float64) ([]float64, []int) {
	var feats []float64
	var labels []int
	for _, e := range ids {
		for j := range v {
			feats = append(feats, scale*float64(1-2*(e%2))*v[j])
		}
		labels = append(labels, e%2)
	}
	return feats, labels
}

// pooledSignedRows is the universe of n pooled examples of two rows each,
// len(v) features a row: example e's row r is scale·(−1)^e·(1+r)·v, its
// label e mod 2; with absent0, example 0's rows are left out (G′: the rows
// of e ≥ 1 renumbered from 0), its label kept.
func pooledSignedRows(n int, v []float64, scale float64, absent0 bool) ([]float64, []int) {
	var feats []float64
	labels := make([]int, n)
	for e := 0; e < n; e++ {
		labels[e] = e % 2
		if e == 0 && absent0 {
			continue
		}
		for r := 0; r < 2; r++ {
			for j := range v {
				feats = append(feats, scale*float64(1-2*(e%2))*v[j]*float64(1+r))
			}
		}
	}
	return feats, labels
}

// signPattern is trial's deterministic pattern of n targets ±w.
func signPattern(trial, n int, w float64) []float64 {
	targ := make([]float64, n)
	s := uint64(trial*2654435761 + 12345)
	for e := range targ {
		s = s*6364136223846793005 + 1442695040888963407
		if s>>63 == 1 {
			targ[e] = w
		} else {
			targ[e] = -w
		}
	}
	return targ
}

// ---- Examples and models ----

// startExamples is NewExamples over start (n = len(start) − 1 examples,
// no adjacency, R = Change = 1).
func startExamples(t *testing.T, start []int, what string) *dpnn.Examples {
	t.Helper()
	x, err := dpnn.NewExamples(len(start)-1, start, nil, 1, 1, what)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// pooledExamples: n pooled examples of rows rows each (every row of weight
// w), example 0 absent with no rows when absent0; R = Change = 1.
func pooledExamples(t *testing.T, n, rows int, w float64, absent0 bool) *dpnn.Examples {
	t.Helper()
	start := startRows(n, rows, absent0)
	present := make([]bool, n)
	for e := range present {
		present[e] = !(e == 0 && absent0)
	}
	ws := make([]float64, start[n])
	for i := range ws {
		ws[i] = w
	}
	x, err := dpnn.PooledExamples(n, start, ws, present, 1, 1, "pooled")
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// batchModel is a model with the batch leaf Xb of capacity × f, capacity
// the rows a batch of x at cfg's rate can hold.
func batchModel(x *dpnn.Examples, cfg dpnn.PrivateConfig, f int) (int, *nn.Model, *G.Node) {
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	return capacity, m, xin
}

// oneRowModel is n one-row examples (R = 1, Change = 2), one noiseless
// step's configuration (q = 1, clip C) and a model with the batch leaf Xb
// (capacity × f).
func oneRowModel(t *testing.T, n, f int, clip float64) (*dpnn.Examples, dpnn.PrivateConfig, int, *nn.Model, *G.Node) {
	t.Helper()
	x, err := dpnn.OneRow(n, 1, 2, "row")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 2, BatchSize: n, Epochs: 1, Clip: clip, What: "row"}
	capacity, m, xin := batchModel(x, cfg, f)
	return x, cfg, capacity, m, xin
}

// startModel is n examples declared by start with adjacency adj (R =
// Change = 1), one noiseless step's configuration (q = 1, C = 1) and a
// model with the batch leaf Xb (capacity × f).
func startModel(t *testing.T, n int, start []int, adj *graphs.CSR, what string, f int) (*dpnn.Examples, dpnn.PrivateConfig, int, *nn.Model, *G.Node) {
	t.Helper()
	x, err := dpnn.NewExamples(n, start, adj, 1, 1, what)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: what}
	capacity, m, xin := batchModel(x, cfg, f)
	return x, cfg, capacity, m, xin
}

// generatedModel is n generated examples of at most one row (R = Change =
// 1), one noiseless step's configuration (q = 1, C = 1) and a model with
// the batch leaf Xb (capacity × f).
func generatedModel(t *testing.T, n int, what string, f int) (*dpnn.Examples, dpnn.PrivateConfig, int, *nn.Model, *G.Node) {
	t.Helper()
	x, err := dpnn.GeneratedExamples(n, 1, 1, 1, what)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: what}
	capacity, m, xin := batchModel(x, cfg, f)
	return x, cfg, capacity, m, xin
}

// pooledHeadModel is the setup of the pooled-layout audits: n pooled
// examples of 2 rows (weight 1, example 0 absent with absent0), PoolRows =
// capacity = 2n, one noiseless step's configuration (q = 1, C = 1) and a
// model with the batch leaf Xb (capacity × 1).
func pooledHeadModel(t *testing.T, n int, absent0 bool) (*dpnn.Examples, dpnn.PrivateConfig, int, *nn.Model, *G.Node) {
	t.Helper()
	x := pooledExamples(t, n, 2, 1, absent0)
	capacity := 2 * n
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "pooled", PoolRows: capacity}
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity), capacity, 1)
	return x, cfg, capacity, m, xin
}

// mustBuild builds a graph with nn.Build; an error fails the test.
func mustBuild(t *testing.T, build func() error) {
	t.Helper()
	if err := nn.Build(build); err != nil {
		t.Fatal(err)
	}
}

// recordedLinear is x·W (+ b) by a new linear layer, its product recorded
// for the per-sample gradient norms.
func recordedLinear(m *nn.Model, name string, x *G.Node, in, out int, bias bool) *G.Node {
	lin := layers.NewLinear(m, name, in, out, bias, layers.InitPyG)
	m.StartRecording()
	y := lin.Forward(x)
	m.StopRecording()
	return y
}

// evenRowsLoss is the loss of the selection-multiplicity audits: y = x·W + b
// (recorded), each row's loss the output of its even partner row 2⌊r/2⌋
// (GatherRows), so a row-pair's loss reads the first row twice.
func evenRowsLoss(m *nn.Model, xin *G.Node, f, rows int) (*G.Node, error) {
	idx := make([]int, rows)
	for r := range idx {
		idx[r] = r - r%2
	}
	y := recordedLinear(m, "lin", xin, f, 1, true)
	g, err := nn.GatherRows(y, idx, "even")
	if err != nil {
		return nil, err
	}
	return nn.RowSums(g), nil
}

// ---- The noiseless step ----

// noiselessPrivate is dpnn.Private with z = 0, no recorder and the source
// of seed 1 (the step draws no noise).
func noiselessPrivate(m *nn.Model, loss *G.Node, x *dpnn.Examples, cfg dpnn.PrivateConfig) (*dpnn.SGD, error) {
	return dpnn.Private(m, loss, nil, x, cfg, 0, nil, dp.NewSource(1))
}

// scaledRelease is one ReleaseExamples with fill, rescaled by rate·N: the
// clipped sum of the examples' gradients.
func scaledRelease(sgd *dpnn.SGD, cfg dpnn.PrivateConfig, fill func(*dpnn.Batch) error) ([]float64, error) {
	rel, err := sgd.ReleaseExamples(fill)
	if err != nil {
		return nil, err
	}
	for i := range rel {
		rel[i] *= cfg.Rate() * float64(cfg.N)
	}
	return rel, nil
}

// mustScaledRelease is scaledRelease where a step error fails the test
// (prefix names the case).
func mustScaledRelease(t *testing.T, prefix string, sgd *dpnn.SGD, cfg dpnn.PrivateConfig, fill func(*dpnn.Batch) error) []float64 {
	t.Helper()
	rel, err := scaledRelease(sgd, cfg, fill)
	if err != nil {
		t.Fatalf("%sstep: %v", prefix, err)
	}
	return rel
}

// noiselessRelease is one noiseless step: Private (a refusal is returned),
// then scaledRelease with fill (a step error is returned too).
func noiselessRelease(m *nn.Model, loss *G.Node, x *dpnn.Examples, cfg dpnn.PrivateConfig, fill func(*dpnn.Batch) error) ([]float64, error) {
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	return scaledRelease(sgd, cfg, fill)
}

// buildRelease is build model → Private → one noiseless release: build runs
// in nn.Build and returns the per-row loss (a build error fails the test),
// then noiselessRelease with fill.
func buildRelease(t *testing.T, m *nn.Model, x *dpnn.Examples, cfg dpnn.PrivateConfig, build func() (*G.Node, error), fill func(*dpnn.Batch) error) ([]float64, error) {
	t.Helper()
	var loss *G.Node
	mustBuild(t, func() error {
		var err error
		loss, err = build()
		return err
	})
	return noiselessRelease(m, loss, x, cfg, fill)
}

// gramStep is the construction of the Gram-form cancellation audits: a
// linear layer lin (f → o, bias or not) on the batch input Xb, recorded,
// and the per-row loss ℓ_r = Σ_j y_rj·T_rj, T the batch-rows leaf Tb
// (capacity × o). Xb is dense unless sparseRows is set (then a sparse leaf
// read by ForwardSparse).
type gramStep struct {
	what string
	clip float64
	f, o int
	bias bool
	// rows writes batch b: its input rows into xb and targets into tb
	// (both cleared).
	rows func(b *dpnn.Batch, xb, tb []float64)
	// sparseRows, instead of rows: the batch input as a capacity × f
	// sparse matrix; targets into tb (cleared).
	sparseRows func(b *dpnn.Batch, capacity int, tb []float64) *graphs.CSR
}

// release is one noiseless step over x (q = 1, R = Change = 1); a refusal
// or a step error fails the test. It returns the clipped sum and the step.
func (s gramStep) release(t *testing.T, x *dpnn.Examples) ([]float64, *dpnn.SGD) {
	t.Helper()
	n := x.N
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: s.clip, What: s.what}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	var xin *G.Node
	var xs *nn.Sparse
	if s.sparseRows != nil {
		xs = emptySparse("Xb", capacity, s.f)
	} else {
		xin = m.Input("Xb", make([]float64, capacity*s.f), capacity, s.f)
	}
	tin := m.Input("Tb", make([]float64, capacity*s.o), capacity, s.o)
	var loss *G.Node
	mustBuild(t, func() error {
		var y *G.Node
		if xs != nil {
			lin := layers.NewLinear(m, "lin", s.f, s.o, s.bias, layers.InitPyG)
			m.StartRecording()
			y = lin.ForwardSparse(xs)
			m.StopRecording()
		} else {
			y = recordedLinear(m, "lin", xin, s.f, s.o, s.bias)
		}
		loss = nn.RowSums(G.Must(G.HadamardProd(y, tin)))
		return nil
	})
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	xb, tb := make([]float64, capacity*s.f), make([]float64, capacity*s.o)
	rel := mustScaledRelease(t, "", sgd, cfg, func(b *dpnn.Batch) error {
		clear(tb)
		if xs != nil {
			if err := xs.Set(s.sparseRows(b, capacity, tb)); err != nil {
				return err
			}
		} else {
			clear(xb)
			s.rows(b, xb, tb)
			if err := nn.SetValue(xin, xb); err != nil {
				return err
			}
		}
		return nn.SetValue(tin, tb)
	})
	return rel, sgd
}

// ---- Fills ----

// firstRows clears buf and writes, for each example with rows, its first
// batch row r: the features of universe row b.Rows[r] (f of them) into buf
// and its label into lab. It returns those rows, for CrossEntropy.SetRows.
func firstRows(b *dpnn.Batch, f int, feats []float64, labels []int, buf []float64, lab []int) []int {
	clear(buf)
	var firsts []int
	for k := range b.Examples {
		if b.First[k+1] == b.First[k] {
			continue // an example with no rows (deleted)
		}
		r := b.First[k]
		u := b.Rows[r] // universe row
		copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
		lab[r] = labels[u]
		firsts = append(firsts, r)
	}
	return firsts
}

// firstRowsFill is the fill of the one-row audits: firstRows into Xb, then
// also(firsts) when set (another batch input), then the first rows'
// labels on ce.
func firstRowsFill(xin *G.Node, ce *nn.CrossEntropy, f, capacity int, feats []float64, labels []int, also func(firsts []int) error) func(*dpnn.Batch) error {
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	return func(b *dpnn.Batch) error {
		firsts := firstRows(b, f, feats, labels, buf, lab)
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if also != nil {
			if err := also(firsts); err != nil {
				return err
			}
		}
		return ce.SetRows(firsts, lab)
	}
}

// exampleRowsFill writes example e's features feats[e·f:(e+1)·f] into its
// batch row of xin and gives every row label 0.
func exampleRowsFill(xin *G.Node, ce *nn.CrossEntropy, feats []float64, f, capacity int) func(*dpnn.Batch) error {
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	return func(b *dpnn.Batch) error {
		clear(buf)
		for k, e := range b.Examples {
			copy(buf[b.First[k]*f:(b.First[k]+1)*f], feats[e*f:(e+1)*f])
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		return ce.SetRows(b.First[:len(b.Examples)], lab)
	}
}

// fillPooledTargets clears xb and tb, writes 1 into every batch row of xb
// and each example's target into tb: at its pooled row k (poolLayout) or
// at each of its batch rows.
func fillPooledTargets(b *dpnn.Batch, targ, xb, tb []float64, poolLayout bool) {
	clear(xb)
	clear(tb)
	for k, e := range b.Examples {
		for r := b.First[k]; r < b.First[k+1]; r++ {
			xb[r] = 1
			if !poolLayout {
				tb[r] = targ[e] // batch row r: the example laid out there
			}
		}
		if poolLayout {
			tb[k] = targ[e] // pooled row k: example k
		}
	}
}

// ---- Verdicts ----

// checkWithin logs an accepted pair and fails the test unless
// ‖a − b‖ ≤ bound (+1e-9); a NaN distance fails too.
func checkWithin(t *testing.T, what string, a, b []float64, bound float64) {
	t.Helper()
	d := dist(a, b)
	t.Logf("%s accepted: G %v, G' %v: ‖Δ clipped sum‖ = %.4f (declared %g)", what, a, b, d, bound)
	if !(d <= bound+1e-9) {
		t.Errorf("%s: one neighbouring example moved the clipped sum by %.4f > %g", what, d, bound)
	}
}

// within is the verdict on a pair that must be accepted: a refusal fails
// the test, and so does ‖a − b‖ > bound.
func within(t *testing.T, what string, a, b []float64, errA, errB error, bound float64) {
	t.Helper()
	if errA != nil || errB != nil {
		t.Fatalf("%s refused: %v / %v", what, errA, errB)
	}
	checkWithin(t, what, a, b, bound)
}

// withinOrRefused is the verdict on one neighbouring pair, the releases a
// on G and b on G′: a refusal of either construction is logged (refusing
// is allowed); an accepted pair fails the test unless ‖a − b‖ ≤ bound.
func withinOrRefused(t *testing.T, what string, a, b []float64, errA, errB error, bound float64) {
	t.Helper()
	if errA != nil || errB != nil {
		t.Logf("%s refused: %v / %v", what, errA, errB)
		return
	}
	checkWithin(t, what, a, b, bound)
}

// wantRefusal asserts that both constructions were refused with a message
// containing refusal.
func wantRefusal(t *testing.T, refusal string, errA, errB error) {
	t.Helper()
	for _, err := range []error{errA, errB} {
		if err == nil || !strings.Contains(err.Error(), refusal) {
			t.Errorf("got %v, want the refusal %q", err, refusal)
		}
	}
}

// refusedWithOrWithin is the verdict on a pair where a refusal must carry
// the message refusal (on both constructions); an accepted pair must stay
// within bound.
func refusedWithOrWithin(t *testing.T, what, refusal string, a, b []float64, errA, errB error, bound float64) {
	t.Helper()
	if errA != nil || errB != nil {
		wantRefusal(t, refusal, errA, errB)
		return
	}
	checkWithin(t, what, a, b, bound)
}

// searchWorst runs 64 deterministic trials of a pattern search: pair(trial)
// builds G and G′ for that trial's data and returns their releases. A
// refusal of either must carry the message refusal and ends the search
// (ok false: the claim holds, the test stops). Otherwise it returns the
// first trial with the largest ‖Δ clipped sum‖ and its two releases.
func searchWorst(t *testing.T, refusal string, pair func(trial int) (a, b []float64, errA, errB error)) (worst int, a, b []float64, ok bool) {
	t.Helper()
	bestD := 0.0
	for trial := 0; trial < 64; trial++ {
		ta, tb, errA, errB := pair(trial)
		if errA != nil || errB != nil {
			// refused (the construction is not accepted): the claim holds
			for _, err := range []error{errA, errB} {
				if err == nil || !strings.Contains(err.Error(), refusal) {
					t.Errorf("got %v, want the refusal", err)
				}
			}
			return 0, nil, nil, false
		}
		if d := dist(ta, tb); d > bestD {
			worst, bestD, a, b = trial, d, ta, tb
		}
	}
	return worst, a, b, true
}
