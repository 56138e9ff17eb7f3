package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/keyset"
)

// statCacheDir holds the stat cache: (size, mtime, ctime, inode) → sha256
// of managed files, so plan and status do not re-read and re-hash files
// that did not change, and the parsed form of the target manifests
// (manifestcache.go). It is compact binary (statcodec.go), read on every
// plan: a base file holding every entry, and a delta holding what changed
// since, so a deploy that changes 100 of 10,000 files writes 100 entries,
// not 10,000. A damaged, unknown or mismatched file is ignored and rebuilt.
// A cache scoped to some roots ([StatCache.Scope], what a plan does) keeps
// its base and delta in a folder of its own below statScopesDir, so a
// plan of one project reads and writes its own entries, not every other
// project's.
const statCacheDir = "statcache"

// statScopesDir holds one folder per set of roots plans scoped to; the
// statScopesKeep most recently written are kept.
const (
	statScopesDir  = "scopes"
	statScopesKeep = 32
)

// legacyStatCacheFile is the single gob file earlier versions kept beside
// the folder.
const legacyStatCacheFile = "statcache.v2.gob"

const (
	statBaseFile  = "base.bin"
	statDeltaFile = "delta.bin"
)

// StatCache remembers the hash of files by their stat identity.
type StatCache struct {
	sys fsys.System
	dir fsys.AbsPath
	// base is the folder of the base and delta files: dir, or the scope's
	// own folder. from is the folder the base decoded came from: base, or
	// dir for a scope whose folder has none yet (its entries below the
	// scope seed it, and the next save writes the scope's first base).
	base, from fsys.AbsPath

	mu sync.RWMutex
	// entries are the base file's, sorted by the hash of their path
	// ([pathKey]): a path is only needed again to write a new base, which
	// merges what changed into the base file read again. Without a path
	// string each, or a map, 100,000 entries take half the memory.
	entries []keyedEntry
	// over are the entries of the delta loaded and those recorded or
	// forgotten since (a forgotten one has no hash), by path: they stand
	// over entries.
	over    map[string]statEntry
	baseGen uint64          // the generation of the base file loaded; 0: none
	inDelta map[string]bool // the paths the delta file loaded holds
	changed map[string]bool // the paths recorded or forgotten since

	// The files, read and decoded at the first use ([StatCache.decode])
	// into entries and over, not while the desired state is loaded (the
	// peak of a plan's memory): only the entries below scope's roots when
	// [StatCache.Scope] set any, so a deploy of one project does not hold
	// every other project's entries. foreign holds the delta's entries
	// outside them, written back with the next delta; a new base rereads
	// the old one's.
	once    sync.Once
	decoded bool // once has run
	scope   []string
	foreign map[string]statEntry

	manifests manifestBlobs // manifestcache.go
	dirs      statBlobs     // dircache.go
}

// statEntry is a file's stat identity and its sha256; a delta's
// "forgotten" has no hash (Hashed false).
type statEntry struct {
	Size    int64
	MtimeNS int64
	CtimeNS int64
	Ino     uint64
	Sum     [32]byte
	Hashed  bool
}

// racyWindow: a file changed this recently may change again within the same
// timestamp tick without its stat changing (git's "racy clean" problem), so
// it is not cached until it is older.
const racyWindow = 100 * time.Millisecond

// StatCachePath is where the stat cache of stateDir lives (a folder);
// read-only commands may still write there.
func StatCachePath(stateDir fsys.AbsPath) fsys.AbsPath { return stateDir.JoinName(statCacheDir) }

// LoadStatCache returns the cache kept in stateDir, read with sys when it
// is first used; a missing or damaged one is empty. [StatCache.Save] writes
// it back with sys.
func LoadStatCache(sys fsys.System, stateDir fsys.AbsPath) *StatCache {
	c := &StatCache{sys: sys, dir: StatCachePath(stateDir), over: map[string]statEntry{}, inDelta: map[string]bool{},
		changed: map[string]bool{}, foreign: map[string]statEntry{}}
	c.base = c.dir
	c.manifests = manifestBlobs{dir: c.dir.JoinName(manifestCacheDir)}
	c.dirs = statBlobs{path: c.dir.JoinName(dirCacheFile), magic: dirCacheMagic}
	return c
}

