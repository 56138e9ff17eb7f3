package engine

import (
	"context"

	"github.com/agentpack/agentpack/internal/fsys"
)

// loadUseKey marks a context whose caller wants to know which load-cache
// entry a load used.
type loadUseKey struct{}

type loadUse struct{ h *cachedLoad }

// noteLoad tells a memoized caller which load-cache entry its load used:
// on a hit served on the watcher's word, nothing of the sources was read
// or stat'ed, so the answer's fingerprint takes the entry's.
func noteLoad(ctx context.Context, h *cachedLoad) {
	if u, ok := ctx.Value(loadUseKey{}).(*loadUse); ok {
		u.h = h
	}
}

// memoized answers a read-only use case (status) from a kept answer when
// nothing it read changed: fn runs through a System that tracks every path
// it reads, lists or stats — the sources, the target files and folders,
// the target manifests, the stat cache — and its answer is kept with the
// stat data of all of them. A watching e.LoadCache keeps answers in memory
// (the MCP server: the watcher says when to look again); otherwise, with
// e.SourceCache on (the CLI), answers are kept on disk and checked by
// stat'ing every path, which costs a fraction of reading the caches and
// computing the answer again. The answer is shared between calls; callers
// must not change it. A dry run, or a disk with an interrupted apply to
// roll back, always runs fn.
func memoized[T any](ctx context.Context, e *Engine, key string, fn func(ctx context.Context) (*State, T, error)) (*State, T, error) {
	c := e.LoadCache
	if c == nil || !c.Watch {
		return keptWhen(ctx, e, key, fn, nil)
	}
	if e.locked || e.mustCompute() {
		return fn(ctx)
	}
	key += "\x00" + e.cacheKey(Request{})
	c.mu.Lock()
	hit := c.answers[key]
	c.mu.Unlock()
	if hit != nil && c.current(hit, e.Sys) {
		return hit.st.clone(), hit.answer.(T), nil
	}
	use := &loadUse{}
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	e.Sys = tracker
	st, out, err := fn(context.WithValue(ctx, loadUseKey{}, use))
	e.Sys = sys
	if err != nil || st == nil {
		return st, out, err
	}
	if fp, ok := tracker.FingerprintWithout(sys, c.Racy, e.ownCache()); ok {
		if use.h != nil {
			fp = fp.With(use.h.fp)
		}
		c.store(c.answers, key, &cachedLoad{st: st.clone(), answer: out, fp: fp}, sys)
	}
	return st, out, nil
}
