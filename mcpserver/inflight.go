package mcpserver

import (
	"context"
	"sync"
)

// inflight counts requests being handled, so a shutdown can finish them
// and refuse new ones. A shutdown also cancels the context of every call in
// flight: work that waits (a git fetch from a stalled remote, the state
// lock) stops at once and is answered, while work that does not look at
// its context (an apply) finishes.
type inflight struct {
	mu       sync.Mutex
	wg       sync.WaitGroup
	draining bool
	stop     context.Context
	cancel   context.CancelFunc
}

// enter admits a request unless the server is draining; ctx is the
// request's context, cancelled also when a shutdown begins.
func (f *inflight) enter(ctx context.Context) (context.Context, func(), bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.draining {
		return ctx, nil, false
	}
	if f.stop == nil {
		f.stop, f.cancel = context.WithCancel(context.Background())
	}
	f.wg.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(f.stop, cancel)
	return ctx, func() {
		unhook()
		cancel()
		f.wg.Done()
	}, true
}

// drain refuses new requests, cancels those in flight and waits for them.
func (f *inflight) drain() {
	f.mu.Lock()
	f.draining = true
	if f.cancel != nil {
		f.cancel()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