// Scope keeps, of the entries loaded, only those of files below roots (the
// managed roots a plan looks at); the others are left on disk. It must come
// before the cache is first used, and is a no-op after.
func (c *StatCache) Scope(roots []fsys.AbsPath) {
	if c == nil || c.decoded {
		return
	}
	c.scope = make([]string, len(roots))
	for i, r := range roots {
		c.scope[i] = r.String()
	}
	c.base = c.dir.JoinName(statScopesDir).JoinName(scopeKey(c.scope))
	// The folders listed are a scope's own too: a status of one project
	// then rewrites its own listings, not those of every project the home
	// ever deployed to (5.8 MB after 25 projects of 10,000 files).
	c.dirs.path = c.base.JoinName(dirCacheFile)
}

// scopeKey names the folder of the set of roots: the same roots in any
// order share it.
func scopeKey(roots []string) string {
	sorted := slices.Sorted(slices.Values(roots))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\x00")))
	return hex.EncodeToString(sum[:12])
}

// inScope reports whether path is below one of roots.
func inScope[P string | []byte](roots []string, path P) bool {
	for _, r := range roots {
		if len(path) >= len(r) && string(path[:len(r)]) == r &&
			(len(path) == len(r) || strings.HasSuffix(r, "/") || strings.HasSuffix(r, string(filepath.Separator)) ||
				path[len(r)] == '/' || path[len(r)] == filepath.Separator) {
			return true
		}
	}
	return false
}

// wanted is the filter of the entries decoded: nil (every one) without a
// scope, else scope's, or (out) every other.
func (c *StatCache) wanted(out bool) func([]byte) bool {
	if c.scope == nil {
		return nil
	}
	roots := c.scope
	return func(path []byte) bool { return inScope(roots, path) != out }
}

// decode turns the files read into entries, once.
func (c *StatCache) decode() {
	c.once.Do(func() {
		c.decoded = true
		c.from = c.base
		base, err := c.sys.ReadFile(c.from.JoinName(statBaseFile))
		if err != nil && c.base != c.dir {
			c.from = c.dir
			base, err = c.sys.ReadFile(c.from.JoinName(statBaseFile))
		}
		if err != nil {
			return
		}
		delta, _ := c.sys.ReadFile(c.from.JoinName(statDeltaFile))
		want := c.wanted(false)
		n := 0 // the entries kept, counted first so the map is made at its size
		if walkStatFile(base, statBaseMagic, func(path []byte, e statEntry) {
			if e.Hashed && (want == nil || want(path)) {
				n++
			}
		}) != nil {
			return // a damaged cache only costs speed
		}
		entries := make([]keyedEntry, 0, n)
		gen, err := walkStatFileGen(base, statBaseMagic, func(path []byte, e statEntry) {
			if e.Hashed && (want == nil || want(path)) && len(entries) < n { // a base forgets nothing
				entries = append(entries, keyedEntry{key: pathKey(path), size: e.Size, mtimeNS: e.MtimeNS, ctimeNS: e.CtimeNS, ino: e.Ino, sum: e.Sum})
			}
		})
		if err != nil {
			return
		}
		// Two paths with one key: neither is trusted (it only costs hashing
		// them again; what is recorded for them goes to over).
		kept := keyset.SortUnique(entries, func(e *keyedEntry) uint64 { return e.key })
		c.entries, c.baseGen = kept, gen
		// A delta written against another base (a compaction since) is
		// ignored: the base it amended is gone.
		amend := map[string]statEntry{}
		if gen, err := decodeStatFile(delta, statDeltaMagic, amend, nil); err != nil || gen != c.baseGen {
			return
		}
		for k, e := range amend {
			out := want != nil && !want([]byte(k))
			switch {
			case !out:
				c.over[k] = e
			case c.from != c.base:
				continue // another folder's: the scope's base leaves it out
			default:
				c.foreign[k] = e
			}
			c.inDelta[k] = true
		}
	})
}

// keyedEntry is an entry of the base: the key of its path and a
// [statEntry] with a hash.
type keyedEntry struct {
	key     uint64
	size    int64
	mtimeNS int64
	ctimeNS int64
	ino     uint64
	sum     [32]byte
}

// pathKeySeed makes [pathKey]s of this process: they are never stored.
var pathKeySeed = maphash.MakeSeed()

// pathKey is the key of a path among a [StatCache]'s entries. Two paths
// with one key are told apart only by their entries' stat data, which a
// lookup checks too: a key shared by chance within one cache (one in 10^10
// at 100,000 paths) is found when the base is decoded and both are left
// out; a path not in the base finding another's entry still needs that
// entry's size, times and inode to be its own.
func pathKey[T ~string | ~[]byte](path T) uint64 {
	return pathKeyOf(unsafeString(path))
}

