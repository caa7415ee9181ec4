package trainers

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dpgnn/dpgnn/dp"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

func TestAccuracyAndF1(t *testing.T) {
	pred := []int{0, 1, 2, 1, 0}
	lab := []int{0, 1, 1, 1, 2}
	if a := Accuracy(pred, lab, []int{0, 1, 2, 3, 4}); a != 0.6 {
		t.Fatalf("accuracy %v, want 0.6", a)
	}
	if f := MicroF1(pred, lab, []int{0, 1, 2, 3, 4}); math.Abs(f-0.6) > 1e-15 {
		t.Fatalf("micro-F1 %v, want 0.6 (= accuracy for single-label predictions)", f)
	}
	if !math.IsNaN(Accuracy(pred, lab, nil)) {
		t.Fatal("accuracy of an empty set should be NaN")
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{0.8, 0.82, 0.81}, 1)
	if math.Abs(s.Mean-0.81) > 1e-12 || math.Abs(s.Std-0.01) > 1e-12 {
		t.Fatalf("mean %v std %v", s.Mean, s.Std)
	}
	// The bootstrap half-width of a mean of 3 values lies within the range.
	if !(s.CI95 > 0 && s.CI95 <= 0.01+1e-12) {
		t.Fatalf("ci95 %v out of range", s.CI95)
	}
	if Summarize([]float64{0.8, 0.82, 0.81}, 1).CI95 != s.CI95 {
		t.Fatal("bootstrap not reproducible for a seed")
	}
	one := Summarize([]float64{0.5}, 1)
	if one.Std != 0 || one.CI95 != 0 {
		t.Fatalf("single value: %+v", one)
	}
	b, err := json.Marshal(Summarize([]float64{math.NaN()}, 1))
	if err != nil || !strings.Contains(string(b), "null") {
		t.Fatalf("NaN must marshal as null: %s %v", b, err)
	}
}

// fakeTask has a validation accuracy that peaks at epoch 3.
type fakeTask struct {
	epoch, restored int
}

func (f *fakeTask) TrainEpoch() (float64, error) { f.epoch++; return 1 / float64(f.epoch), nil }
func (f *fakeTask) Predict() ([]int, error) {
	e := f.epoch
	if f.restored > 0 {
		e = f.restored
	}
	// node 0 is correct only at epoch 3; node 1 always
	if e == 3 {
		return []int{1, 1}, nil
	}
	return []int{0, 1}, nil
}
func (f *fakeTask) Snapshot(any) any { return f.epoch }
func (f *fakeTask) Restore(s any)    { f.restored = s.(int) }

func TestFullBatchRestoresBestValidationEpoch(t *testing.T) {
	task := &fakeTask{}
	res, err := FullBatch(task, []int{1, 1}, splitOf([]int{1}, []int{0}), LoopConfig{Epochs: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.BestEpoch != 3 || task.restored != 3 || res.ValAcc != 1 || res.Pred[0] != 1 {
		t.Fatalf("best epoch %d, restored %d, val %v, pred %v", res.BestEpoch, task.restored, res.ValAcc, res.Pred)
	}
}

func splitOf(train, val []int) graphs.Split { return graphs.Split{Train: train, Val: val} }

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{3, 4}, []float64{1, 2}, 1},
		{[]float64{1, 2}, []float64{3, 4}, 0},
		{[]float64{1, 3}, []float64{2, 2}, 0.5},
		{[]float64{2}, []float64{2}, 0.5},
		{[]float64{2, 5}, []float64{1, 2, 6}, 3.5 / 6},
	} {
		if got := AUC(tc.pos, tc.neg); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("AUC(%v, %v) = %v, want %v", tc.pos, tc.neg, got, tc.want)
		}
	}
}

// pipedTask is fakeTask monitored through a Pipe: Start freezes the epoch,
// Wait predicts it, Keep returns it; log records the calls in order.
type pipedTask struct {
	fakeTask
	frozen, waiting int
	log             []string
	failTrain       int // TrainEpoch fails at this epoch (0: never)
}

