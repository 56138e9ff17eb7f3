package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/sourcecache"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
)

// SourceCache keeps, in the cache folder, the compiled desired state of
// each request's last load with the stat data of every path that load
// read, listed or checked (git's index rule: path, size, modification and
// change times, inode; a path found missing is recorded as missing, a
// listed folder by its own stat data, which moves when an entry is added,
// removed or renamed). plan, status, diff and deploy over an unchanged
// repo then stat those paths instead of opening, parsing and hashing its
// files. A damaged or foreign cache file is ignored and rebuilt.
type SourceCache struct {
	// Build identifies the agentpack binary: a state compiled by another
	// build (other adapters, other rules) is never reused.
	Build string
	// Racy is how recently a path may have changed before a load and still
	// be trusted by its stat data (default 100ms, for the coarse clock file
	// systems stamp with; a whole-second timestamp always gets 2s). See
	// [fsys.TrackingSystem.Fingerprint].
	Racy time.Duration
}

// sourceCacheKeep is how many requests' cache files are kept; the oldest
// goes when a new one is written.
const sourceCacheKeep = 16

// loadCompiled is Load for the commands that need only the compiled state
// (plan, status, diff, deploy): it goes through the [SourceCache].
func (e *Engine) loadCompiled(ctx context.Context, req Request) (*State, error) {
	return e.loadThrough(ctx, req, e.sourceCachedLoadState)
}

// sourceCachedLoadState is a load through e.SourceCache: a cached state
// whose reads are all unchanged is decoded instead of loaded. The
// in-process LoadCache, when set, is used instead (it keeps compiled
// states).
func (e *Engine) sourceCachedLoadState(ctx context.Context, req Request, load func() (*State, error)) (*State, error) {
	c := e.SourceCache
	if e.LoadCache != nil {
		return e.cachedCompiledState(ctx, req, load)
	}
	if c == nil {
		return load()
	}
	if d, ok := e.Sys.(*fsys.DryRunSystem); ok && len(d.Ops()) > 0 {
		// A dry run that already recorded writes (add --dry-run, then its
		// plan) reads files that differ from the disk the cache describes.
		return load()
	}
	key := e.sourceCacheKey(req, e.Env.Cwd)
	path := e.sourceCachePath(key)
	if st := e.sourceCacheHit(req, key, path); st != nil {
		return st, nil
	}
	// Only a project never loaded looks at another's entry: one whose
	// own entry is stale most likely changed where the other did too.
	known := func() module.KnownHash { return knownSourceHashes(e.Sys, key, path) }
	if _, err := e.Sys.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if st := e.relocatedHit(req); st != nil {
			return st, nil
		}
		// A project that took another's state has no entry of its own:
		// what that one's load read is as good a guide to the sources.
		known = func() module.KnownHash { return e.relocatedKnownSources(req) }
	}
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	if !e.diffing {
		e.knownSources = known()
	}
	e.Sys, e.hashesOnly = tracker, !e.diffing
	if !e.diffing {
		// A diff, which holds bytes and prints every one, leaves its
		// entry unprobed (not relocatable): it is the slowest cold
		// command already.
		e.probeSys = sys
	}
	st, err := load()
	e.Sys, e.hashesOnly, e.probeSys, e.knownSources = sys, false, nil, nil
	if err != nil {
		return st, err
	}
	// The loaded modules are garbage once compiled (dropCopiedBytes would
	// drop them): collected before the cache is encoded, the load's peak
	// is the compile's, not the compile's and the encoding's together (a
	// cold plan of 100,000 files 115 -> 101 MiB, of 10,000 34-35 -> 32-33).
	st.Modules = nil
	collect := func() {
		if st.Desired != nil {
			gcpace.Between(len(st.Desired.Files))
		}
	}
	collect()
	e.saveSourceCache(key, path, tracker, st)
	dropCopiedBytes(st, e.diffing)
	// What the load held only to write the cache (the tracker, the
	// fingerprint, the encoded file) is garbage now: collected before the
	// plan allocates, the peak is the larger of the two phases, not their
	// sum (38 MiB instead of 43 for a cold plan at 10k files).
	collect()
	return st, nil
}

// dropCopiedBytes lets go of the loaded modules and of the bytes of every
// file the desired state copies verbatim from a source file, now that the
// load has hashed them: plan, status and diff need only the hash, and a
// deploy or diff reads the files it writes or shows again, checked against
// the hash, so the whole tree is not held while the plan runs. The
// commands that load through the cache need no modules (a state decoded
// from the cache has none; those that do, explain, skills and evolve,
// load in full). keep keeps the bytes, for a diff that shows them all.
func dropCopiedBytes(st *State, keep bool) {
	st.Modules = nil
	if st.Desired == nil || keep {
		return
	}
	for _, f := range st.Desired.Files {
		if f.HasSrc() && f.Keyed == nil {
			f.Data = nil
		}
	}
}

// sourceCachePath is the cache file of key: one file per request, so
// plans of two profiles or projects do not evict each other.
func (e *Engine) sourceCachePath(key string) fsys.AbsPath {
	sum := sha256.Sum256([]byte(key))
	return abs(filepath.Join(e.Env.CacheDir(), "load", hex.EncodeToString(sum[:12])+".bin"))
}

