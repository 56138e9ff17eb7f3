// Package workers runs independent jobs on a few goroutines: the disk, not
// the CPU, is what most of agentpack's loops wait for.
package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel runs fn(0..n-1) on a bounded pool.
func Parallel(n int, fn func(i int)) {
	workers := Count()
	if n < workers {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Count is how many goroutines Parallel uses: twice the usable CPUs, at
// least 2 (most jobs wait on the disk).
func Count() int {
	n := runtime.GOMAXPROCS(0) * 2
	if n < 2 {
		n = 2
	}
	return n
}

// Chunks runs fn(0..n-1) on one goroutine per usable CPU, each taking a
// contiguous run of indexes: cheaper than Parallel's hand-off per item for
// jobs as short as a stat, and neighbours (files of one folder, in sorted
// order) mostly stay on one goroutine. fn returning false stops every
// goroutine early.
func Chunks(n int, fn func(i int) bool) {
	w := min(runtime.GOMAXPROCS(0), (n+255)/256)
	if w <= 1 {
		for i := range n {
			if !fn(i) {
				return
			}
		}
		return
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	per := (n + w - 1) / w
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi && !stop.Load(); i++ {
				if !fn(i) {
					stop.Store(true)
				}
			}
		}(lo, min(n, lo+per))
	}
	wg.Wait()
}
