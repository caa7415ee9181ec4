package trainers

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Task is a model the full-batch loop can train: one optimisation epoch at
// a time, predictions for every node in evaluation mode, and snapshots for
// best-validation restore.
type Task interface {
	TrainEpoch() (loss float64, err error)
	Predict() ([]int, error)
	Snapshot() any
	Restore(any)
}

// Monitor is implemented by a task that can predict just the nodes the
// loop looks at after every epoch (validation and training nodes) more
// cheaply than all of them. MonitorPredict returns a prediction for every
// node, −1 for the ones it did not evaluate; on the nodes it did evaluate it
// must agree with Predict. The final prediction always comes from Predict.
type Monitor interface {
	MonitorPredict() ([]int, error)
}

// MonitorFunc, when set on ModelTask or SGDTask, makes it a Monitor.
type MonitorFunc func() ([]int, error)

// or calls w, or predict when w is nil.
func (w MonitorFunc) or(predict func() ([]int, error)) ([]int, error) {
	if w == nil {
		return predict()
	}
	return w()
}

// LoopConfig configures FullBatch.
type LoopConfig struct {
	Epochs   int
	Run      int // reported to the recorder
	Stage    int // reported to the recorder
	Recorder Recorder
}

// LoopResult is the outcome of FullBatch after restoring the best epoch.
type LoopResult struct {
	BestEpoch int     // 1-based; the last epoch when there is no validation set
	ValAcc    float64 // at the best epoch (NaN without validation set)
	Pred      []int   // predictions of the restored model for all nodes
	LastLoss  float64
}

// FullBatch trains task for cfg.Epochs epochs, evaluates validation accuracy
// after each, and restores the parameters of the first epoch with the best
// validation accuracy (the papers' "early stopping": train all epochs, then
// restore the best). Without a validation set the last epoch is kept.
func FullBatch(task Task, labels []int, split graphs.Split, cfg LoopConfig) (LoopResult, error) {
	if cfg.Epochs <= 0 {
		return LoopResult{}, fmt.Errorf("trainers: epochs must be positive, got %d", cfg.Epochs)
	}
	rec := cfg.Recorder
	if rec == nil {
		rec = Nop{}
	}
	res := LoopResult{ValAcc: math.NaN()}
	var best any
	for ep := 1; ep <= cfg.Epochs; ep++ {
		loss, err := task.TrainEpoch()
		if err != nil {
			return res, err
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return res, fmt.Errorf("trainers: loss became %v at epoch %d (learning rate too high?)", loss, ep)
		}
		res.LastLoss = loss
		st := EpochStats{Kind: "epoch", Run: cfg.Run, Stage: cfg.Stage, Epoch: ep, Loss: loss}
		if len(split.Val) > 0 {
			predict := task.Predict
			if m, ok := task.(Monitor); ok {
				predict = m.MonitorPredict
			}
			pred, err := predict()
			if err != nil {
				return res, err
			}
			acc := Accuracy(pred, labels, split.Val)
			st.ValAcc = acc
			st.TrainAcc = Accuracy(pred, labels, split.Train)
			if best == nil || acc > res.ValAcc {
				res.ValAcc, res.BestEpoch, best = acc, ep, task.Snapshot()
			}
		}
		rec.Epoch(st)
	}
	if best != nil {
		task.Restore(best)
	} else {
		res.BestEpoch = cfg.Epochs
	}
	pred, err := task.Predict()
	if err != nil {
		return res, err
	}
	res.Pred = pred
	return res, nil
}

// ModelTask adapts a compiled nn.Model with a cross-entropy loss and a
// logits output to Task: each epoch is one full-batch optimiser step.
type ModelTask struct {
	Model  *nn.Model
	Logits *G.Node // (N, C) evaluated over every node
	Opt    nn.Optimizer
	// Watch, if set, predicts the monitored nodes after each epoch.
	Watch MonitorFunc
	// Extra state saved with the parameters (e.g. BatchNorm running
	// statistics are saved by the model itself).
}

// TrainEpoch runs one training step and applies the optimiser.
func (t *ModelTask) TrainEpoch() (float64, error) {
	loss, err := t.Model.Step()
	if err != nil {
		return 0, err
	}
	grads, err := t.Model.Grads()
	if err != nil {
		return 0, err
	}
	t.Opt.Step(t.Model.ParamValues(), grads)
	return loss, nil
}

// Predict evaluates the logits and returns the argmax of each row.
func (t *ModelTask) Predict() ([]int, error) {
	if err := t.Model.Evaluate(); err != nil {
		return nil, err
	}
	s := t.Logits.Shape()
	if len(s) != 2 {
		return nil, errors.New("trainers: logits are not a matrix")
	}
	return Argmax(nn.Values(t.Logits), s[0], s[1]), nil
}

// MonitorPredict predicts the monitored nodes (all of them without Watch).
func (t *ModelTask) MonitorPredict() ([]int, error) { return t.Watch.or(t.Predict) }

// Snapshot saves parameters and norm statistics.
func (t *ModelTask) Snapshot() any { return t.Model.Snapshot() }

// Restore loads a snapshot.
func (t *ModelTask) Restore(s any) { t.Model.Restore(s.(*nn.State)) }
