// Package gcpace sets how often the garbage collector runs for the size of
// the work at hand. Go lets the heap grow to twice what is live before it
// collects (GOGC=100): at 10,000 files that is a few MiB, at 100,000 it is
// tens of MiB of garbage on top of a plan. A process working on many files
// collects more often instead, trading some CPU for a lower peak.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// LargeFiles is the number of desired files from which [ForFiles] lowers
// the heap's growth between collections.
const LargeFiles = 25000

// largePercent is the GOGC of a process working on LargeFiles or more:
// the heap grows by half of what is live between collections, not by all
// of it.
const largePercent = 50

var once sync.Once

// ForFiles paces the collector for work on n desired files: from
// LargeFiles on, the heap may grow by half of what is live instead of
// doubling. It only ever lowers the pace once per process, and leaves it
// alone when the user set GOGC.
func ForFiles(n int) {
	if n < LargeFiles || os.Getenv("GOGC") != "" {
		return
	}
	once.Do(func() { debug.SetGCPercent(largePercent) })
}

// collectFrom is the size of work (files or paths) from which [Between]
// collects.
const collectFrom = 5000

// Between collects garbage between two phases of work on n files or
// paths, so the second phase sets its heap goal from what is live rather
// than from the first's garbage: the peak is the larger of the two, not
// their sum (a cold plan of 10,000 files 37 -> 34 MiB). Below collectFrom
// the heap is a few MiB and a forced collection is only time: a
// millisecond or two of a 20 ms command over 1,000 files.
func Between(n int) {
	if n >= collectFrom {
		runtime.GC()
	}
}
