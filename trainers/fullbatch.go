package trainers

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
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
	// Snapshot saves the model; reuse is nil or an earlier snapshot the
	// caller no longer needs, whose buffers it may overwrite.
	Snapshot(reuse any) any
	Restore(any)
}

// Monitor is implemented by a task that can predict just the nodes the
// loop looks at after every epoch (the validation nodes, and the training
// nodes when the recorder keeps statistics: KeepsStats) more cheaply than
// all of them. MonitorPredict returns a prediction for every
// node, −1 for the ones it did not evaluate; on the nodes it did evaluate it
// must agree with Predict. The final prediction always comes from Predict;
// a MonitorPredict result may be overwritten by the next call.
type Monitor interface {
	MonitorPredict() ([]int, error)
}

// Pipe monitors a frozen copy of the model on another goroutine while the
// loop trains the next epoch. Start copies the model as it is and starts
// predicting the monitored nodes (as MonitorPredict would); Wait returns
// that prediction (valid until the next Start); Keep returns the copy Wait
// last evaluated as a snapshot for Restore, which later Starts do not
// overwrite until another copy is kept.
type Pipe interface {
	Start()
	Wait() ([]int, error)
	Keep() any
}

// Piped is implemented by a task that can monitor through a Pipe (nil:
// it cannot).
type Piped interface {
	MonitorPipe() Pipe
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
	// Select is how the epoch to keep is chosen (zero value: best
	// validation accuracy).
	Select Selection
}

// Selection modes of FullBatch.
const (
	// SelectBest keeps the first epoch with the best validation accuracy
	// (the papers' early stopping). It reads validation labels after every
	// epoch: free when labels are public (edge level, no privacy).
	SelectBest = "best"
	// SelectLast keeps the last epoch and reads no label during training.
	SelectLast = "last"
	// SelectPrivate keeps the epoch chosen by the exponential mechanism on
	// the number of correctly classified validation nodes (report noisy max
	// with Gumbel noise of scale 1/Epsilon): ε-DP for removing or adding one
	// node, because given the released checkpoints each count changes by at
	// most one and all in the same direction (a monotone utility of
	// sensitivity 1).
	SelectPrivate = "private"
)

// Selection says how FullBatch picks the epoch it keeps.
type Selection struct {
	Mode    string // SelectBest ("" too), SelectLast or SelectPrivate
	Epsilon float64
	// Src draws the Gumbel noise of SelectPrivate (the mechanism source).
	Src *dp.Source
	// Rec records each private selection, one ε-DP release
	// (dp.PureEvent{Epsilon, 1}): the recorder of the run's planned
	// selection (dp.Plan.Recorder), required by SelectPrivate, which
	// refuses one of another event before it trains.
	Rec *dp.Recorder
}

// LoopResult is the outcome of FullBatch after restoring the best epoch.
type LoopResult struct {
	BestEpoch int     // 1-based; the last epoch when there is no validation set
	ValAcc    float64 // at the best epoch (NaN without validation set)
	Pred      []int   // predictions of the restored model for all nodes
	LastLoss  float64
}

