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

	mu      sync.Mutex
	entries map[string]*cachedLoad
}

type cachedLoad struct {
	st *State
	fp *fsys.Fingerprint
}

// NewLoadCache returns an empty cache.
func NewLoadCache() *LoadCache {
	return &LoadCache{Racy: 2 * time.Second, entries: map[string]*cachedLoad{}}
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
	c := e.LoadCache
	if c == nil || e.dryRun() {
		return load()
	}
	key := e.cacheKey(req)
	c.mu.Lock()
	hit := c.entries[key]
	c.mu.Unlock()
	if hit != nil && hit.fp.Unchanged(e.Sys) {
		return hit.st.clone(), nil
	}
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	e.Sys = tracker
	st, err := load()
	e.Sys = sys
	if err != nil {
		return st, err
	}
	if fp, ok := tracker.Fingerprint(sys, c.Racy); ok {
		c.mu.Lock()
		c.entries[key] = &cachedLoad{st: st.clone(), fp: fp}
		c.mu.Unlock()
	}
	return st, nil
}

// clone is a copy of st that shares the (read-only) compiled state but not
// the warnings.
func (st *State) clone() *State {
	st.mu.Lock()
	defer st.mu.Unlock()
	return &State{Req: st.Req, Repo: st.Repo, Project: st.Project, Profile: st.Profile, Manifest: st.Manifest,
		Targets: st.Targets, Modules: st.Modules, Desired: st.Desired, Warnings: slices.Clone(st.Warnings), lock: st.lock}
}
