package dpnn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// starExamples is n star-shaped examples (a root gathering its leaves and
// each leaf gathering the root), sizes cycling through 1…4 rows, over a
// row universe with f features per row and a label per root.
type starExamples struct {
	start  []int
	adj    *graphs.CSR
	x      []float64
	labels []int
	f, c   int
}

func newStarExamples(n, f, c int) *starExamples {
	rng := rand.New(rand.NewPCG(3, 4))
	s := &starExamples{start: []int{0}, f: f, c: c}
	var src, dst []int
	for e := 0; e < n; e++ {
		root, size := s.start[e], 1+e%4
		for l := 1; l < size; l++ {
			src, dst = append(src, root, root+l), append(dst, root+l, root)
		}
		s.start = append(s.start, root+size)
		s.labels = append(s.labels, rng.IntN(c))
	}
	rows := s.start[n]
	s.adj = graphs.FromCOO(rows, rows, src, dst, nil)
	s.x = make([]float64, rows*f)
	for i := range s.x {
		s.x[i] = rng.NormFloat64()
	}
	// the label is readable from the root's and its leaves' features
	for e := 0; e < n; e++ {
		for r := s.start[e]; r < s.start[e+1]; r++ {
			s.x[r*f+s.labels[e]] += 2
		}
	}
	return s
}

// sageModel is a SAGEConv(mean) + Linear model over a batch of capacity
// rows, trained with DP-SGD over the examples; fill loads a laid-out
// batch. tamper, when set, edits the batch adjacency before it is set.
type sageModel struct {
	m      *nn.Model
	sgd    *dpnn.SGD
	nb     *layers.Neighbours
	x      *G.Node
	xbuf   []float64
	ce     *nn.CrossEntropy
	s      *starExamples
	tamper func(b *dpnn.Batch) *graphs.CSR
	retag  bool
}

func newSageNet(t *testing.T, s *starExamples, ex *dpnn.Examples, capacity int, z float64, adj *graphs.CSR,
	private func(m *nn.Model, loss *G.Node) (*dpnn.SGD, error)) (*sageModel, error) {
	t.Helper()
	sm := &sageModel{m: nn.NewModel(7), s: s, xbuf: make([]float64, capacity*s.f)}
	if adj == nil {
		adj = &graphs.CSR{Rows: capacity, Cols: capacity, Indptr: make([]int, capacity+1)}
	}
	var err error
	if sm.nb, err = layers.NewNeighbours("batch", adj); err != nil {
		t.Fatal(err)
	}
	mustBuild(t, func() error {
		sm.x = sm.m.Input("X", sm.xbuf, capacity, s.f)
		sm.m.StartRecording()
		conv := layers.NewSAGEConv(sm.m, "sage", s.f, 8, layers.Mean, layers.SAGEOptions{})
		h, err := conv.Forward(sm.nb, sm.x)
		if err != nil {
			return err
		}
		out := layers.NewLinear(sm.m, "out", 8, s.c, true, layers.InitPyG).Forward(G.Must(G.Rectify(h)))
		sm.m.StopRecording()
		sm.ce, err = nn.NewCrossEntropy(sm.m, out, "loss")
		return err
	})
	if private != nil {
		sm.sgd, err = private(sm.m, sm.ce.PerRow)
		return sm, err
	}
	cfg := dpnn.SGDConfig{Clip: 1, Multiplier: z, Rate: 0.3, Samples: ex.N, Capacity: capacity, Examples: ex}
	sm.sgd, err = dpnn.BuildSGD(sm.m, sm.ce.PerRow, cfg, dp.NewSource(11), nil)
	return sm, err
}

// newSageModel is the model with DP-SGD built by BuildSGD at multiplier z.
func newSageModel(t *testing.T, s *starExamples, ex *dpnn.Examples, capacity int, z float64, adj *graphs.CSR) (*sageModel, error) {
	return newSageNet(t, s, ex, capacity, z, adj, nil)
}

