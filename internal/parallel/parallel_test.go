package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, in contiguous chunks, for small and
// large work on one and several CPUs.
func TestRowsCoversEachIndexOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 100, 10007} {
			for _, work := range []int{1, minWork, 1 << 20} {
				seen := make([]int32, n)
				var calls atomic.Int32
				Rows(n, work, func(lo, hi int) {
					calls.Add(1)
					if lo > hi || lo < 0 || hi > n {
						t.Errorf("procs %d n %d: chunk [%d, %d)", procs, n, lo, hi)
					}
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("procs %d n %d work %d: index %d visited %d times", procs, n, work, i, c)
					}
				}
				if (procs == 1 || work < minWork) && calls.Load() != 1 {
					t.Errorf("procs %d n %d work %d: %d chunks, want 1 (serial)", procs, n, work, calls.Load())
				}
			}
		}
	}
}
