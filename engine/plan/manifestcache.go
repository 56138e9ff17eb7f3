package plan

import (
	"bytes"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/fsys"
)

// manifestCacheFile, in the stat cache's folder, holds the decoded form of
// each target manifest with the stat data of the file it was decoded from,
// so an unchanged 10,000-entry manifest is not parsed as JSON again. It
// replaces only the parsing: the manifest is still looked up in the
// project's git index, and its schema version and every entry are checked
// exactly as a freshly parsed one ([ReadTargetManifestCached]). The cache
// lives in agentpack's own state folder, never in a project.
const manifestCacheFile = "manifests.bin"

const manifestCacheMagic = "agentpack manifest cache\n"

// statBlobs is a part of a [StatCache] kept in a file of its own: bytes
// derived from a file or folder (a manifest's decoded form, a folder's
// listing), each with the stat data of what it was derived from. A blob is
// only used while that stat data is unchanged, and only recorded when it
// is not racy.
type statBlobs struct {
	path  fsys.AbsPath
	magic string

	once    sync.Once
	mu      sync.Mutex
	entries map[string]statBlob // by path
	dirty   bool
}

type statBlob struct {
	stat statEntry // no hash
	data []byte
}

const statBlobsVersion = 2 // 2: compact manifest entries

func (b *statBlobs) load(sys fsys.System) {
	b.once.Do(func() {
		b.entries = map[string]statBlob{}
		data, err := sys.ReadFile(b.path)
		if err != nil {
			return
		}
		r, err := bincodec.Open(data, b.magic, statBlobsVersion)
		if err != nil {
			return
		}
		n, _ := r.Len(6)
		out := make(map[string]statBlob, n)
		for range n {
			path := r.String()
			out[path] = statBlob{stat: statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint()}, data: r.Bytes()}
		}
		if r.Err == nil && len(r.B) == 0 {
			b.entries = out
		}
	})
}

// get returns the blob of path when d, path's stat data now, is the
// stat data it was recorded with.
func (b *statBlobs) get(sys fsys.System, path fsys.AbsPath, d fsys.StatData) ([]byte, bool) {
	b.load(sys)
	b.mu.Lock()
	e, ok := b.entries[path.String()]
	b.mu.Unlock()
	if !ok || e.stat != entryFor(d, [32]byte{}, false) || e.stat.Ino == 0 {
		return nil, false
	}
	return e.data, true
}

// put records data for path, whose stat data before it was read was d,
// unless that is racy; nil data or d forgets path.
func (b *statBlobs) put(sys fsys.System, path fsys.AbsPath, d *fsys.StatData, data []byte) {
	b.load(sys)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, had := b.entries[path.String()]; data == nil || d == nil {
		if had {
			delete(b.entries, path.String())
			b.dirty = true
		}
		return
	}
	e := entryFor(*d, [32]byte{}, false)
	if racy(e) || e.Ino == 0 {
		return
	}
	if old, ok := b.entries[path.String()]; ok && old.stat == e && bytes.Equal(old.data, data) {
		return
	}
	b.entries[path.String()] = statBlob{stat: e, data: data}
	b.dirty = true
}

// save writes the blobs when one was recorded or forgotten.
func (b *statBlobs) save(sys fsys.System) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.dirty {
		return
	}
	size := 64
	for _, e := range b.entries {
		size += len(e.data) + 64
	}
	w := bincodec.NewWriter(b.magic, statBlobsVersion, size)
	w.Len(len(b.entries), false)
	for path, e := range b.entries {
		w.String(path)
		w.Int(e.stat.Size)
		w.Int(e.stat.MtimeNS)
		w.Int(e.stat.CtimeNS)
		w.Uint(e.stat.Ino)
		w.Bytes(e.data)
	}
	if sys.MkdirAll(b.path.Dir(), 0o700) == nil && sys.WriteFile(b.path, w.Finish(), 0o600) == nil {
		b.dirty = false
	}
}

// manifest returns the decoded manifest cached for path when path's stat
// data (following links, as reading it does) is unchanged, with that stat
// data; nil when there is none or it is stale. fi is nil when the Stat
// failed.
func (c *StatCache) manifest(path fsys.AbsPath) (m *TargetManifest, fi *fsys.StatData) {
	return c.sharedManifest(path, nil)
}

// sharedManifest is [StatCache.manifest], sharing the path and hash
// strings of the entries share's desired state also has (share may be nil).
func (c *StatCache) sharedManifest(path fsys.AbsPath, share *sharer) (m *TargetManifest, fi *fsys.StatData) {
	if c == nil {
		return nil, nil
	}
	d, err := fsys.StatDataFollow(c.sys, path)
	if err != nil {
		return nil, nil
	}
	data, ok := c.manifests.get(c.sys, path, d)
	if !ok {
		return nil, &d
	}
	if m, err = decodeManifest(data, share); err != nil {
		return nil, &d
	}
	return m, &d
}

