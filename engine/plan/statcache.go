package plan

import (
	"encoding/hex"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// statCacheDir holds the stat cache: (size, mtime, ctime, inode) → sha256
// of managed files, so plan and status do not re-read and re-hash files
// that did not change, and the parsed form of the target manifests
// (manifestcache.go). It is compact binary (statcodec.go), read on every
// plan: a base file holding every entry, and a delta holding what changed
// since, so a deploy that changes 100 of 10,000 files writes 100 entries,
// not 10,000. A damaged, unknown or mismatched file is ignored and rebuilt.
const statCacheDir = "statcache"

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

	mu      sync.RWMutex
	entries map[string]statEntry // by fsys.AbsPath
	baseGen uint64               // the generation of the base file loaded; 0: none
	inDelta map[string]bool      // the paths the delta file loaded holds
	changed map[string]bool      // the paths recorded or forgotten since

	// The files read, decoded at the first use ([StatCache.decode]) into
	// entries: only the entries below scope's roots when [StatCache.Scope]
	// set any, so a deploy of one project does not hold every other
	// project's entries. foreign holds the delta's entries outside them,
	// written back with the next delta; a new base rereads the old one's.
	once            sync.Once
	decoded         bool // once has run
	partial         bool // entries were decoded for a scope
	baseFile, delta []byte
	scope           []string
	foreign         map[string]statEntry

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

// LoadStatCache reads, with sys, the cache kept in stateDir; a missing or
// damaged one is empty. [StatCache.Save] writes it back with sys.
func LoadStatCache(sys fsys.System, stateDir fsys.AbsPath) *StatCache {
	c := &StatCache{sys: sys, dir: StatCachePath(stateDir), entries: map[string]statEntry{}, inDelta: map[string]bool{},
		changed: map[string]bool{}, foreign: map[string]statEntry{}}
	c.manifests = manifestBlobs{dir: c.dir.JoinName(manifestCacheDir)}
	c.dirs = statBlobs{path: c.dir.JoinName(dirCacheFile), magic: dirCacheMagic}
	if data, err := sys.ReadFile(c.dir.JoinName(statBaseFile)); err == nil {
		c.baseFile = data
		c.delta, _ = sys.ReadFile(c.dir.JoinName(statDeltaFile))
	}
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
}

// inScope reports whether path is below one of roots.
func inScope(roots []string, path []byte) bool {
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
		base, delta := c.baseFile, c.delta
		c.baseFile, c.delta = nil, nil
		if base == nil {
			return
		}
		want := c.wanted(false)
		var entries map[string]statEntry
		if want == nil {
			entries = make(map[string]statEntry, len(base)/64) // about one entry per 64 bytes
		} else {
			n := 0 // the scope's entries, counted first so the map is made at its size
			_ = walkStatFile(base, statBaseMagic, func(path []byte, _ statEntry) {
				if want(path) {
					n++
				}
			})
			entries = make(map[string]statEntry, n)
		}
		gen, err := decodeStatFile(base, statBaseMagic, entries, want)
		if err != nil {
			return // a damaged cache only costs speed
		}
		maps.DeleteFunc(entries, func(_ string, e statEntry) bool { return !e.Hashed }) // a base forgets nothing
		c.entries, c.baseGen, c.partial = entries, gen, want != nil
		// A delta written against another base (a compaction since) is
		// ignored: the base it amended is gone.
		amend := map[string]statEntry{}
		if gen, err := decodeStatFile(delta, statDeltaMagic, amend, nil); err != nil || gen != c.baseGen {
			return
		}
		for k, e := range amend {
			c.inDelta[k] = true
			switch {
			case want != nil && !want([]byte(k)):
				c.foreign[k] = e
			case !e.Hashed:
				delete(c.entries, k)
			default:
				c.entries[k] = e
			}
		}
	})
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
	e, ok := c.entries[path.String()]
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
	sum, ok := parseSHA256(want)
	if c == nil || !ok || d.Ino == 0 {
		return false
	}
	c.decode()
	c.mu.RLock()
	e, found := c.entries[path.String()]
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

// Record remembers path's hash, unless its stat data d (as
// [fsys.LstatData] takes it, with no fs.FileInfo) is racy.
func (c *StatCache) Record(path fsys.AbsPath, d fsys.StatData, sha string) {
	c.record(path, d, sha)
}

func (c *StatCache) record(path fsys.AbsPath, d fsys.StatData, sha string) {
	if c == nil {
		return
	}
	sum, ok := parseSHA256(sha)
	e := entryFor(d, sum, true)
	if racy(e) || !ok {
		return
	}
	c.decode()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[path.String()]; !ok || old != e {
		c.entries[path.String()] = e
		c.changed[path.String()] = true
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
	if _, ok := c.entries[path.String()]; ok {
		delete(c.entries, path.String())
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
	if c.sys.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	delta := maps.Clone(c.inDelta)
	maps.Copy(delta, c.changed)
	if c.baseGen == 0 || len(delta) > len(c.entries)/16+256 {
		// A new generation, so no delta written for an older base, even
		// one with the same entries, applies to it.
		gen := max(uint64(time.Now().UnixNano()), c.baseGen+1)
		write := func(w io.Writer) error { return c.writeBase(w, gen) }
		if fsys.WriteStream(c.sys, c.dir.JoinName(statBaseFile), 0o600, write) == nil {
			if c.baseGen == 0 {
				// The first base replaces the gob file of earlier versions.
				_ = c.sys.Remove(c.dir.Dir().JoinName(legacyStatCacheFile))
			}
			c.baseGen = gen
			clear(c.inDelta)
			clear(c.changed)
			clear(c.foreign)
		}
		return
	}
	// The delta's entries: the scope's, else the loaded delta's from
	// outside it (a key with neither is written as forgotten).
	entries := make(map[string]statEntry, len(delta))
	entry := ownFirst(c.entries, c.foreign)
	for k := range delta {
		if e, ok := entry(k); ok {
			entries[k] = e
		}
	}
	data := encodeStatFile(statDeltaMagic, c.baseGen, entries, slices.Collect(maps.Keys(delta)))
	if c.sys.WriteFile(c.dir.JoinName(statDeltaFile), data, 0o600) == nil {
		c.inDelta = delta
		clear(c.changed)
	}
}

// writeBase writes every entry as a base of gen: the scope's and, when
// the cache was decoded for a scope, the others of the base and delta
// loaded (the base read again, only now, and merged entry by entry).
func (c *StatCache) writeBase(w io.Writer, gen uint64) error {
	if !c.partial {
		return writeStatFile(w, statBaseMagic, gen, c.entries, slices.Collect(maps.Keys(c.entries)))
	}
	// Every entry is checked against the disk when used, so those of a
	// base another process wrote since are as good as the one loaded.
	old, _ := c.sys.ReadFile(c.dir.JoinName(statBaseFile))
	return writeMergedBase(w, gen, old, c.wanted(true), c.foreign, c.entries)
}

// parseSHA256 is the 32 bytes of s, a sha256 in lowercase hex (as
// agentpack renders every hash); ok is false for anything else.
func parseSHA256(s string) (sum [32]byte, ok bool) {
	if len(s) != 64 {
		return sum, false
	}
	for i := range sum {
		hi, ok1 := lowerHex(s[2*i])
		lo, ok2 := lowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return sum, false
		}
		sum[i] = hi<<4 | lo
	}
	return sum, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
