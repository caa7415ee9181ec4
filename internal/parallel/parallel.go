// Package parallel splits row loops over the CPUs: the one place dpgnn's
// kernels (sparse products, row operations, noise, propagation) decide
// whether and how to run in parallel.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minWork is the work (about the number of scalar operations) below which
// a loop runs on the calling goroutine.
const minWork = 1 << 15

// Rows runs f over [0, n) split into contiguous chunks over the CPUs when
// work (about the number of scalar operations) is large enough to be worth
// the goroutines; f must write only what its own chunk owns. Each index is
// in exactly one chunk, so results do not depend on the number of CPUs
// when f's chunks are independent.
//
// The chunks (about four per CPU, for balance) are taken in turn by the
// calling goroutine and up to one helper per further CPU (see chunks).
func Rows(n, work int, f func(lo, hi int)) {
	if Serial(n, work) {
		f(0, n)
		return
	}
	p := runtime.GOMAXPROCS(0)
	chunks(n, (n+4*p-1)/(4*p), p, f)
}

// Serial reports whether Rows(n, work, f) runs f(0, n) on the calling
// goroutine: a caller may then run its loop directly, without building the
// closure (an allocation when f escapes).
func Serial(n, work int) bool {
	p := runtime.GOMAXPROCS(0)
	return p <= 1 || work < minWork || n < 2*p
}

// Parts is Rows with one contiguous part per CPU, each a multiple of
// align indices long (but the last), for loops in which every part reads
// the whole of a large operand: more parts would read it more often. The
// transposed product Aᵀ·B of a tall A is one (a part is some rows of the
// small result, and every part streams all of B: in chunks of four rows,
// a 10⁶×64 B was read eight times per product).
func Parts(n, align, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	align = max(align, 1)
	if p <= 1 || work < minWork || n < 2*align {
		f(0, n)
		return
	}
	step := ((n+p-1)/p + align - 1) / align * align
	chunks(n, step, p, f)
}

// Blocks runs f over [0, n) in blocks of block indices (the last may be
// shorter), taken in turn by the calling goroutine and the helpers when
// work is large enough: for a loop body that must see short ranges, such
// as a chain of row operations run a block of rows at a time so that the
// block stays in the cache from one operation to the next.
func Blocks(n, block, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	block = max(block, 1)
	if p <= 1 || work < minWork || n <= block {
		for lo := 0; lo < n; lo += block {
			f(lo, min(lo+block, n))
		}
		return
	}
	chunks(n, block, p, f)
}

// chunks runs f over [0, n) in chunks of step indices, taken in turn by
// the calling goroutine and up to p−1 helpers.
//
// The helpers are long-lived goroutines waiting for work: a call enlists
// the idle ones (a send that no idle helper takes fails at once) and
// starts a new one only while there are fewer than 2·(p−1), so that two
// concurrent callers (training and a frozen monitoring copy) each find
// one. A call whose helpers are all busy takes its chunks alone. The
// call's state comes from a pool: in steady state a call allocates
// nothing beyond f, where starting goroutines per call allocated four
// objects and a stack each time (a DP-SGD step makes a dozen calls).
func chunks(n, step, p int, f func(lo, hi int)) {
	count := (n + step - 1) / step
	p = min(p, count)
	j := jobs.Get().(*job)
	j.count, j.step, j.n, j.f = count, step, n, f
	j.next.Store(0)
	for range p - 1 {
		j.wg.Add(1)
		select {
		case help <- j:
			continue
		default:
		}
		if started.Add(1) <= int64(2*(p-1)) {
			go helper(j)
			continue
		}
		started.Add(-1)
		j.wg.Done()
		break
	}
	j.take()
	j.wg.Wait()
	j.f = nil
	jobs.Put(j)
}

// job is one call of chunks: its chunks go to whoever takes the next one.
type job struct {
	next           atomic.Int64
	count, step, n int
	f              func(lo, hi int)
	wg             sync.WaitGroup // the enlisted helpers
}

// take runs chunks until none is left.
func (j *job) take() {
	for {
		c := int(j.next.Add(1)) - 1
		if c >= j.count {
			return
		}
		j.f(c*j.step, min((c+1)*j.step, j.n))
	}
}

var (
	help    = make(chan *job) // unbuffered: a send succeeds only to an idle helper
	started atomic.Int64      // helpers started
	jobs    = sync.Pool{New: func() any { return new(job) }}
)

// helper takes the chunks of first, then of every job sent to it.
func helper(first *job) {
	for j := first; ; j = <-help {
		j.take()
		j.wg.Done()
	}
}
