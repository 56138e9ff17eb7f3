package plan

import (
	"io/fs"
	"sync"

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

const (
	manifestCacheMagic   = "agentpack manifest cache\n"
	manifestCacheVersion = 1
)

// manifestCache is the part of a [StatCache] that holds manifests.
type manifestCache struct {
	path fsys.AbsPath

	once    sync.Once
	mu      sync.Mutex
	entries map[string]manifestCached // by manifest path
	dirty   bool
}

type manifestCached struct {
	stat statEntry // SHA256 unused
	data []byte    // encodeManifest
}

func (mc *manifestCache) load(sys fsys.System) {
	mc.entries = map[string]manifestCached{}
	data, err := sys.ReadFile(mc.path)
	if err != nil {
		return
	}
	r, err := bincodec.Open(data, manifestCacheMagic, manifestCacheVersion)
	if err != nil {
		return
	}
	n, _ := r.Len(6)
	out := make(map[string]manifestCached, n)
	for range n {
		path := r.String()
		e := manifestCached{stat: statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint()}, data: r.Bytes()}
		out[path] = e
	}
	if r.Err == nil && len(r.B) == 0 {
		mc.entries = out
	}
}

// manifest returns the decoded manifest cached for path when path's stat
// data (following links, as reading it does) is unchanged, with that stat
// data; nil when there is none or it is stale. fi is nil when the Stat
// failed.
func (c *StatCache) manifest(path fsys.AbsPath) (m *TargetManifest, fi fs.FileInfo) {
	if c == nil {
		return nil, nil
	}
	fi, err := c.sys.Stat(path)
	if err != nil {
		return nil, nil
	}
	mc := &c.manifests
	mc.once.Do(func() { mc.load(c.sys) })
	mc.mu.Lock()
	e, ok := mc.entries[path.String()]
	mc.mu.Unlock()
	if !ok || e.stat != entryFor(fi, "") || e.stat.Ino == 0 {
		return nil, fi
	}
	m, err = decodeManifest(e.data)
	if err != nil {
		return nil, fi
	}
	return m, fi
}

// recordManifest caches m, as decoded from path whose stat data before the
// read was fi, unless that stat data is racy; m nil forgets path.
func (c *StatCache) recordManifest(path fsys.AbsPath, fi fs.FileInfo, m *TargetManifest) {
	if c == nil {
		return
	}
	mc := &c.manifests
	mc.once.Do(func() { mc.load(c.sys) })
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if _, had := mc.entries[path.String()]; m == nil || fi == nil {
		if had {
			delete(mc.entries, path.String())
			mc.dirty = true
		}
		return
	}
	e := entryFor(fi, "")
	if racy(e, fi) || e.Ino == 0 {
		return
	}
	mc.entries[path.String()] = manifestCached{stat: e, data: encodeManifest(m)}
	mc.dirty = true
}

// save writes the manifest cache when a manifest was recorded or forgotten.
func (mc *manifestCache) save(sys fsys.System) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if !mc.dirty {
		return
	}
	size := 64
	for _, e := range mc.entries {
		size += len(e.data) + 64
	}
	w := bincodec.NewWriter(manifestCacheMagic, manifestCacheVersion, size)
	w.Len(len(mc.entries), false)
	for path, e := range mc.entries {
		w.String(path)
		w.Int(e.stat.Size)
		w.Int(e.stat.MtimeNS)
		w.Int(e.stat.CtimeNS)
		w.Uint(e.stat.Ino)
		w.Bytes(e.data)
	}
	if sys.MkdirAll(mc.path.Dir(), 0o700) == nil && sys.WriteFile(mc.path, w.Finish(), 0o600) == nil {
		mc.dirty = false
	}
}

// encodeManifest renders every field of m, nil lists told from empty
// ones, so a decoded manifest equals what encoding/json decoded.
func encodeManifest(m *TargetManifest) []byte {
	w := &bincodec.Writer{B: make([]byte, 0, 256+len(m.ManagedFiles)*128)}
	w.Int(int64(m.SchemaVersion))
	w.String(m.GeneratedAt)
	w.String(m.Tool)
	w.String(m.SnapshotID)
	w.String(m.Profile)
	w.String(m.Repo)
	w.Len(len(m.ManagedFiles), m.ManagedFiles == nil)
	for _, f := range m.ManagedFiles {
		w.String(f.Path)
		w.String(f.SHA256)
		w.String(f.OwnedSHA256)
		w.Strings(f.ModuleIDs)
		w.String(f.Format)
		w.Strings(f.Container)
		w.Len(len(f.Entries), f.Entries == nil)
		for _, e := range f.Entries {
			w.String(e.Name)
			w.String(e.SHA256)
			w.Strings(e.ModuleIDs)
		}
		w.Bool(f.Created)
	}
	return w.B
}

func decodeManifest(data []byte) (*TargetManifest, error) {
	r := &bincodec.Reader{B: data}
	m := &TargetManifest{SchemaVersion: int(r.Int()), GeneratedAt: r.String(), Tool: r.String(), SnapshotID: r.String(), Profile: r.String(), Repo: r.String()}
	if n, isNil := r.Len(8); !isNil {
		m.ManagedFiles = make([]ManagedFile, n)
	}
	for i := range m.ManagedFiles {
		f := ManagedFile{Path: r.String(), SHA256: r.String(), OwnedSHA256: r.String(), ModuleIDs: r.Strings(), Format: r.String(), Container: r.Strings()}
		if n, isNil := r.Len(4); !isNil {
			f.Entries = make([]ManagedEntry, n)
		}
		for j := range f.Entries {
			f.Entries[j] = ManagedEntry{Name: r.String(), SHA256: r.String(), ModuleIDs: r.Strings()}
		}
		f.Created = r.Bool()
		m.ManagedFiles[i] = f
	}
	if r.Err != nil || len(r.B) != 0 {
		return nil, bincodec.ErrDamaged
	}
	return m, nil
}