// likelyInSync reports whether req's plan most likely has nothing to do:
// something was applied since this project's source cache entry was saved
// (a deploy, a rollback: every locked command writes and removes files in
// the state folder, which moves its modification time) and the entry is
// still current, so the repo is as that apply found it. Two stats, then
// only the entry's stamp is checked (the compiled state is not decoded).
func (e *Engine) likelyInSync(req Request) bool {
	if e.SourceCache == nil || e.LoadCache != nil {
		return false
	}
	key := e.sourceCacheKey(req, e.Env.Cwd)
	path := e.sourceCachePath(key)
	entry, err := fsys.LstatData(e.Sys, path)
	if err != nil {
		return false
	}
	if state, err := fsys.LstatData(e.Sys, abs(e.Env.StateDir())); err != nil || state.MtimeNS < entry.MtimeNS {
		return false
	}
	return e.currentEntry(key, path) != nil
}

// currentEntry is key's source cache entry, in its file at path, when the
// file decodes and nothing the entry was compiled from changed, else nil.
func (e *Engine) currentEntry(key string, path fsys.AbsPath) *sourcecache.Entry {
	if ent := readEntry(e.Sys, key, path); ent != nil && ent.Stamp.Unchanged(e.Sys) {
		return ent
	}
	return nil
}

// readEntry is key's source cache entry, decoded from its file at path
// read through sys; nil when the file is missing, damaged or another
// key's.
func readEntry(sys fsys.System, key string, path fsys.AbsPath) *sourcecache.Entry {
	data, err := sys.ReadFile(path)
	if err != nil {
		return nil
	}
	ent, err := sourcecache.Decode(data)
	if err != nil || ent.Key != key {
		return nil
	}
	return ent
}

// sourceCacheHit is the cached state of key when its file decodes and
// nothing it was compiled from changed, or only source files that are
// copied and nothing more ([Engine.currentState]); else nil.
func (e *Engine) sourceCacheHit(req Request, key string, path fsys.AbsPath) *State {
	ent := readEntry(e.Sys, key, path)
	if ent == nil {
		return nil
	}
	d, ok := e.currentState(key, path, ent, func(accept func(was, now fsys.FingerprintEntry) bool) ([]fsys.FingerprintEntry, bool) {
		return ent.Stamp.Changes(e.Sys, maxPatched, accept)
	})
	if !ok {
		return nil
	}
	return e.cachedState(req, ent, ent.Project, d)
}

// cachedState is the State of req with ent's compiled state d for the
// project folder project.
func (e *Engine) cachedState(req Request, ent *sourcecache.Entry, project fsys.AbsPath, d *desired.State) *State {
	st := &State{Req: req, Repo: ent.Repo, Project: project, Profile: ent.Profile, Targets: ent.Targets,
		Desired: d, Warnings: ent.Warnings, configured: ent.Configured}
	// The roots registry is agentpack's own state, rewritten by deploys: it
	// is read fresh rather than invalidating the cache.
	st.Desired.Stale = e.staleRoots(st, st.Desired)
	return st
}

// saveSourceCache writes st's cache file when every path the load saw is
// old enough to trust and the System can write the cache folder; a dry run
// records nothing. Failures only cost speed.
func (e *Engine) saveSourceCache(key string, path fsys.AbsPath, tracker *fsys.TrackingSystem, st *State) {
	if e.dryRun() || st.Manifest == nil {
		return
	}
	roots := e.rootsPath()
	fp, ok := tracker.FingerprintWithout(e.Sys, e.SourceCache.racy(), func(p fsys.AbsPath) bool { return p == roots })
	if !ok {
		return
	}
	ent := &sourcecache.Entry{Key: key, Fingerprint: fp, Repo: st.Repo, Project: st.Project,
		Profile: st.Profile, Targets: st.Targets, Configured: st.Manifest.TargetNames(), Warnings: st.Warnings, Desired: st.Desired,
		Relocatable: e.relocatable(st, fp)}
	if e.writeCacheFile(path, func(w io.Writer) error { return sourcecache.Encode(w, ent) }) && ent.Relocatable {
		e.saveRelocPointer(st)
	}
}

// racy is c.Racy, or its default.
func (c *SourceCache) racy() time.Duration {
	if c.Racy == 0 {
		return 100 * time.Millisecond
	}
	return c.Racy
}

// writeCacheFile writes one cache file (a source cache entry, a kept
// answer) as write encodes it, when the System can write its folder, then
// prunes the folder. A failed write leaves the file as it was.
func (e *Engine) writeCacheFile(path fsys.AbsPath, write func(io.Writer) error) (written bool) {
	dir := path.Dir()
	if e.Sys.MkdirAll(dir, 0o700) != nil || !fsys.CanWrite(e.Sys, dir) {
		return false
	}
	if fsys.WriteStream(e.Sys, path, 0o600, write) != nil {
		return false
	}
	e.pruneSourceCache(dir, path)
	return true
}

// pruneSourceCache removes the oldest cache files of dir past
// sourceCacheKeep.
func (e *Engine) pruneSourceCache(dir, keep fsys.AbsPath) {
	fsys.PruneOldest(e.Sys, dir, sourceCacheKeep, keep, func(name string) (fsys.AbsPath, bool) {
		return dir.JoinName(name), strings.HasSuffix(name, ".bin")
	})
}
