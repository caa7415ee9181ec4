// Package parallel splits row loops over the CPUs: the one place dpgnn's
// kernels (sparse products, row operations, noise, propagation) decide
// whether and how to run in parallel.
package parallel

import (
	"runtime"
	"sync"
)

// minWork is the work (about the number of scalar operations) below which
// a loop runs on the calling goroutine.
const minWork = 1 << 15

// Rows runs f over [0, n) split into contiguous chunks over the CPUs when
// work (about the number of scalar operations) is large enough to be worth
// the goroutines; f must write only what its own chunk owns. Each index is
// in exactly one chunk, so results do not depend on the number of CPUs
// when f's chunks are independent.
func Rows(n, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p <= 1 || work < minWork || n < 2*p {
		f(0, n)
		return
	}
	chunks := min(4*p, n)
	var wg sync.WaitGroup
	step := (n + chunks - 1) / chunks
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}
