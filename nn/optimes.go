package nn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	G "gorgonia.org/gorgonia"
)

// Op timing: between StartOpTimes and StopOpTimes every machine times each
// step it runs — an op, or a chain of row-wise ops run a block of rows at
// a time — and adds the wall time to a table keyed by the op's label and
// output shape, so that a run's time can be read op by op (where a CPU
// profile names kernels shared by many ops). The steps of paths that run
// at the same time (a Frozen monitoring path beside training) overlap:
// the totals may add up to more than the wall time. Off, a machine reads
// one atomic flag per run. The table is not a release: times and some
// shapes (rows selected through a private graph) depend on private data.

// OpTime is one row of the table: an op (or a chain, "chain first … last"
// with its number of ops) and its output shape, how often it ran and for
// how long in all.
type OpTime struct {
	Op    string
	Calls int
	Total time.Duration
}

var (
	opTiming atomic.Bool
	opMu     sync.Mutex
	opTable  map[string]*OpTime
)

// StartOpTimes clears the table and starts timing every machine's steps.
func StartOpTimes() {
	opMu.Lock()
	opTable = map[string]*OpTime{}
	opMu.Unlock()
	opTiming.Store(true)
}

// StopOpTimes stops timing and returns the table, longest total first.
func StopOpTimes() []OpTime {
	opTiming.Store(false)
	opMu.Lock()
	defer opMu.Unlock()
	out := make([]OpTime, 0, len(opTable))
	for _, t := range opTable {
		out = append(out, *t)
	}
	opTable = nil
	slices.SortFunc(out, func(a, b OpTime) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), strings.Compare(a.Op, b.Op))
	})
	return out
}

// addOpTime adds one run of the step named key, begun at t0.
func addOpTime(key string, t0 time.Time) {
	d := time.Since(t0)
	opMu.Lock()
	defer opMu.Unlock()
	if opTable == nil { // stopped while the step ran
		return
	}
	t := opTable[key]
	if t == nil {
		t = &OpTime{Op: key}
		opTable[key] = t
	}
	t.Calls++
	t.Total += d
}

// stepKey names step i for the table (built once per step, when timing).
func (mc *machine) stepKey(i int) string {
	if mc.keys == nil {
		mc.keys = make([]string, len(mc.steps))
	}
	if mc.keys[i] == "" {
		if k := mc.segAt[i]; k > 0 {
			seg := &mc.segs[k-1]
			ops := 0
			for j := i; j <= seg.end; j++ {
				if mc.steps[j].kind != leaf {
					ops++
				}
			}
			mc.keys[i] = fmt.Sprintf("chain %s … %s (%d ops)%s", nodeOp(mc.steps[i].node), nodeOp(mc.steps[seg.end].node),
				ops, shapeLabel(mc.steps[seg.end].node))
		} else {
			mc.keys[i] = nodeOp(mc.steps[i].node) + shapeLabel(mc.steps[i].node)
		}
	}
	return mc.keys[i]
}

// nodeOp is n's op as graph views label it (gorgonia's "⊙ false" as ⊙).
func nodeOp(n *G.Node) string {
	if n.Op() == nil {
		return n.Name()
	}
	return opLabel(n.Op().String())
}

// shapeLabel is " 2003×16" for n's shape, "" for a scalar.
func shapeLabel(n *G.Node) string {
	s := n.Shape()
	if len(s) == 0 {
		return ""
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return " " + strings.Join(parts, "×")
}