// pathKeyOf is [pathKey] of a string (a test makes keys clash).
var pathKeyOf = func(path string) uint64 { return maphash.String(pathKeySeed, path) }

// unsafeString is path's bytes as a string, valid while path is.
func unsafeString[T ~string | ~[]byte](path T) string {
	switch p := any(path).(type) {
	case []byte:
		return unsafe.String(unsafe.SliceData(p), len(p))
	}
	return string(path)
}

// entry is path's entry: over's when it has one (then maybe forgotten,
// without a hash), else the base's; c.mu must be held.
func (c *StatCache) entry(path string) (statEntry, bool) {
	if e, ok := c.over[path]; ok {
		return e, e.Hashed
	}
	k := pathKey(path)
	i, ok := slices.BinarySearchFunc(c.entries, k, func(e keyedEntry, k uint64) int { return cmp.Compare(e.key, k) })
	if !ok {
		return statEntry{}, false
	}
	e := &c.entries[i]
	return statEntry{Size: e.size, MtimeNS: e.mtimeNS, CtimeNS: e.ctimeNS, Ino: e.ino, Sum: e.sum, Hashed: true}, true
}

// Preload returns c. It once read the decoded manifests ahead; each is
// now read when it is looked up, so that only the manifest decoded from
// it stays in memory, and the folder listings only by the status that
// uses them.
func (c *StatCache) Preload() *StatCache {
	return c
}

// entryFor is the entry of a file with stat data d and hash sum (none
// when hashed is false).
func entryFor(d fsys.StatData, sum [32]byte, hashed bool) statEntry {
	return statEntry{Size: d.Size, MtimeNS: d.MtimeNS, CtimeNS: d.CtimeNS, Ino: d.Ino, Sum: sum, Hashed: hashed}
}

// lookup returns the cached hash of path when its stat identity is unchanged.
func (c *StatCache) lookup(path fsys.AbsPath, d fsys.StatData) (string, bool) {
	if c == nil {
		return "", false
	}
	c.decode()
	c.mu.RLock()
	e, ok := c.entry(path.String())
	c.mu.RUnlock()
	if !ok || !e.Hashed || e != entryFor(d, e.Sum, true) || d.Ino == 0 {
		return "", false
	}
	return hex.EncodeToString(e.Sum[:]), true
}

// vouches reports whether the cache holds hash want (lowercase hex) for
// path with its stat identity unchanged: [StatCache.lookup] for a caller
// that knows which hash it expects, without rendering one.
func (c *StatCache) vouches(path fsys.AbsPath, d fsys.StatData, want string) bool {
	sum, ok := checksum.ParseSHA256Hex(want)
	if c == nil || !ok || d.Ino == 0 {
		return false
	}
	c.decode()
	c.mu.RLock()
	e, found := c.entry(path.String())
	c.mu.RUnlock()
	return found && e == entryFor(d, sum, true)
}

// racy reports whether e is too recent, or its mtime too coarse, to tell a
// later same-size edit apart (git's "racy clean" problem).
func racy(e statEntry) bool {
	now := time.Now().UnixNano()
	if now-e.MtimeNS < int64(racyWindow) || now-e.CtimeNS < int64(racyWindow) {
		return true
	}
	return e.MtimeNS%int64(time.Second) == 0 && now-e.MtimeNS < int64(2*time.Second) // whole-second timestamps: wait longer
}

// Record remembers the hash of a file agentpack has just written, with d
// its stat data as taken right after the write (as the write placed it,
// or as [fsys.LstatData] takes it). Taken then, d cannot tell the write
// from another program's edit of the same size within the same timestamp
// tick, so it is recorded only once it is no longer racy, unless distinct:
// the file system was seen stamping changes to just-looked-at files with
// fine-grained times ([fsys.Placed.Distinct]), so any later edit moves
// the ctime. On a file system with whole-second times d is never recorded:
// the next plan reads the file.
func (c *StatCache) Record(path fsys.AbsPath, d fsys.StatData, sha string, distinct bool) {
	if d.MtimeNS%int64(time.Second) == 0 {
		return
	}
	c.record(path, d, sha, distinct)
}

// record remembers sha as path's hash with stat data d, unless d is racy
// (see [StatCache.Record] for recent).
func (c *StatCache) record(path fsys.AbsPath, d fsys.StatData, sha string, recent bool) {
	if c == nil {
		return
	}
	sum, ok := checksum.ParseSHA256Hex(sha)
	e := entryFor(d, sum, true)
	if (!recent && racy(e)) || !ok {
		return
	}
	c.decode()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entry(path.String()); !ok || old != e {
		c.over[path.String()] = e
		c.changed[path.String()] = true
	}
}

