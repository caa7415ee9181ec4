package trainers

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// lossTask is a Task whose epochs return the given losses; with public set
// it implements PublicCheck, returning check.
type lossTask struct {
	losses []float64
	ep     int
}

func (t *lossTask) TrainEpoch() (float64, error) { t.ep++; return t.losses[t.ep-1], nil }
func (t *lossTask) Predict() ([]int, error)      { return []int{0, 0}, nil }
func (t *lossTask) Snapshot(any) any             { return nil }
func (t *lossTask) Restore(any)                  {}

type publicTask struct {
	lossTask
	check error
}

func (t *publicTask) CheckPublic() error { return t.check }

// TestPublicCheck: a task whose loss is private (PublicCheck) is not
// aborted on a NaN or infinite loss, which one overflowing example makes
// on G and not on G − v (the old loop aborted: a refusal as a release); it
// is aborted when its public check fails. A task without PublicCheck still
// stops on a non-finite loss.
func TestPublicCheck(t *testing.T) {
	split := graphs.Split{Train: []int{0}, Test: []int{1}}
	nan := []float64{1, math.NaN(), math.Inf(1)}
	for _, tc := range []struct {
		name string
		task Task
		want string // part of the error; "" none
	}{
		{"private loss NaN", &publicTask{lossTask: lossTask{losses: nan}}, ""},
		{"public check fails", &publicTask{lossTask: lossTask{losses: []float64{1, 1, 1}}, check: errors.New("parameter W became NaN")}, "parameter W became NaN"},
		{"public loss NaN", &lossTask{losses: nan}, "loss became NaN"},
	} {
		_, err := FullBatch(tc.task, []int{0, 0}, split, LoopConfig{Epochs: 3, Select: Selection{Mode: SelectLast}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
