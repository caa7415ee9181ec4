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
	step := (n + 4*p - 1) / (4 * p)
	chunks := (n + step - 1) / step
	var next atomic.Int64
	take := func() {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
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
