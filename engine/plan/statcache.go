package plan

import (
	"bytes"
	"encoding/gob"
	"io/fs"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// statCacheFile holds (size, mtime, inode) → sha256 of managed files, so
// plan and status do not re-read and re-hash files that did not change. It
// is gob, not JSON: it is read on every plan, and decoding 10,000 JSON
// entries cost more than the reads it saves.
const statCacheFile = "statcache.v2.gob"

// StatCache remembers the hash of files by their stat identity.
type StatCache struct {
	sys     fsys.System
	path    fsys.AbsPath
	mu      sync.Mutex
	entries map[string]statEntry // by fsys.AbsPath; string keeps the gob file's type
	dirty   bool
}

type statEntry struct {
	Size    int64
	MtimeNS int64
	CtimeNS int64
	Ino     uint64
	SHA256  string
}

// racyWindow: a file changed this recently may change again within the same
// timestamp tick without its stat changing (git's "racy clean" problem), so
// it is not cached until it is older.
const racyWindow = 100 * time.Millisecond

// LoadStatCache reads, with sys, the cache kept in stateDir; a missing or
// damaged one is empty. [StatCache.Save] writes it back with sys.
// StatCachePath is where the stat cache of stateDir lives; read-only
// commands may still write it.
func StatCachePath(stateDir fsys.AbsPath) fsys.AbsPath { return stateDir.JoinName(statCacheFile) }

func LoadStatCache(sys fsys.System, stateDir fsys.AbsPath) *StatCache {
	c := &StatCache{sys: sys, path: stateDir.JoinName(statCacheFile), entries: map[string]statEntry{}}
	if data, err := sys.ReadFile(c.path); err == nil {
		if gob.NewDecoder(bytes.NewReader(data)).Decode(&c.entries) != nil || c.entries == nil {
			c.entries = map[string]statEntry{} // a damaged cache only costs speed
		}
	}
	return c
}

func entryFor(fi fs.FileInfo, sha string) statEntry {
	ctime, ino := fsys.ChangeTimeInode(fi)
	return statEntry{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), CtimeNS: ctime, Ino: ino, SHA256: sha}
}

// lookup returns the cached hash of path when its stat identity is unchanged.
func (c *StatCache) lookup(path fsys.AbsPath, fi fs.FileInfo) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	e, ok := c.entries[path.String()]
	c.mu.Unlock()
	want := entryFor(fi, e.SHA256)
	return e.SHA256, ok && e == want && want.Ino != 0
}

// Record remembers path's hash, unless its mtime is too coarse or too recent
// to tell a later same-size edit apart (git's "racy clean" problem).
func (c *StatCache) Record(path fsys.AbsPath, fi fs.FileInfo, sha string) {
	if c == nil {
		return
	}
	e := entryFor(fi, sha)
	now := time.Now().UnixNano()
	if now-e.MtimeNS < int64(racyWindow) || now-e.CtimeNS < int64(racyWindow) {
		return
	}
	if fi.ModTime().Nanosecond() == 0 && now-e.MtimeNS < int64(2*time.Second) {
		return // whole-second timestamps: wait longer
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[path.String()]; !ok || old != e {
		c.entries[path.String()] = e
		c.dirty = true
	}
}

// Forget drops path (it was written or removed).
func (c *StatCache) Forget(path fsys.AbsPath) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[path.String()]; ok {
		delete(c.entries, path.String())
		c.dirty = true
	}
}

// Save writes the cache when it changed; failures only cost speed.
func (c *StatCache) Save() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(c.entries) != nil {
		return
	}
	data := buf.Bytes()
	if err := c.sys.MkdirAll(c.path.Dir(), 0o700); err != nil {
		return
	}
	if c.sys.WriteFile(c.path, data, 0o600) == nil {
		c.dirty = false
	}
}
