package trainers

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// SGDTask adapts a DP-SGD construction to Task: one epoch runs a fixed
// number of Poisson-sampled DP-SGD steps whose privatised gradients go to
// the optimiser (DP-Adam when Opt is Adam). The total number of steps over
// all epochs is exactly TotalSteps, the number the accountant was told.
type SGDTask struct {
	SGD    *dpnn.SGD
	Model  *nn.Model
	Logits *G.Node // evaluation logits over all nodes
	Opt    nn.Optimizer
	// Fill loads a chunk of sampled training samples into the batch inputs
	// (features, targets, row groups).
	Fill func(samples []int) error
	// FillBatch, for a construction over declared dpnn.Examples, loads a
	// chunk the framework laid out (SGD.StepExamples); Fill is then unused.
	FillBatch  func(b *dpnn.Batch) error
	TotalSteps int
	Epochs     int
	Recorder   Recorder
	Run, Stage int
	// Watch, if set, predicts the monitored nodes after each epoch.
	Watch MonitorFunc

	epoch, done int
}

// CheckPublic fails when a parameter is not finite (the updates overflowed:
// a learning rate too high). The parameters are a function of the noisy
// gradients and the public initialisation only, so the check releases
// nothing beyond them; the noiseless batch loss, which an overflowing
// example can make NaN on G and not on G − v, is not checked
// (trainers.PublicCheck).
func (t *SGDTask) CheckPublic() error {
	for i, p := range t.Model.ParamValues() {
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("parameter %s became %v after the noisy updates (learning rate too high?)", t.Model.Params[i].Name, v)
			}
		}
	}
	return nil
}

// TrainEpoch runs this epoch's share of the DP-SGD steps.
func (t *SGDTask) TrainEpoch() (float64, error) {
	if t.Epochs <= 0 || t.TotalSteps <= 0 {
		return 0, fmt.Errorf("trainers: DP-SGD task needs positive epochs and steps")
	}
	t.epoch++
	target := t.TotalSteps * t.epoch / t.Epochs // cumulative steps after this epoch
	if t.epoch >= t.Epochs {
		target = t.TotalSteps
	}
	rec := t.Recorder
	if rec == nil {
		rec = Nop{}
	}
	t.SGD.SkipNoiseNorm = !KeepsStats(rec)
	loss, n := 0.0, 0
	for ; t.done < target; t.done++ {
		// Between steps only the optimiser, the recorder and the loop's
		// monitoring run, none of which reads the noise source.
		t.SGD.Ahead = t.done+1 < t.TotalSteps
		var grads [][]float64
		var st dpnn.StepStats
		var err error
		if t.FillBatch != nil {
			grads, st, err = t.SGD.StepExamples(t.FillBatch)
		} else {
			grads, st, err = t.SGD.Step(t.Fill)
		}
		if err != nil {
			return 0, err
		}
		t.Opt.Step(t.Model.ParamValues(), grads)
		if st.BatchSize > 0 {
			loss += st.Loss
			n++
		}
		rec.Step(EpochStats{Kind: "step", Run: t.Run, Stage: t.Stage, Epoch: t.epoch, Step: t.done + 1,
			Loss: st.Loss, GradNorms: st.ParamNorms, ClippedFrac: st.ClippedFrac,
			NoiseNorm: st.NoiseNorm, BatchSize: st.BatchSize})
	}
	if n == 0 {
		return 0, nil
	}
	return loss / float64(n), nil
}

// Predict evaluates the logits over all nodes.
func (t *SGDTask) Predict() ([]int, error) {
	return (&ModelTask{Model: t.Model, Logits: t.Logits}).Predict()
}

// MonitorPredict predicts the monitored nodes (all of them without Watch).
func (t *SGDTask) MonitorPredict() ([]int, error) { return t.Watch.or(t.Predict) }

// Snapshot saves the parameters.
func (t *SGDTask) Snapshot(reuse any) any {
	s, _ := reuse.(*nn.State)
	return t.Model.SnapshotInto(s)
}

// Restore loads a snapshot.
func (t *SGDTask) Restore(s any) { t.Model.Restore(s.(*nn.State)) }