// FullBatch trains task for cfg.Epochs epochs and keeps the epoch cfg.Select
// chooses: by default it evaluates validation accuracy after each epoch and
// restores the parameters of the first epoch with the best validation
// accuracy (the papers' "early stopping": train all epochs, then restore the
// best); SelectLast keeps the last epoch without evaluating; SelectPrivate
// chooses privately (see SelectPrivate). Without a validation set the last
// epoch is kept, except under SelectPrivate, which then draws the epoch
// uniformly (every count is 0) and records its release as planned. The result's ValAcc is the validation accuracy of the kept
// model (an evaluation, not part of the choice, under SelectLast).
func FullBatch(task Task, labels []int, split graphs.Split, cfg LoopConfig) (LoopResult, error) {
	if cfg.Epochs <= 0 {
		return LoopResult{}, fmt.Errorf("trainers: epochs must be positive, got %d", cfg.Epochs)
	}
	rec := cfg.Recorder
	if rec == nil {
		rec = Nop{}
	}
	sel := cfg.Select
	switch sel.Mode {
	case "", SelectBest, SelectLast:
	case SelectPrivate:
		if !(sel.Epsilon > 0) || math.IsInf(sel.Epsilon, 1) || sel.Src == nil {
			return LoopResult{}, fmt.Errorf("trainers: private selection needs a finite ε > 0 and a noise source")
		}
		if ev := (dp.PureEvent{Epsilon: sel.Epsilon, Count: 1}); sel.Rec == nil || !dp.SameKind(sel.Rec.Event(), ev) {
			return LoopResult{}, fmt.Errorf("trainers: private selection releases %v but its recorder records %v", ev, sel.Rec.Event())
		}
	default:
		return LoopResult{}, fmt.Errorf("trainers: unknown selection %q", sel.Mode)
	}
	// A private selection runs (and is recorded) even without validation
	// nodes: every count is then 0 and the epoch uniform, and the run on a
	// split whose only validation node is removed makes the release its
	// plan declares, as the run with it does.
	if sel.Mode == SelectLast || (len(split.Val) == 0 && sel.Mode != SelectPrivate) {
		return lastEpoch(task, labels, split, cfg, rec)
	}
	if sel.Mode == SelectPrivate {
		sel.Rec.Record()
	}
	res := LoopResult{ValAcc: math.NaN()}
	keep := KeepsStats(rec)
	var best any
	bestNoisy := math.Inf(-1)
	// observe takes the monitoring prediction of epoch ep: the selection
	// and the epoch's record. snap saves the model of that epoch.
	observe := func(ep int, loss float64, pred []int, snap func(reuse any) any) {
		st := EpochStats{Kind: "epoch", Run: cfg.Run, Stage: cfg.Stage, Epoch: ep, Loss: loss}
		acc := Accuracy(pred, labels, split.Val)
		if sel.Mode == SelectPrivate {
			// Gumbel-max over epochs, drawn as they come: the law of the
			// exponential mechanism exp(ε·correct). Nothing about the
			// labels is reported per epoch.
			correct := 0.0
			if len(split.Val) > 0 {
				correct = acc * float64(len(split.Val))
			}
			noisy := correct + dp.Gumbel{Scale: 1 / sel.Epsilon}.Draw(sel.Src)
			if noisy > bestNoisy {
				bestNoisy, res.ValAcc, res.BestEpoch, best = noisy, acc, ep, snap(best)
			}
		} else {
			st.ValAcc = acc
			if keep {
				st.TrainAcc = Accuracy(pred, labels, split.Train)
			}
			if best == nil || acc > res.ValAcc {
				res.ValAcc, res.BestEpoch, best = acc, ep, snap(best)
			}
		}
		rec.Epoch(st)
	}
	// With a Pipe, epoch ep's monitoring runs on a frozen copy, which is
	// also the snapshot a best epoch keeps. Under the default selection,
	// which draws nothing, it runs while epoch ep+1 trains; the selection
	// sees the same predictions in the same order. A private selection
	// draws between epochs, so it takes each prediction before the next
	// epoch trains.
	var pipe Pipe
	if p, ok := task.(Piped); ok {
		pipe = p.MonitorPipe()
	}
	overlap := sel.Mode != SelectPrivate
	if pipe != nil {
		pending, pendingLoss := 0, 0.0 // the epoch whose monitoring runs
		defer func() {
			if pending > 0 {
				_, _ = pipe.Wait() // an error ended the loop: let the copy's run finish
			}
		}()
		keepCopy := func(any) any { return pipe.Keep() }
		take := func() error {
			pred, err := pipe.Wait()
			ep := pending
			pending = 0
			if err != nil {
				return err
			}
			observe(ep, pendingLoss, pred, keepCopy)
			return nil
		}
		for ep := 1; ep <= cfg.Epochs; ep++ {
			loss, err := trainEpoch(task, ep)
			if err != nil {
				return res, err
			}
			res.LastLoss = loss
			if pending > 0 {
				if err := take(); err != nil {
					return res, err
				}
			}
			pipe.Start()
			pending, pendingLoss = ep, loss
			if !overlap {
				if err := take(); err != nil {
					return res, err
				}
			}
		}
		if pending > 0 {
			if err := take(); err != nil {
				return res, err
			}
		}
	} else {
		predict := task.Predict
		if m, ok := task.(Monitor); ok {
			predict = m.MonitorPredict
		}
		for ep := 1; ep <= cfg.Epochs; ep++ {
			loss, err := trainEpoch(task, ep)
			if err != nil {
				return res, err
			}
			res.LastLoss = loss
			pred, err := predict()
			if err != nil {
				return res, err
			}
			observe(ep, loss, pred, task.Snapshot)
		}
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

// PublicCheck is implemented by a task whose training loss is private (DP-SGD's
// noiseless batch loss). The loop then never aborts on that loss: an abort
// on G where G − v trains (one node's features overflowing the loss) would
// itself release private data. It calls CheckPublic instead, which may
// fail only on public values (the parameters, a function of the noisy
// releases and the public initialisation).
type PublicCheck interface {
	CheckPublic() error
}

// trainEpoch runs epoch ep and checks its loss (PublicCheck: public values
// only).
func trainEpoch(task Task, ep int) (float64, error) {
	loss, err := task.TrainEpoch()
	if err != nil {
		return 0, err
	}
	if pc, ok := task.(PublicCheck); ok {
		if err := pc.CheckPublic(); err != nil {
			return 0, fmt.Errorf("trainers: epoch %d: %w", ep, err)
		}
		return loss, nil
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, fmt.Errorf("trainers: loss became %v at epoch %d (learning rate too high?)", loss, ep)
	}
	return loss, nil
}

// lastEpoch trains every epoch without evaluating and keeps the last one.
func lastEpoch(task Task, labels []int, split graphs.Split, cfg LoopConfig, rec Recorder) (LoopResult, error) {
	res := LoopResult{ValAcc: math.NaN(), BestEpoch: cfg.Epochs}
	for ep := 1; ep <= cfg.Epochs; ep++ {
		loss, err := trainEpoch(task, ep)
		if err != nil {
			return res, err
		}
		res.LastLoss = loss
		rec.Epoch(EpochStats{Kind: "epoch", Run: cfg.Run, Stage: cfg.Stage, Epoch: ep, Loss: loss})
	}
	pred, err := task.Predict()
	if err != nil {
		return res, err
	}
	res.Pred = pred
	if len(split.Val) > 0 {
		res.ValAcc = Accuracy(pred, labels, split.Val)
	}
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
	// Pipe, if set, does the same on a frozen copy while the next epoch
	// trains (FullBatch uses it instead of Watch).
	Pipe Pipe
	// Eval, if set, computes Logits instead of Model.Evaluate (a path of
	// its own, e.g. a frozen copy's).
	Eval func() error

	monitor []int // MonitorPredict's buffer
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
	eval := t.Model.Evaluate
	if t.Eval != nil {
		eval = t.Eval
	}
	if err := eval(); err != nil {
		return nil, err
	}
	s := t.Logits.Shape()
	if len(s) != 2 {
		return nil, errors.New("trainers: logits are not a matrix")
	}
	return Argmax(nn.Values(t.Logits), s[0], s[1]), nil
}

// MonitorPredict predicts the monitored nodes (all of them without Watch);
// the slice is reused by the next call.
func (t *ModelTask) MonitorPredict() ([]int, error) {
	return t.Watch.or(func() ([]int, error) {
		if err := t.Model.Evaluate(); err != nil {
			return nil, err
		}
		s := t.Logits.Shape()
		if len(s) != 2 {
			return nil, errors.New("trainers: logits are not a matrix")
		}
		t.monitor = ArgmaxInto(t.monitor, nn.Values(t.Logits), s[0], s[1])
		return t.monitor, nil
	})
}

// MonitorPipe returns Pipe.
func (t *ModelTask) MonitorPipe() Pipe { return t.Pipe }

// Snapshot saves parameters and norm statistics.
func (t *ModelTask) Snapshot(reuse any) any {
	s, _ := reuse.(*nn.State)
	return t.Model.SnapshotInto(s)
}

// Restore loads a snapshot.
func (t *ModelTask) Restore(s any) { t.Model.Restore(s.(*nn.State)) }