func (sm *sageModel) fill(b *dpnn.Batch) error {
	clear(sm.xbuf)
	f := sm.s.f
	for r, u := range b.Rows {
		copy(sm.xbuf[r*f:(r+1)*f], sm.s.x[u*f:(u+1)*f])
	}
	labels := make([]int, len(sm.xbuf)/f)
	for k, e := range b.Examples {
		labels[b.First[k]] = sm.s.labels[e]
	}
	adj := b.Adj
	if sm.tamper != nil {
		adj = sm.tamper(b)
	}
	if sm.retag { // a fill function that re-tags rows: the framework's groups win
		for r := range sm.sgd.Groups.Of {
			sm.sgd.Groups.Of[r] = 0
		}
	}
	if err := nn.SetValue(sm.x, sm.xbuf); err != nil {
		return err
	}
	if err := sm.nb.Set(adj); err != nil {
		return err
	}
	return sm.ce.SetRows(b.First[:len(b.Examples)], labels)
}

// TestExamplesRefuseCrossingBlocks: the one-line changes — a
// neighbour row declared in example 0's block, an adjacency entry joining
// two examples of a batch, one-row examples over an adjacency — are refused
// with an error naming the op and the two examples; a fill function that
// re-tags rows changes nothing; the correct construction trains.
func TestExamplesRefuseCrossingBlocks(t *testing.T) {
	const n, f, c, capacity = 24, 5, 3, 60
	s := newStarExamples(n, f, c)

	t.Run("neighbour row declared in example 0", func(t *testing.T) {
		start := slices.Clone(s.start)
		start[1] = start[2] - 1 // example 1's last row moves to example 0's block
		_, err := dpnn.NewExamples(n, start, s.adj, 1, 2, "star")
		if err == nil || !strings.Contains(err.Error(), "example 0") || !strings.Contains(err.Error(), "example 1") {
			t.Fatalf("got %v, want a refusal naming examples 0 and 1", err)
		}
	})

	ex, err := dpnn.NewExamples(n, s.start, s.adj, 1, 2, "star")
	if err != nil {
		t.Fatal(err)
	}
	train := func(sm *sageModel, steps int) ([]float64, error) {
		var first, last float64
		for i := 0; i < steps; i++ {
			grads, st, err := sm.sgd.StepExamples(sm.fill)
			if err != nil {
				return nil, err
			}
			nn.NewAdam(0.05, 0).Step(sm.m.ParamValues(), grads)
			if i == 0 {
				first = st.Loss
			}
			last = st.Loss
		}
		return []float64{first, last}, nil
	}

	t.Run("adjacency joins two examples", func(t *testing.T) {
		sm, err := newSageModel(t, s, ex, capacity, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		sm.tamper = func(b *dpnn.Batch) *graphs.CSR {
			if len(b.Examples) < 2 {
				return b.Adj
			}
			src, dst := []int{b.First[0]}, []int{b.First[1]} // root of batch example 0 gathers root of 1
			for i := 0; i < b.Adj.Rows; i++ {
				for k := b.Adj.Indptr[i]; k < b.Adj.Indptr[i+1]; k++ {
					src, dst = append(src, i), append(dst, b.Adj.Indices[k])
				}
			}
			return graphs.FromCOO(b.Adj.Rows, b.Adj.Cols, src, dst, nil)
		}
		_, err = train(sm, 5)
		if err == nil || !strings.Contains(err.Error(), "SpMM") || !strings.Contains(err.Error(), "example") {
			t.Fatalf("got %v, want a refusal naming the SpMM and two examples", err)
		}
	})

	t.Run("one-row examples over an adjacency", func(t *testing.T) {
		one, err := dpnn.OneRow(capacity, 1, 1, "row")
		if err != nil {
			t.Fatal(err)
		}
		adj := graphs.FromCOO(capacity, capacity, []int{0, 1}, []int{1, 0}, nil)
		_, err = newSageModel(t, s, one, capacity, 0, adj)
		if err == nil || !strings.Contains(err.Error(), "row 0") || !strings.Contains(err.Error(), "row 1") {
			t.Fatalf("got %v, want a build-time refusal naming rows 0 and 1", err)
		}
	})

	t.Run("correct trains; re-tagging changes nothing", func(t *testing.T) {
		a, err := newSageModel(t, s, ex, capacity, 0.5, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := newSageModel(t, s, ex, capacity, 0.5, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.retag = true
		ga, _, err := a.sgd.StepExamples(a.fill)
		if err != nil {
			t.Fatal(err)
		}
		ra := [][]float64{}
		for _, g := range ga {
			ra = append(ra, slices.Clone(g))
		}
		gb, _, err := b.sgd.StepExamples(b.fill)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ra {
			if !slices.Equal(ra[i], gb[i]) {
				t.Fatalf("parameter %d: a fill that re-tags rows changed the release", i)
			}
		}
		c, err := newSageModel(t, s, ex, capacity, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := train(c, 60)
		if err != nil {
			t.Fatal(err)
		}
		if !(loss[1] < 0.7*loss[0]) {
			t.Fatalf("loss %.3f → %.3f: the correct construction does not train", loss[0], loss[1])
		}
	})
}

// TestPrivateNoiseAndLedger: dpnn.Private adds noise of std z·R·Change·C
// to the clipped sum (measured as the difference from the same step at
// z = 0, times the expected batch size) and records every noisy step in
// the ledger under its name with the step event Occurrences{R, Change,
// Poisson{q, Gaussian{z}}}; the plan's event composes exactly Steps of
// them.
func TestPrivateNoiseAndLedger(t *testing.T) {
	const n, f, c = 40, 5, 3
	s := newStarExamples(n, f, c)
	for _, tc := range []struct{ r, change int }{{1, 1}, {4, 2}, {7, 1}} {
		ex, err := dpnn.NewExamples(n, s.start, s.adj, tc.r, tc.change, "star")
		if err != nil {
			t.Fatal(err)
		}
		cfg := dpnn.ConfigFor(ex, 10, 2, 0.5)
		capacity := dpnn.RowCapacity(ex, cfg.Rate())
		const z = 0.8
		plan := &dp.Plan{Level: "node", Epsilon: math.Inf(1), Delta: 1e-5, Accountant: "rdp", Releases: []dp.Planned{cfg.Planned(z)}}
		release := func(z float64, ledger *dp.Ledger) []float64 {
			var rec *dp.Recorder
			if ledger != nil {
				var err error
				if rec, err = plan.Recorder(ledger, cfg.LedgerName(), cfg.StepEvent(z)); err != nil {
					t.Fatal(err)
				}
			}
			sm, err := newSageNet(t, s, ex, capacity, 0, nil, func(m *nn.Model, loss *G.Node) (*dpnn.SGD, error) {
				return dpnn.Private(m, loss, nil, ex, cfg, z, rec, dp.NewSource(21))
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := sm.sgd.ReleaseExamples(sm.fill)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		ledger := dp.NewLedger()
		clean, noisy := release(0, nil), release(z, ledger)
		ss := 0.0
		b := cfg.Rate() * float64(n)
		for i := range clean {
			d := (noisy[i] - clean[i]) * b
			ss += d * d
		}
		got, want := math.Sqrt(ss/float64(len(clean))), z*float64(tc.r*tc.change)*cfg.Clip
		if math.Abs(got/want-1) > 0.15 {
			t.Errorf("R=%d Change=%d: noise std %.4g, want z·R·Change·C = %.4g", tc.r, tc.change, got, want)
		}
		recs := ledger.Entries()
		if len(recs) != 1 || recs[0].Name != "dpsgd" {
			t.Fatalf("R=%d: ledger %+v, want one dpsgd step", tc.r, recs)
		}
		if want := cfg.StepEvent(z); fmt.Sprint(recs[0].Event) != fmt.Sprint(want) {
			t.Errorf("R=%d: recorded %v, want %v", tc.r, recs[0].Event, want)
		}
		if _, err := dpnn.Private(nn.NewModel(1), nil, nil, ex, cfg, z, nil, dp.NewSource(1)); err == nil {
			t.Errorf("R=%d: noise without a recorder was accepted", tc.r)
		}
		// A recorder of another release (here: the plan's at half the
		// noise) is refused before anything is built or drawn.
		half := &dp.Plan{Level: "node", Epsilon: math.Inf(1), Delta: 1e-5, Accountant: "rdp", Releases: []dp.Planned{cfg.Planned(z / 2)}}
		other, err := half.Recorder(dp.NewLedger(), cfg.LedgerName(), cfg.StepEvent(z/2))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dpnn.Private(nn.NewModel(1), nil, nil, ex, cfg, z, other, dp.NewSource(1)); err == nil || !strings.Contains(err.Error(), "recorder") {
			t.Errorf("R=%d: a recorder of half the noise was accepted (%v)", tc.r, err)
		}
		if _, err := plan.Recorder(dp.NewLedger(), "dpsgdd", cfg.StepEvent(z)); err == nil {
			t.Errorf("R=%d: a recorder of an undeclared name was built", tc.r)
		}
	}
}
