package trainers

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
)

// epochTask is a fake training task whose predictions at each epoch are
// given: preds[e] for epoch e+1.
type epochTask struct {
	preds [][]int
	epoch int
}

func (t *epochTask) TrainEpoch() (float64, error) { t.epoch++; return 1, nil }
func (t *epochTask) Predict() ([]int, error)      { return t.preds[t.epoch-1], nil }
func (t *epochTask) Snapshot(any) any             { return t.epoch }
func (t *epochTask) Restore(s any)                { t.epoch = s.(int) }

// selectionSetup: 11 validation nodes; epoch 1 classifies node 0 and five
// others correctly, epoch 2 the same five others but not node 0. With node 0
// in the validation set the counts are 6 and 5, without it 5 and 5.
func selectionSetup(withNode0 bool) (*epochTask, []int, graphs.Split) {
	labels := make([]int, 11)
	wrong0 := make([]int, 11)
	right := make([]int, 11)
	for i := 6; i < 11; i++ {
		right[i], wrong0[i] = 1, 1 // nodes 6..10 are wrong in both epochs
	}
	wrong0[0] = 1
	val := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if withNode0 {
		val = append([]int{0}, val...)
	}
	return &epochTask{preds: [][]int{right, wrong0}}, labels, graphs.Split{Val: val}
}

func selectOnce(t *testing.T, withNode0 bool, eps float64, src *dp.Source, l *dp.Ledger) int {
	t.Helper()
	task, labels, split := selectionSetup(withNode0)
	res, err := FullBatch(task, labels, split, LoopConfig{Epochs: 2, Select: Selection{Mode: SelectPrivate, Epsilon: eps, Src: src, Rec: selectionRecorder(t, l, eps)}})
	if err != nil {
		t.Fatal(err)
	}
	return res.BestEpoch
}

// TestPrivateSelectionNoise: the private selection is the exponential
// mechanism at the claimed ε: with counts 6 and 5, epoch 1 is kept with
// probability e^ε/(1+e^ε); with equal counts with probability ½. Every
// selection is recorded in the ledger.
func TestPrivateSelectionNoise(t *testing.T) {
	const trials = 4000
	for _, eps := range []float64{0.5, 2} {
		src := dp.NewSource(uint64(10 * eps))
		l := dp.NewLedger()
		for _, with := range []bool{true, false} {
			first := 0
			for i := 0; i < trials; i++ {
				if selectOnce(t, with, eps, src, l) == 1 {
					first++
				}
			}
			want := 0.5
			if with {
				want = math.Exp(eps) / (1 + math.Exp(eps))
			}
			got := float64(first) / trials
			if sd := math.Sqrt(want * (1 - want) / trials); math.Abs(got-want) > 4*sd {
				t.Errorf("ε=%g, node 0 in validation %v: epoch 1 kept %.4f of the time, want %.4f", eps, with, got, want)
			}
		}
		if n := len(l.Entries()); n != 2*trials {
			t.Errorf("ε=%g: %d selections recorded, want %d", eps, n, 2*trials)
		}
	}
}

// TestPrivateSelectionAudit audits the selection on the raw neighbouring
// inputs (validation set with and without node 0): the measured ε lower
// bound stays at or below the claimed ε (and comes close to this pair's
// exact loss, 0.62).
func TestPrivateSelectionAudit(t *testing.T) {
	const eps, trials = 1.0, 3000
	sampler := func(with bool) dp.AuditSampler {
		return func(i int, _ bool) ([]float64, error) {
			src := dp.NewSource(5).Split(fmt.Sprintf("%v %d", with, i))
			e := selectOnce(t, with, eps, src, dp.NewLedger())
			return []float64{float64(e)}, nil
		}
	}
	res, err := dp.AuditStream(sampler(true), sampler(false), trials, dp.AuditConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.EpsilonLB > eps {
		t.Fatalf("private selection at ε=%g: ε_lb %.3f", eps, res.EpsilonLB)
	}
	// This pair's exact privacy loss is ln(½ / (1/(1+e))) = 0.62 ≤ ε.
	t.Logf("ε_lb %.3f (exact loss of this pair 0.62, claim %g)", res.EpsilonLB, eps)
}

// TestPrivateSelectionWithoutValidation: a private selection runs and is
// recorded even when the validation set is empty (its only node removed):
// the epoch is then uniform, so the run with and without that node makes
// the same release.
func TestPrivateSelectionWithoutValidation(t *testing.T) {
	const trials = 4000
	src := dp.NewSource(21)
	l := dp.NewLedger()
	first := 0
	for range trials {
		task, labels, _ := selectionSetup(false)
		res, err := FullBatch(task, labels, graphs.Split{}, LoopConfig{Epochs: 2, Select: Selection{Mode: SelectPrivate, Epsilon: 1, Src: src, Rec: selectionRecorder(t, l, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		if res.BestEpoch == 1 {
			first++
		}
	}
	if n := len(l.Entries()); n != trials {
		t.Errorf("%d selections recorded for %d runs without validation nodes", n, trials)
	}
	if got, sd := float64(first)/trials, math.Sqrt(0.25/trials); math.Abs(got-0.5) > 4*sd {
		t.Errorf("epoch 1 kept %.4f of the time without validation nodes, want 0.5", got)
	}
}

// selectionRecorder is the recorder of a plan that declares private
// selections at eps under "selection", writing to l.
func selectionRecorder(t *testing.T, l *dp.Ledger, eps float64) *dp.Recorder {
	t.Helper()
	plan := &dp.Plan{Releases: []dp.Planned{{Name: "selection", Event: dp.PureEvent{Epsilon: eps, Count: 1}}}}
	r, err := plan.Recorder(l, "selection", dp.PureEvent{Epsilon: eps, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPrivateSelectionRefusesRecorder: a private selection without a
// recorder, or with the recorder of a selection at another ε, is refused
// before any epoch trains (nothing is drawn or recorded).
func TestPrivateSelectionRefusesRecorder(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  func(l *dp.Ledger) *dp.Recorder
	}{
		{"no recorder", func(*dp.Ledger) *dp.Recorder { return nil }},
		{"a recorder at twice the ε", func(l *dp.Ledger) *dp.Recorder { return selectionRecorder(t, l, 2) }},
	} {
		l := dp.NewLedger()
		task, labels, split := selectionSetup(true)
		_, err := FullBatch(task, labels, split, LoopConfig{Epochs: 2, Select: Selection{Mode: SelectPrivate, Epsilon: 1, Src: dp.NewSource(1), Rec: tc.rec(l)}})
		if err == nil || !strings.Contains(err.Error(), "recorder") {
			t.Errorf("%s: err = %v, want a refusal naming the recorder", tc.name, err)
		}
		if n := len(l.Entries()); n != 0 || task.epoch != 0 {
			t.Errorf("%s: %d releases recorded, %d epochs trained before the refusal", tc.name, n, task.epoch)
		}
	}
}