// recordManifest caches m, as decoded from path whose stat data before the
// read was fi, unless that stat data is racy; m nil forgets path.
func (c *StatCache) recordManifest(path fsys.AbsPath, fi *fsys.StatData, m *TargetManifest) {
	if c == nil {
		return
	}
	var data []byte
	if m != nil {
		data = encodeManifest(m)
	}
	c.manifests.put(c.sys, path, fi, data)
}

// encodeManifest renders every field of m, nil lists told from empty
// ones, so a decoded manifest equals what encoding/json decoded. It is
// compact: a path shares its prefix with the one before, a sha256 in
// lowercase hex is 32 bytes, and module ids equal to the file before's
// are one byte.
func encodeManifest(m *TargetManifest) []byte {
	w := &bincodec.Writer{B: make([]byte, 0, 256+len(m.ManagedFiles)*64)}
	w.Int(int64(m.SchemaVersion))
	w.String(m.GeneratedAt)
	w.String(m.Tool)
	w.String(m.SnapshotID)
	w.String(m.Profile)
	w.String(m.Repo)
	w.Len(len(m.ManagedFiles), m.ManagedFiles == nil)
	var prev ManagedFile
	for _, f := range m.ManagedFiles {
		shared := commonPrefix(prev.Path, f.Path)
		w.Uint(uint64(shared))
		w.String(f.Path[shared:])
		writeHash(w, f.SHA256)
		writeHash(w, f.OwnedSHA256)
		same := slices.Equal(f.ModuleIDs, prev.ModuleIDs) && (f.ModuleIDs == nil) == (prev.ModuleIDs == nil)
		w.Bool(same)
		if !same {
			w.Strings(f.ModuleIDs)
		}
		w.String(f.Format)
		w.Strings(f.Container)
		w.Len(len(f.Entries), f.Entries == nil)
		for _, e := range f.Entries {
			w.String(e.Name)
			writeHash(w, e.SHA256)
			w.Strings(e.ModuleIDs)
		}
		w.Bool(f.Created)
		prev = f
	}
	return w.B
}

// decodeManifest decodes what [encodeManifest] wrote; an entry the
// desired state also has shares its path and hash strings (share may be
// nil).
func decodeManifest(data []byte, share *sharer) (*TargetManifest, error) {
	r := &bincodec.Reader{B: data}
	m := &TargetManifest{SchemaVersion: int(r.Int()), GeneratedAt: r.String(), Tool: r.String(), SnapshotID: r.String(), Profile: r.String(), Repo: r.String()}
	n, isNil := r.Len(8)
	if !isNil {
		m.ManagedFiles = make([]ManagedFile, n)
	}
	// Paths and hashes go into one arena; other strings (module ids,
	// formats) are parts of data, a blob of the cache file that nothing
	// changes.
	size := len(data) + n*64
	if share != nil {
		size = min(size, 64<<10) // most strings are the desired state's
	}
	strs := newArena(size)
	r.Share()
	var prev ManagedFile
	var buf []byte
	for i := range m.ManagedFiles {
		shared := r.Uint()
		if shared > uint64(len(prev.Path)) {
			return nil, bincodec.ErrDamaged
		}
		var f ManagedFile
		suffix := r.Bytes()
		buf = append(append(buf[:0], prev.Path[:shared]...), suffix...)
		if d := sharedFile(share, buf); d != nil {
			f.Path = string(d.Path[len(share.root)+1:])
			f.SHA256, f.OwnedSHA256 = readHash(r, strs, d), readHash(r, strs, nil)
		} else {
			f.Path = strs.join(prev.Path[:shared], suffix)
			f.SHA256, f.OwnedSHA256 = readHash(r, strs, nil), readHash(r, strs, nil)
		}
		if r.Bool() {
			f.ModuleIDs = slices.Clone(prev.ModuleIDs) // not shared: as decoded from JSON
		} else {
			f.ModuleIDs = r.Strings()
		}
		f.Format, f.Container = r.String(), r.Strings()
		if n, isNil := r.Len(4); !isNil {
			f.Entries = make([]ManagedEntry, n)
		}
		for j := range f.Entries {
			f.Entries[j] = ManagedEntry{Name: r.String(), SHA256: readHash(r, strs, nil), ModuleIDs: r.Strings()}
		}
		f.Created = r.Bool()
		m.ManagedFiles[i] = f
		prev = f
	}
	if r.Err != nil || len(r.B) != 0 {
		return nil, bincodec.ErrDamaged
	}
	return m, nil
}

// writeHash writes a lowercase hex sha256 as its 32 bytes, anything else
// (a hand-edited manifest's) as it is.
func writeHash(w *bincodec.Writer, h string) {
	var raw [32]byte
	if n, err := hex.Decode(raw[:], []byte(h)); err == nil && n == 32 && hex.EncodeToString(raw[:]) == h {
		w.Bool(true)
		w.B = append(w.B, raw[:]...)
		return
	}
	w.Bool(false)
	w.String(h)
}

// readHash reads what [writeHash] wrote: d's hash when it is the same
// (d may be nil), else a string made in strs.
func readHash(r *bincodec.Reader, strs *arena, d *desired.File) string {
	if r.Bool() {
		return sharedHash(d, r.Raw(32), strs)
	}
	return r.String()
}
