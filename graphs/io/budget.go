package graphio

import (
	"fmt"
	"runtime"
	"runtime/metrics"

	"github.com/dpgnn/dpgnn/graphs"
)

// loadBudget is the memory budget of one load (one call of Load, LoadNPZ,
// LoadGeomGCN or LoadSigned, with every file the dataset has).
//
// Every allocation a loader makes whose size grows with its input is
// reserved before it is made, from sizes known at that point: the shapes in
// the .npy headers of an npz archive (before any array body is read, so an
// archive whose header declares 3·10⁹ float64 is refused after reading a
// few hundred bytes), and the line, byte and comma counts of a first pass
// over a text file (which allocates nothing that grows with the file). The
// loaders allocate exactly what they reserve, never more (no append growth,
// no whole-entry buffers): the sum of the reservations is an upper bound on
// the bytes the load allocates, which TestLoadAllocationsWithinBudget
// checks against the runtime's own count. The limit is MemoryLimit (what
// `--max-memory` or $DPGNN_MAX_MEMORY sets) minus the memory the process
// already holds when the load begins, so the process as a whole stays
// within the limit while it loads.
type loadBudget struct {
	limit    int64 // MemoryLimit()
	held     int64 // memory the Go runtime held when the load began
	reserved int64 // bytes reserved so far
}

// loadOverhead is reserved once per load for allocations that do not grow
// with the input: the zip and flate readers' state, the read buffers of
// the array decoder and of the line reader's first pass, file handles,
// error values.
const loadOverhead = 1 << 20

// newLoadBudget returns the budget of a load that begins now, with
// loadOverhead already reserved.
func newLoadBudget() (*loadBudget, error) {
	limit, err := graphs.MemoryLimit()
	if err != nil {
		return nil, err
	}
	// A collection first: what the process holds is then its live data
	// (garbage, which the load's allocations reuse, is freed), measured
	// now rather than at the last collection.
	runtime.GC()
	b := &loadBudget{limit: limit, held: processMemory()}
	if err := b.reserve(loadOverhead, "reading the files"); err != nil {
		return nil, err
	}
	return b, nil
}

// newBudgetLimit is a budget of limit bytes with nothing held (for tests
// and fuzz targets, which must not depend on the process's memory).
func newBudgetLimit(limit int64) *loadBudget { return &loadBudget{limit: limit} }

// reserve records that the load is about to allocate bytes (a float64, so
// that sizes from hostile headers cannot overflow) for what. It returns an
// error, and reserves nothing, when the process would then hold more than
// the limit; the message names what, its size and the limit.
func (b *loadBudget) reserve(bytes float64, what string) error {
	if bytes < 0 {
		bytes = 0
	}
	total := float64(b.held) + float64(b.reserved) + bytes
	if total > float64(b.limit) {
		if bytes <= float64(b.limit) {
			return fmt.Errorf("%s would take %s; with the %s in use before it, that is above the memory limit of %s (%s)",
				what, graphs.FormatBytes(bytes), graphs.FormatBytes(float64(b.held+b.reserved)), graphs.FormatBytes(float64(b.limit)), graphs.RaiseLimitHint)
		}
		return fmt.Errorf("%s would take %s, above the memory limit of %s (%s)",
			what, graphs.FormatBytes(bytes), graphs.FormatBytes(float64(b.limit)), graphs.RaiseLimitHint)
	}
	b.reserved += int64(bytes)
	return nil
}

// processMemory returns the memory, in bytes, the process holds and a
// load cannot reuse: the heap's live objects (as the last collection
// marked them) and the Go runtime's memory outside the heap (stacks, its
// own structures). Free heap memory the runtime keeps, and garbage not yet
// collected, are not counted: the load's allocations reuse them.
func processMemory() int64 {
	names := []string{
		"/memory/classes/total:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes",
		"/memory/classes/heap/released:bytes",
		"/gc/heap/live:bytes",
	}
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	v := make([]int64, len(s))
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	other := v[0] - v[1] - v[2] - v[3] - v[4]
	return max(other, 0) + v[5]
}

// checkDenseFeatures applies the memory limit to n×f features stored as a
// dense float64 matrix (what training builds from sparse features too).
func checkDenseFeatures(n, f int) error {
	return graphs.CheckMemory(fmt.Sprintf("%d nodes × %d features as a dense float64 matrix", n, f),
		8*float64(n)*float64(f))
}

// checkClassCount checks a label array's class count c = largest class id
// + 1 against the node count n: a class id ≥ n cannot be right (a labelled
// dataset has at most one class per node), and one n×c float64 matrix
// (logits, one-hot labels) must fit the memory limit. where names the
// node that carries the largest class id (e.g. "node 17" or "line 18").
func checkClassCount(c, n int, where string) error {
	if c > n {
		return fmt.Errorf("class id %d (%s) but only %d nodes: a labelled dataset has at most as many classes as nodes", c-1, where, n)
	}
	return graphs.CheckMemory(fmt.Sprintf("%d classes (largest class id %d, %s): one %d×%d float64 matrix of logits", c, c-1, where, n, c),
		8*float64(n)*float64(c))
}