// Expect makes room for n entries about to be recorded, when none has
// been yet: a deploy records every file it wrote, and maps grown from
// empty one insert at a time are rehashed over and over.
func (c *StatCache) Expect(n int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.over) == 0 && len(c.changed) == 0 {
		c.over, c.changed = make(map[string]statEntry, n), make(map[string]bool, n)
	}
}

// Forget drops path (it was written or removed).
func (c *StatCache) Forget(path fsys.AbsPath) {
	if c == nil {
		return
	}
	c.decode()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entry(path.String()); ok {
		c.over[path.String()] = statEntry{} // forgotten
		c.changed[path.String()] = true
	}
}

// Save writes what changed since the cache was loaded, and nothing when
// nothing did: the changed entries as a delta, or every entry as a new
// base once the delta would grow past a few percent of it. Failures only
// cost speed.
func (c *StatCache) Save() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.manifests.save(c.sys)
	c.dirs.save(c.sys)
	if len(c.changed) == 0 {
		return
	}
	if c.sys.MkdirAll(c.base, 0o700) != nil {
		return
	}
	// A delta amends the base of its own folder: a scope seeded from the
	// shared base writes a base of its own first. (The delta is only
	// made when it may be written: a first deploy records 10,000 files.)
	newBase := c.baseGen == 0 || c.from != c.base
	var delta map[string]bool
	if !newBase {
		delta = maps.Clone(c.inDelta)
		maps.Copy(delta, c.changed)
	}
	if newBase || len(delta) > (len(c.entries)+len(c.over))/16+256 {
		// A new generation, so no delta written for an older base, even
		// one with the same entries, applies to it.
		gen := max(uint64(time.Now().UnixNano()), c.baseGen+1)
		write := func(w io.Writer) error { return c.writeBase(w, gen) }
		if fsys.WriteStream(c.sys, c.base.JoinName(statBaseFile), 0o600, write) == nil {
			if c.baseGen == 0 {
				// The first base replaces the gob file of earlier versions.
				_ = c.sys.Remove(c.dir.Dir().JoinName(legacyStatCacheFile))
			}
			_ = c.sys.Remove(c.base.JoinName(statDeltaFile)) // of an older base
			c.baseGen, c.from = gen, c.base
			clear(c.inDelta)
			clear(c.changed)
			clear(c.foreign)
			if c.base != c.dir {
				c.writeScopeRoots()
				c.pruneScopes()
				// The listings earlier versions kept for every project
				// at once: each scope keeps its own now.
				_ = c.sys.Remove(c.dir.JoinName(dirCacheFile))
			}
		}
		return
	}
	// The delta's entries: the scope's, else the loaded delta's from
	// outside it (a key with neither, or forgotten, is written as
	// forgotten). Every key is over's or foreign's.
	entries := make(map[string]statEntry, len(delta))
	entry := ownFirst(c.over, c.foreign)
	for k := range delta {
		if e, ok := entry(k); ok && e.Hashed {
			entries[k] = e
		}
	}
	data := encodeStatFile(statDeltaMagic, c.baseGen, entries, slices.Collect(maps.Keys(delta)))
	if c.sys.WriteFile(c.base.JoinName(statDeltaFile), data, 0o600) == nil {
		c.inDelta = delta
		clear(c.changed)
	}
}

// writeBase writes every entry as a base of gen: those of the base file
// (read again, only now, and merged entry by entry) but the ones over and
// foreign name, then over's and foreign's with a hash. Every entry is
// checked against the disk when used, so those of a base another process
// wrote since are as good as the one loaded.
// A scope's first base keeps only the scope's entries of the shared one.
func (c *StatCache) writeBase(w io.Writer, gen uint64) error {
	var old []byte
	if c.from != "" {
		old, _ = c.sys.ReadFile(c.from.JoinName(statBaseFile))
	}
	keep := func([]byte) bool { return true }
	if c.from != c.base {
		keep = c.wanted(false)
	}
	return writeMergedBase(w, gen, old, keep, c.foreign, c.over)
}

// pruneScopes removes the folders of the scopes written least recently
// past statScopesKeep: projects deleted or not planned for long.
func (c *StatCache) pruneScopes() {
	dir := c.dir.JoinName(statScopesDir)
	fsys.PruneOldest(c.sys, dir, statScopesKeep, c.base, func(name string) (fsys.AbsPath, bool) {
		return dir.JoinName(name).JoinName(statBaseFile), true
	})
}
