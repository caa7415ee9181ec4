package dpnn

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/nn"
)

// TestPooledLayout: pooled examples over a universe with an absent id and
// a present example without rows. The layout puts each example's rows
// contiguously, tags them, and builds the pool (output row k = batch
// example k, its rows' weights; a present example without rows an empty
// output row, padding output rows empty); chunks hold at most the pool's
// output rows; an absent id with rows, weights of the wrong length and
// more examples than output rows are refused.
func TestPooledLayout(t *testing.T) {
	start := []int{0, 2, 2, 3, 3}
	x, err := PooledExamples(4, start, []float64{0.5, 0.25, 1}, []bool{true, true, true, false}, 1, 1, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !x.absent(3) || x.absent(1) {
		t.Fatal("absent ids: want only 3")
	}
	var b Batch
	groups := &nn.RowGroups{Of: make([]int, 4)}
	if err := x.layout([]int{0, 1, 2}, 4, 4, &b, groups); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(groups.Of, []int{0, 0, 2, -1}) || groups.Samples != 3 || !slices.Equal(b.Rows, []int{0, 1, 2}) {
		t.Fatalf("groups %v (%d samples), rows %v", groups.Of, groups.Samples, b.Rows)
	}
	p := b.Pool
	if p == nil || p.Rows != 4 || p.Cols != 4 || !slices.Equal(p.Indptr, []int{0, 2, 2, 3, 3}) || !slices.Equal(p.Indices, []int{0, 1, 2}) || !slices.Equal(p.Data, []float64{0.5, 0.25, 1}) {
		t.Fatalf("pool %+v", p)
	}
	if err := nn.CheckPools([]nn.Mixing{{Op: "pool", S: nn.NewSparse("pool", p)}}, groups, nil); err != nil {
		t.Fatalf("the framework's own pool refused: %v", err)
	}
	chunks, err := x.chunks([]int{0, 1, 2}, 4, 2, nil)
	if err != nil || len(chunks) != 2 || !slices.Equal(chunks[0], []int{0, 1}) || !slices.Equal(chunks[1], []int{2}) {
		t.Fatalf("chunks of at most 2 examples: %v, %v", chunks, err)
	}
	if err := x.layout([]int{0, 1, 2}, 4, 2, &b, groups); err == nil {
		t.Fatal("3 examples laid out into 2 output rows")
	}
	for _, bad := range []struct {
		name    string
		start   []int
		weights []float64
		present []bool
	}{
		{"absent id with rows", []int{0, 2, 2, 3, 3}, []float64{1, 1, 1}, []bool{true, true, false, true}},
		{"weights short", []int{0, 2, 2, 3, 3}, []float64{1, 1}, nil},
		{"presence flags short", []int{0, 2, 2, 3, 3}, []float64{1, 1, 1}, []bool{true}},
	} {
		if _, err := PooledExamples(4, bad.start, bad.weights, bad.present, 1, 1, "test"); err == nil {
			t.Errorf("%s: accepted", bad.name)
		}
	}
}

// TestGeneratedTags: generated examples hand the fill a tag vector of −1;
// the tags it sets become the row groups when each is a batch example of
// the chunk (or −1) and no example exceeds its declared rows; otherwise
// the chunk is refused naming the row or the example. Chunks hold
// capacity/Generated examples.
func TestGeneratedTags(t *testing.T) {
	x, err := GeneratedExamples(10, 2, 1, 2, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GeneratedExamples(10, 0, 1, 2, "test"); err == nil {
		t.Fatal("generated examples of 0 rows accepted")
	}
	chunks, err := x.chunks([]int{7, 3, 5}, 5, 0, nil)
	if err != nil || len(chunks) != 2 || len(chunks[0]) != 2 {
		t.Fatalf("chunks of 5/2 = 2 examples: %v, %v", chunks, err)
	}
	for _, tc := range []struct {
		name string
		tags []int
		want string // "" accepted
	}{
		{"each example within its rows", []int{0, 1, 1, 0, -1, -1}, ""},
		{"tag beyond the chunk", []int{0, 2, -1, -1, -1, -1}, "tagged batch row 1 with example 2"},
		{"example 0 over its rows", []int{0, 0, 0, 1, -1, -1}, "example 7 more than its declared 2 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Batch
			groups := &nn.RowGroups{Of: make([]int, 6)}
			if err := x.layout([]int{7, 3}, 6, 0, &b, groups); err != nil {
				t.Fatal(err)
			}
			if b.Tags == nil || slices.ContainsFunc(b.Tags.Of, func(v int) bool { return v != -1 }) || b.Tags.Samples != 2 {
				t.Fatalf("tags handed to the fill: %+v", b.Tags)
			}
			copy(b.Tags.Of, tc.tags)
			err := x.tagged(&b, groups)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && !slices.Equal(groups.Of, tc.tags):
				t.Fatalf("groups %v, want the tags %v", groups.Of, tc.tags)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPrivateConfigShapes: fixed-size batches give HypergeomGaussian's step
// and plan events and a fixed step count; a given rate and group-pair split
// reach the Occurrences step; conflicting settings are refused.
func TestPrivateConfigShapes(t *testing.T) {
	fixed := PrivateConfig{N: 100, R: 3, Change: 2, BatchSize: 10, WithoutReplacement: true, StepCount: 7, Clip: 1}
	if err := fixed.Validate(); err != nil {
		t.Fatal(err)
	}
	h := dp.HypergeomGaussian{Population: 100, Batch: 10, Occurrences: 3, Multiplier: 1.5, Change: 2, Steps: 7}
	step, _ := h.Step()
	all, _ := h.Event()
	if fixed.Steps() != 7 || fixed.StepEvent(1.5).String() != step.String() || fixed.Event(1.5).String() != all.String() || fixed.NoiseStd(1.5) != h.NoiseStd(1) {
		t.Fatalf("fixed: steps %d, step %v, event %v, std %v; want 7, %v, %v, %v", fixed.Steps(), fixed.StepEvent(1.5), fixed.Event(1.5), fixed.NoiseStd(1.5), step, all, h.NoiseStd(1))
	}
	pois := PrivateConfig{N: 1000, R: 3, Change: 2, SampleRate: 0.25, Epochs: 2, Clip: 1, Deleted: 3, Inserted: 2}
	want := dp.Occurrences{R: 3, Change: 2, Deleted: 3, Inserted: 2, Event: dp.Poisson{Rate: 0.25, Event: dp.GaussianEvent{Multiplier: 2, Count: 1}}}
	if err := pois.Validate(); err != nil || pois.Steps() != 8 || pois.StepEvent(2).String() != want.String() {
		t.Fatalf("given rate: %v, steps %d, step %v; want 8 steps of %v", err, pois.Steps(), pois.StepEvent(2), want)
	}
	for _, bad := range []PrivateConfig{
		{N: 100, R: 3, Change: 2, BatchSize: 10, WithoutReplacement: true, SampleRate: 0.1, StepCount: 7, Clip: 1},
		{N: 100, R: 3, Change: 2, BatchSize: 101, WithoutReplacement: true, StepCount: 7, Clip: 1},
		{N: 100, R: 3, Change: 2, BatchSize: 10, WithoutReplacement: true, Deleted: 3, StepCount: 7, Clip: 1},
		{N: 100, R: 3, Change: 2, SampleRate: 1.5, Epochs: 1, Clip: 1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
