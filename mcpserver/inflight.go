package mcpserver

import "sync"

// inflight counts requests being handled, so a shutdown can finish them
// and refuse new ones.
type inflight struct {
	mu       sync.Mutex
	wg       sync.WaitGroup
	draining bool
}

func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.draining {
		return false
	}
	f.wg.Add(1)
	return true
}

func (f *inflight) leave() { f.wg.Done() }

// drain refuses new requests and waits for those in flight.
func (f *inflight) drain() {
	f.mu.Lock()
	f.draining = true
	f.mu.Unlock()
	f.wg.Wait()
}
