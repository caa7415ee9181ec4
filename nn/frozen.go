package nn

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Frozen evaluates a forward path of a model on a frozen copy of its
// parameters and running statistics, on another goroutine, so that a
// training loop can monitor epoch e while epoch e+1 trains (the second
// core does the monitoring). Start copies the model as it is (a State) and
// starts the run; Wait returns when the outputs hold its result. The
// result equals that of evaluating the model, in evaluation mode, at the
// moment Start was called: the path reads only the copy.
//
// The path must be built with NewFrozen, which gives each BatchNorm layer
// on it an evaluation-only twin that reads the copied running statistics
// (the model's own op switches mode and updates its statistics while the
// next epoch trains). Dropout on the path must be off the training path
// (built after the training path, before Compile), where it is the identity
// in every mode.
//
// Two copies alternate, so that one can be kept (Keep: the best epoch so
// far, restored at the end with Model.Restore) while the other takes the
// next Start.
type Frozen struct {
	m      *Model
	vm     *machine
	leaf   []int // per parameter: its leaf's step in vm, −1 if the path does not read it
	twins  []frozenStats
	states [2]*State
	bound  [2][]G.Value // per copy, a tensor over each parameter's copy
	cur    int          // the copy of the last Start
	kept   int          // the copy Keep returned (−1: none)
	done   chan error
	busy   bool
}

// frozenStats is a BatchNorm twin on a frozen path and the index of its
// original among the model's stateful parts (State.stats).
type frozenStats struct {
	op *standardizeOp
	k  int
}

// NewFrozen builds a path with build (its BatchNorm layers get twins) and
// compiles a forward-only machine for the outputs build returns.
func (m *Model) NewFrozen(build func() ([]*G.Node, error)) (*Frozen, []*G.Node, error) {
	f := &Frozen{m: m, kept: -1, done: make(chan error, 1)}
	var outs []*G.Node
	err := Build(func() error {
		m.frozen = map[*standardizeOp]*standardizeOp{}
		defer func() { m.frozen = nil }()
		var err error
		if outs, err = build(); err != nil {
			return err
		}
		if len(outs) == 0 {
			return errors.New("nn: a frozen path needs outputs")
		}
		k := 0
		for _, x := range m.modal {
			if _, ok := x.(stateful); !ok {
				continue
			}
			if op, ok := x.(*standardizeOp); ok && m.frozen[op] != nil {
				f.twins = append(f.twins, frozenStats{op: m.frozen[op], k: k})
			}
			k++
		}
		if f.vm, err = newMachine(m.G.SubgraphRoots(outs...), outs); err != nil {
			return err
		}
		m.frozenVMs = append(m.frozenVMs, f.vm)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	pos := make(map[*G.Node]int, len(f.vm.nodes))
	for i, n := range f.vm.nodes {
		pos[n] = i
	}
	f.vm.bind = make([]G.Value, len(f.vm.steps))
	for _, p := range m.Params {
		i, ok := pos[p.Node]
		if !ok {
			i = -1
		}
		f.leaf = append(f.leaf, i)
	}
	return f, outs, nil
}

// twin returns the evaluation-only copy of a BatchNorm op for a frozen
// path being built (nil outside NewFrozen).
func (m *Model) twin(op *standardizeOp) *standardizeOp {
	if m.frozen == nil {
		return nil
	}
	t := m.frozen[op]
	if t == nil {
		t = newStandardize(op.axis, op.eps, op.momentum)
		t.training = false
		m.frozen[op] = t
	}
	return t
}

// Start copies the parameters and running statistics into a copy that is
// not kept and starts evaluating the path on it. Every Start must be
// followed by Wait before the next.
func (f *Frozen) Start() {
	if f.busy {
		panic("nn: Frozen.Start while a run is in progress")
	}
	k := 0
	if f.kept == 0 {
		k = 1
	}
	s := f.m.SnapshotInto(f.states[k])
	f.states[k] = s
	if f.bound[k] == nil {
		f.bound[k] = make([]G.Value, len(f.m.Params))
	}
	for i, p := range f.m.Params {
		if f.leaf[i] < 0 {
			continue
		}
		t, _ := f.bound[k][i].(*tensor.Dense)
		if t == nil || &t.Data().([]float64)[0] != &s.Params[i][0] {
			t = tensor.New(tensor.WithShape(p.Node.Shape().Clone()...), tensor.WithBacking(s.Params[i]))
			f.bound[k][i] = t
		}
		f.vm.bind[f.leaf[i]] = t
	}
	for _, t := range f.twins {
		st := s.stats[t.k]
		t.op.runMean, t.op.runVar, t.op.statsObserved = st[0], st[1], st[0] != nil
	}
	f.cur, f.busy = k, true
	go func() { f.done <- f.vm.Run() }()
}

// Wait waits for the run Start began; the outputs then hold its result.
func (f *Frozen) Wait() error {
	if !f.busy {
		return errors.New("nn: Frozen.Wait without Start")
	}
	err := <-f.done
	f.busy = false
	if err != nil {
		return fmt.Errorf("nn: frozen evaluation: %w", err)
	}
	return nil
}

// Release drops the buffers of the path's machine but its outputs' (which
// keep their values) and returns their size in bytes: a path that will
// not run again, such as a monitoring path once training ends, stops
// holding them (after the next garbage collection). A later Start
// allocates them anew.
func (f *Frozen) Release() int {
	if f.busy {
		panic("nn: Frozen.Release while a run is in progress")
	}
	return f.vm.release()
}

// Keep returns the copy the last run evaluated, for Model.Restore; Start
// does not overwrite it until another copy is kept.
func (f *Frozen) Keep() *State {
	f.kept = f.cur
	return f.states[f.cur]
}