func (p *pipedTask) TrainEpoch() (float64, error) {
	if p.epoch+1 == p.failTrain {
		return 0, errors.New("boom")
	}
	p.log = append(p.log, fmt.Sprintf("train%d", p.epoch+1))
	return p.fakeTask.TrainEpoch()
}
func (p *pipedTask) MonitorPipe() Pipe { return p }
func (p *pipedTask) Start() {
	if p.waiting != 0 {
		panic("Start before Wait")
	}
	p.frozen, p.waiting = p.epoch, p.epoch
	p.log = append(p.log, fmt.Sprintf("start%d", p.epoch))
}
func (p *pipedTask) Wait() ([]int, error) {
	if p.waiting == 0 {
		return nil, errors.New("Wait without Start")
	}
	p.log = append(p.log, fmt.Sprintf("wait%d", p.waiting))
	p.waiting = 0
	return (&fakeTask{epoch: p.frozen}).Predict()
}
func (p *pipedTask) Keep() any { return p.frozen }

// FullBatch with a Pipe trains epoch e+1 before it takes epoch e's
// prediction, selects and restores the same epoch as monitoring in turn,
// records the same epochs, and waits for a running copy when training
// fails.
func TestFullBatchPipelined(t *testing.T) {
	var inTurn, piped strings.Builder
	want, err := FullBatch(&fakeTask{}, []int{1, 1}, splitOf([]int{1}, []int{0}), LoopConfig{Epochs: 5, Recorder: NewTrace(&inTurn)})
	if err != nil {
		t.Fatal(err)
	}
	task := &pipedTask{}
	got, err := FullBatch(task, []int{1, 1}, splitOf([]int{1}, []int{0}), LoopConfig{Epochs: 5, Recorder: NewTrace(&piped)})
	if err != nil {
		t.Fatal(err)
	}
	if got.BestEpoch != want.BestEpoch || got.ValAcc != want.ValAcc || task.restored != 3 || !slices.Equal(got.Pred, want.Pred) {
		t.Fatalf("piped: best %d, val %v, restored %d; in turn: best %d, val %v", got.BestEpoch, got.ValAcc, task.restored, want.BestEpoch, want.ValAcc)
	}
	if inTurn.String() != piped.String() {
		t.Fatalf("records differ:\n%s\n%s", inTurn.String(), piped.String())
	}
	order := "train1 start1 train2 wait1 start2 train3 wait2 start3 train4 wait3 start4 train5 wait4 start5 wait5"
	if s := strings.Join(task.log, " "); s != order {
		t.Fatalf("order %q, want %q", s, order)
	}
	// A private selection draws between epochs: each copy is taken before
	// the next epoch trains, and the draws (same source seed) pick the same
	// epoch as monitoring in turn.
	private := func(task Task) LoopResult {
		sel := Selection{Mode: SelectPrivate, Epsilon: 1, Src: dp.NewSource(4), Rec: selectionRecorder(t, dp.NewLedger(), 1)}
		res, err := FullBatch(task, []int{1, 1}, splitOf([]int{1}, []int{0}), LoopConfig{Epochs: 3, Select: sel})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	task = &pipedTask{}
	if got, want := private(task), private(&fakeTask{}); got.BestEpoch != want.BestEpoch || !slices.Equal(got.Pred, want.Pred) {
		t.Fatalf("private, piped: best %d; in turn: %d", got.BestEpoch, want.BestEpoch)
	}
	if s, want := strings.Join(task.log, " "), "train1 start1 wait1 train2 start2 wait2 train3 start3 wait3"; s != want {
		t.Fatalf("private selection: order %q, want %q", s, want)
	}
	failing := &pipedTask{failTrain: 3}
	if _, err := FullBatch(failing, []int{1, 1}, splitOf([]int{1}, []int{0}), LoopConfig{Epochs: 5}); err == nil || failing.waiting != 0 {
		t.Fatalf("training error %v; copy still running: %v", err, failing.waiting != 0)
	}
}
