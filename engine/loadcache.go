package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// LoadCache keeps compiled desired states between the calls of a
// long-running process (the MCP server), each with the stat data of every
// path its load read. A later load of the same request reuses the state
// when not one of those paths changed, so a `status` or `plan` call does
// not re-read, re-parse and re-hash an unchanged repo. It is safe for
// concurrent use; a nil *LoadCache caches nothing.
type LoadCache struct {
	// Racy is how recently a file may have changed before a load and still
	// be trusted by its stat data; see [fsys.TrackingSystem.Fingerprint].
	Racy time.Duration
	// Watch makes the cache watch the folders of every path a load read
	// (started with the first load, stopped by Close): while the watcher
	// hears nothing, a hit is trusted without a stat of each path.
	Watch bool
	// Recheck is how long a hit may be trusted on the watcher's word
	// alone; after it the stat data is checked again, the safety net for
	// what a watcher cannot hear (network mounts, a full event queue).
	Recheck time.Duration

	mu      sync.Mutex
	entries map[string]*cachedLoad
	// answers are whole read-only answers (status) by request, kept only
	// while watching; see memoized.
	answers map[string]*cachedLoad
	watcher *fsys.Watcher
	closed  bool
}

type cachedLoad struct {
	st *State
	// answer is the use case's answer, for an entry of answers.
	answer any
	fp     *fsys.Fingerprint
	// watched: the watcher covers every folder of fp; gen is its
	// generation and checked the time when fp was last known current.
	watched bool
	gen     uint64
	checked time.Time
}

// NewLoadCache returns an empty cache that trusts stat data as the CLI's
// caches on disk do: not for a file changed within 100 ms of a load (2 s
// for a whole-second timestamp), so a server answers from what it kept
// from the first call a tenth of a second after an edit, not two seconds.
func NewLoadCache() *LoadCache {
	return &LoadCache{Racy: 100 * time.Millisecond, Recheck: 5 * time.Second, entries: map[string]*cachedLoad{}, answers: map[string]*cachedLoad{}}
}

// Close stops the watcher, if one started; the cache goes on with stat
// checks only.
func (c *LoadCache) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	w := c.watcher
	c.watcher, c.closed = nil, true
	c.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// Distrust makes the next use of every entry check its stat data, not
// take the watcher's word: a caller that just wrote files calls it, so
// its next read does not race the watcher's events for those writes.
func (c *LoadCache) Distrust() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[string]*cachedLoad{c.entries, c.answers} {
		for _, h := range m {
			h.checked = time.Time{}
		}
	}
}

// watcherLocked is the cache's watcher, started on first use; nil when
// watching is off or cannot start. c.mu is held.
func (c *LoadCache) watcherLocked() *fsys.Watcher {
	if c.Watch && c.watcher == nil && !c.closed {
		if w, err := fsys.NewWatcher(); err == nil {
			c.watcher = w
		} else {
			c.Watch = false
		}
	}
	return c.watcher
}

// current reports whether h still describes the disk: on the watcher's
// word while it heard nothing since h was last checked (and that was less
// than Recheck ago), once it has heard everything that happened before
// this call ([fsys.Watcher.Sync]), else by a stat of every path.
func (c *LoadCache) current(h *cachedLoad, sys fsys.System) bool {
	c.mu.Lock()
	w := c.watcher
	trustable := w != nil && h.watched && time.Since(h.checked) < c.Recheck
	c.mu.Unlock()
	var gen uint64
	if w != nil {
		synced := trustable && w.Sync() // a sync for an entry checked anyway is wasted
		gen = w.Generation()
		c.mu.Lock()
		trusted := synced && h.gen == gen
		c.mu.Unlock()
		if trusted {
			return true
		}
	}
	if !h.fp.Unchanged(sys) {
		return false
	}
	c.mu.Lock()
	h.gen, h.checked = gen, time.Now()
	c.mu.Unlock()
	return true
}

// store keeps st with fp. With a watcher, the folders of fp are watched
// first and fp is checked once more after: a change made before the
// watches started shows in the stat data, one made after is heard.
func (c *LoadCache) store(entries map[string]*cachedLoad, key string, h *cachedLoad, sys fsys.System) {
	fp := h.fp
	c.mu.Lock()
	w := c.watcherLocked()
	c.mu.Unlock()
	if w != nil && w.Cover(fp) {
		gen := w.Generation()
		if fp.Unchanged(sys) {
			h.watched, h.gen, h.checked = true, gen, time.Now()
		}
	}
	c.mu.Lock()
	entries[key] = h
	c.mu.Unlock()
}

