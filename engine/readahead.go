package engine

import (
	"sync"

	"github.com/agentpack/agentpack/internal/fsys"
)

// readAheadWindow is how many files a [readAhead] reads before they are
// asked for: enough to keep the disk and both cores busy while one file's
// diff is printed, few enough that what waits is small (a file over 100
// KiB has no diff to show).
const readAheadWindow = 16

// readAhead reads the files a diff let go of ([diffHeld]) again, in the
// order the diff is shown, a few files ahead on other goroutines: shown
// one read at a time, the 84,000 files a cold diff of 100,000 creates
// drops took longer to read than to print. A file asked for out of that
// order (a diff written twice) is read on the spot.
type readAhead struct {
	sys   fsys.System
	paths []fsys.AbsPath

	mu    sync.Mutex
	done  *sync.Cond
	next  int // the first file not yet being read
	want  int // the file expected to be asked for next
	ready map[int]readResult
}

type readResult struct {
	data []byte
	err  error
}

func newReadAhead(sys fsys.System) *readAhead {
	r := &readAhead{sys: sys, ready: map[int]readResult{}}
	r.done = sync.NewCond(&r.mu)
	return r
}

// add appends path to the files r reads, returning its index for [get].
// All adds come before the first get.
func (r *readAhead) add(path fsys.AbsPath) int {
	r.paths = append(r.paths, path)
	return len(r.paths) - 1
}

// get returns the bytes of file k.
func (r *readAhead) get(k int) ([]byte, error) {
	r.mu.Lock()
	if k < r.want {
		r.mu.Unlock()
		return r.sys.ReadFile(r.paths[k])
	}
	for i := range r.ready {
		if i < k {
			delete(r.ready, i) // skipped: nobody asks for it in order now
		}
	}
	r.want = k + 1
	r.next = max(r.next, k)
	for ; r.next < len(r.paths) && r.next <= k+readAheadWindow; r.next++ {
		go r.read(r.next)
	}
	for {
		if res, ok := r.ready[k]; ok {
			delete(r.ready, k)
			r.mu.Unlock()
			return res.data, res.err
		}
		r.done.Wait()
	}
}

// read reads file i and hands it to the get waiting for it.
func (r *readAhead) read(i int) {
	data, err := r.sys.ReadFile(r.paths[i])
	r.mu.Lock()
	if i >= r.want-1 {
		r.ready[i] = readResult{data, err}
	}
	r.mu.Unlock()
	r.done.Broadcast()
}
