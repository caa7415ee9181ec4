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
// calling goroutine and one helper goroutine per further CPU, so a call
// starts GOMAXPROCS−1 goroutines, not one per chunk.
func Rows(n, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p <= 1 || work < minWork || n < 2*p {
		f(0, n)
		return
	}
	chunks(n, (n+4*p-1)/(4*p), p, f)
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

// chunks runs f over [0, n) in chunks of step indices, taken in turn by
// the calling goroutine and up to p−1 helpers.
func chunks(n, step, p int, f func(lo, hi int)) {
	count := (n + step - 1) / step
	p = min(p, count)
	var next atomic.Int64
	take := func() {
		for {
			c := int(next.Add(1)) - 1
			if c >= count {
				return
			}
			f(c*step, min((c+1)*step, n))
		}
	}
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for range p - 1 {
		go func() {
			defer wg.Done()
			take()
		}()
	}
	take()
	wg.Wait()
}