// cacheKey names what a load depends on besides the files it reads: the
// request and the environment.
func (e *Engine) cacheKey(req Request) string {
	return fmt.Sprintf("%#v\x00%#v\x00%v", req, e.Env, e.Adapters.Names())
}

// cachedLoadState is Load through e.LoadCache: a state whose reads are all
// unchanged is reused (a copy, so callers may add warnings), anything else
// is loaded through a System that tracks what it reads.
func (e *Engine) cachedLoadState(ctx context.Context, req Request, load func() (*State, error)) (*State, error) {
	return e.cachedLoadStateAs(ctx, req, "", load)
}

// cachedCompiledState is cachedLoadState for the commands that need only
// the compiled state ([Engine.loadCompiled]): its entry, apart from a full
// load's, is loaded keeping the hashes of copied files, not their bytes,
// and no modules, so a server holds no copy of the repo (150 -> 46 MiB for a
// repo of 84 MB); a deploy or a diff reads the bytes it writes or shows.
func (e *Engine) cachedCompiledState(ctx context.Context, req Request, load func() (*State, error)) (*State, error) {
	return e.cachedLoadStateAs(ctx, req, "compiled", func() (*State, error) {
		e.hashesOnly = true
		st, err := load()
		e.hashesOnly = false
		if st != nil {
			dropCopiedBytes(st, false)
		}
		return st, err
	})
}

// cachedLoadStateAs is cachedLoadState keeping its entry under kind.
func (e *Engine) cachedLoadStateAs(ctx context.Context, req Request, kind string, load func() (*State, error)) (*State, error) {
	c := e.LoadCache
	if c == nil || e.dryRun() {
		return load()
	}
	key := e.cacheKey(req) + "\x00" + kind
	c.mu.Lock()
	hit := c.entries[key]
	c.mu.Unlock()
	if hit != nil && c.current(hit, e.Sys) {
		noteLoad(ctx, hit)
		return hit.st.clone(), nil
	}
	if hit != nil && kind == "compiled" {
		if st := e.patchedLoad(ctx, c, key, hit); st != nil {
			return st, nil
		}
	}
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	e.Sys = tracker
	if hit != nil && kind == "compiled" && hit.st.Desired != nil {
		// What the out-of-date entry's load read is known by stat data:
		// only the files edited since are read again.
		e.knownSources = knownSourcesOf(hit.st.Desired, hit.fp.Entries())
	}
	st, err := load()
	e.Sys, e.knownSources = sys, nil
	if err != nil {
		return st, err
	}
	if fp, ok := tracker.Fingerprint(sys, c.Racy); ok {
		h := &cachedLoad{st: st.clone(), fp: fp}
		c.store(c.entries, key, h, sys)
		noteLoad(ctx, h)
	}
	return st, nil
}

// patchedLoad is hit's compiled state after in-place edits of files it
// only copies, as [Engine.currentState] makes it from a source cache entry;
// the patched state replaces hit when the edits are old enough to trust.
// nil when the edits need a load.
func (e *Engine) patchedLoad(ctx context.Context, c *LoadCache, key string, hit *cachedLoad) *State {
	if hit.st.Desired == nil {
		return nil
	}
	start := time.Now()
	old := hit.st.Desired
	copies := sync.OnceValue(old.Copies)
	changed, ok := hit.fp.Changes(e.Sys, maxPatched, patchable(abs(hit.st.Repo), copies))
	if !ok || len(changed) == 0 {
		return nil
	}
	d, ok := e.patchState(copies(), changed)
	if !ok {
		return nil
	}
	st := hit.st.clone()
	st.Desired = d
	if entries, ok := withChanges(hit.fp.Entries(), changed); ok && settled(changed, start, c.Racy) {
		h := &cachedLoad{st: st.clone(), fp: fsys.NewFingerprint(entries)}
		c.store(c.entries, key, h, e.Sys)
		noteLoad(ctx, h)
	}
	return st
}

// clone is a copy of st that shares the (read-only) compiled state but not
// the warnings.
func (st *State) clone() *State {
	st.mu.Lock()
	defer st.mu.Unlock()
	return &State{Req: st.Req, Repo: st.Repo, Project: st.Project, Profile: st.Profile, Manifest: st.Manifest,
		Targets: st.Targets, Modules: st.Modules, Desired: st.Desired, Warnings: slices.Clone(st.Warnings), lock: st.lock}
}
