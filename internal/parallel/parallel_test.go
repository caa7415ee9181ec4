package parallel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// visits runs split over [0, n) and checks that every index is visited
// exactly once, in chunks within [0, n) whose starts start accepts; it
// returns the number of chunks.
func visits(t *testing.T, what string, n int, split func(f func(lo, hi int)), start func(lo int) bool) int {
	t.Helper()
	seen := make([]int32, n)
	var calls atomic.Int32
	split(func(lo, hi int) {
		calls.Add(1)
		if lo > hi || lo < 0 || hi > n || !start(lo) {
			t.Errorf("%s: chunk [%d, %d)", what, lo, hi)
		}
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&seen[i], 1)
		}
	})
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("%s: index %d visited %d times", what, i, c)
		}
	}
	return int(calls.Load())
}

// Every index is visited exactly once, in contiguous chunks, for small and
// large work on one and several CPUs.
func TestRowsCoversEachIndexOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 100, 10007} {
			for _, work := range []int{1, minWork, 1 << 20} {
				what := fmt.Sprintf("procs %d n %d work %d", procs, n, work)
				calls := visits(t, what, n, func(f func(lo, hi int)) { Rows(n, work, f) }, func(int) bool { return true })
				if (procs == 1 || work < minWork) && calls != 1 {
					t.Errorf("%s: %d chunks, want 1 (serial)", what, calls)
				}
			}
		}
	}
}

// Parts visits every index once in at most one part per CPU, each part
// starting at a multiple of align, and shares the CPUs when there are two
// aligned parts' worth of indices.
func TestPartsOnePerCPUAligned(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 32, 100, 10007} {
			for _, align := range []int{0, 1, 4} {
				what := fmt.Sprintf("procs %d n %d align %d", procs, n, align)
				calls := visits(t, what, n, func(f func(lo, hi int)) { Parts(n, align, 1<<20, f) },
					func(lo int) bool { return align <= 1 || lo%align == 0 })
				if calls > procs {
					t.Errorf("%s: %d parts, want at most one per CPU", what, calls)
				}
				if procs > 1 && n >= 2*max(align, 1) && calls < 2 {
					t.Errorf("%s: %d part, want the CPUs shared", what, calls)
				}
			}
		}
	}
}

// Blocks visits every index once in blocks of exactly block indices (the
// last may be shorter), each starting at a multiple of block, on one and
// several CPUs, serially or not.
func TestBlocksFixedSize(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 100, 10007} {
			for _, block := range []int{0, 1, 16, 96} {
				for _, work := range []int{1, 1 << 20} {
					what := fmt.Sprintf("procs %d n %d block %d work %d", procs, n, block, work)
					b := max(block, 1)
					calls := visits(t, what, n, func(f func(lo, hi int)) {
						Blocks(n, block, work, func(lo, hi int) {
							if hi-lo != b && hi != n {
								t.Errorf("%s: block [%d, %d)", what, lo, hi)
							}
							f(lo, hi)
						})
					}, func(lo int) bool { return lo%b == 0 })
					if want := (n + b - 1) / b; calls != want {
						t.Errorf("%s: %d blocks, want %d", what, calls, want)
					}
				}
			}
		}
	}
}

// Calls from several goroutines at once, each also calling Rows from
// inside its chunks, visit every index of every call exactly once: the
// helpers a call enlists finish its chunks before the call returns, and a
// call whose helpers are all busy takes its chunks alone.
func TestConcurrentAndNestedCalls(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(3)
	const callers, n, inner = 6, 997, 64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 20 {
				seen := make([]int32, n*inner)
				Rows(n, 1<<20, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						Rows(inner, 1<<20, func(a, b int) {
							for j := a; j < b; j++ {
								atomic.AddInt32(&seen[i*inner+j], 1)
							}
						})
					}
				})
				for k, v := range seen {
					if v != 1 {
						t.Errorf("caller %d round %d: index %d visited %d times", c, round, k, v)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
