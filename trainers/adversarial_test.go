package trainers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type stepLog struct{ steps, epochs []EpochStats }

func (l *stepLog) Plan(int)           {}
func (l *stepLog) Epoch(s EpochStats) { l.epochs = append(l.epochs, s) }
func (l *stepLog) Step(s EpochStats)  { l.steps = append(l.steps, s) }
func (l *stepLog) Done()              {}

// TestAdversarialOrder: each epoch runs the phases in order, each phase
// its discriminator steps and then its generator steps; the counts, the
// stages and the epoch losses are reported.
func TestAdversarialOrder(t *testing.T) {
	var trace []string
	step := func(name string, loss float64) PlayerStep {
		return func() (EpochStats, error) {
			trace = append(trace, name)
			return EpochStats{Loss: loss}, nil
		}
	}
	rec := &stepLog{}
	a := &Adversarial{Epochs: 2, Recorder: rec, Run: 3, Phases: []Phase{
		{Name: "+", Begin: func(e int) error { trace = append(trace, "begin+"); return nil }, Disc: step("D+", 1), Gen: step("G+", 9), DiscSteps: 2, GenSteps: 1},
		{Name: "-", Disc: step("D-", 4), Gen: step("G-", 9), DiscSteps: 1, GenSteps: 2},
	}}
	taken, err := a.Train()
	if err != nil {
		t.Fatal(err)
	}
	one := []string{"begin+", "D+", "D+", "G+", "D-", "G-", "G-"}
	if want := append(append([]string{}, one...), one...); !reflect.DeepEqual(trace, want) {
		t.Fatalf("order %v, want %v", trace, want)
	}
	if !reflect.DeepEqual(taken, []int{4, 2, 2, 4}) {
		t.Fatalf("steps taken %v", taken)
	}
	if len(rec.steps) != 12 || rec.steps[0].Stage != 1 || rec.steps[2].Stage != 2 || rec.steps[3].Stage != 3 || rec.steps[11].Step != 4 || rec.steps[11].Run != 3 {
		t.Fatalf("step records %+v", rec.steps)
	}
	if len(rec.epochs) != 2 || rec.epochs[1].Loss != 2 || rec.epochs[1].Epoch != 2 { // (1+1+4)/3
		t.Fatalf("epoch records %+v", rec.epochs)
	}
}

func TestAdversarialErrors(t *testing.T) {
	ok := func() (EpochStats, error) { return EpochStats{}, nil }
	boom := errors.New("boom")
	for _, tc := range []struct {
		a    Adversarial
		want string
	}{
		{Adversarial{Epochs: 0, Phases: []Phase{{Disc: ok, DiscSteps: 1}}}, "0 epochs"},
		{Adversarial{Epochs: 1}, "without phases"},
		{Adversarial{Epochs: 1, Phases: []Phase{{Name: "x", DiscSteps: 1}}}, "no step function"},
		{Adversarial{Epochs: 1, Phases: []Phase{{Name: "x", Gen: ok, GenSteps: -1}}}, "-1 generator"},
		{Adversarial{Epochs: 2, Phases: []Phase{{Name: "x", Disc: func() (EpochStats, error) { return EpochStats{}, boom }, DiscSteps: 1}}}, "phase x, discriminator step: boom"},
		{Adversarial{Epochs: 2, Phases: []Phase{{Name: "x", Disc: ok, DiscSteps: 1}}, EndEpoch: func(int) error { return boom }}, "boom"},
	} {
		if _, err := tc.a.Train(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
