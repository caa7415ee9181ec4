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

func TestPartsOnePerCPUAligned(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 32, 100, 10007} {
			for _, align := range []int{0, 1, 4} {
				seen := make([]int32, n)
				var calls atomic.Int32
				Parts(n, align, 1<<20, func(lo, hi int) {
					calls.Add(1)
					if lo > hi || lo < 0 || hi > n {
						t.Errorf("procs %d n %d: part [%d, %d)", procs, n, lo, hi)
					}
					if align > 1 && lo%align != 0 {
						t.Errorf("procs %d n %d align %d: part starts at %d", procs, n, align, lo)
					}
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("procs %d n %d align %d: index %d visited %d times", procs, n, align, i, c)
					}
				}
				if c := int(calls.Load()); c > procs {
					t.Errorf("procs %d n %d align %d: %d parts, want at most one per CPU", procs, n, align, c)
				}
				if procs > 1 && n >= 2*max(align, 1) && calls.Load() < 2 {
					t.Errorf("procs %d n %d align %d: %d part, want the CPUs shared", procs, n, align, calls.Load())
				}
			}
		}
	}
}
