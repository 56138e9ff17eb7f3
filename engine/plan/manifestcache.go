package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// manifestCacheDir, in the stat cache's folder, holds the decoded form
// of each target manifest with the stat data of the file it was decoded
// from, one file per manifest, so an unchanged 10,000-entry manifest is not
// parsed as JSON again, and is read only when it is looked up (nothing of
// it stays in memory but the manifest decoded). It replaces only the
// parsing: the manifest is still looked up in the project's git index, and
// its schema version and every entry are checked exactly as a freshly
// parsed one ([ReadTargetManifestCached]). The cache lives in agentpack's
// own state folder, never in a project.
const manifestCacheDir = "manifests"

// legacyManifestCacheFile is the single file earlier versions kept every
// decoded manifest in, removed when a manifest is next cached.
const legacyManifestCacheFile = "manifests.bin"

const manifestCacheMagic = "agentpack manifest cache\n"

const manifestCacheVersion = 3 // 3: one file per manifest

// manifestBlobs is the part of a [StatCache] holding decoded manifests:
// a file per manifest path, named by the path's hash, holding the path,
// the stat data of the manifest it was decoded from and the decoded form.
// A blob is only used while that stat data is unchanged, and only recorded
// when it is not racy. What is recorded is written by save.
type manifestBlobs struct {
	dir fsys.AbsPath

	mu      sync.Mutex
	pending map[string][]byte // by path, the blob file recorded; nil: forgotten
}

// file is where path's blob lives.
func (b *manifestBlobs) file(path string) fsys.AbsPath {
	sum := sha256.Sum256([]byte(path))
	return b.dir.JoinName(hex.EncodeToString(sum[:12]) + ".bin")
}

// get returns the blob of path when d, path's stat data now, is the
// stat data it was recorded with.
func (b *manifestBlobs) get(sys fsys.System, path fsys.AbsPath, d fsys.StatData) ([]byte, bool) {
	b.mu.Lock()
	file, recorded := b.pending[path.String()]
	b.mu.Unlock()
	if !recorded {
		var err error
		if file, err = sys.ReadFile(b.file(path.String())); err != nil {
			return nil, false
		}
	}
	if file == nil {
		return nil, false
	}
	r, err := bincodec.Open(file, manifestCacheMagic, manifestCacheVersion)
	if err != nil {
		return nil, false
	}
	p := r.Bytes()
	stat := statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint()}
	data := r.Bytes()
	if r.Err != nil || len(r.B) != 0 || string(p) != path.String() || stat != entryFor(d, [32]byte{}, false) || stat.Ino == 0 {
		return nil, false
	}
	return data, true
}

// put records data for path, whose stat data before it was read was d,
// unless that is racy and not recent (see [StatCache.Record]); nil data or
// d forgets path.
func (b *manifestBlobs) put(path fsys.AbsPath, d *fsys.StatData, data []byte, recent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = map[string][]byte{}
	}
	if data == nil || d == nil {
		b.pending[path.String()] = nil
		return
	}
	e := entryFor(*d, [32]byte{}, false)
	if (!recent && racy(e)) || e.Ino == 0 {
		return
	}
	w := bincodec.NewWriter(manifestCacheMagic, manifestCacheVersion, len(path)+len(data)+64)
	w.String(path.String())
	w.Int(e.Size)
	w.Int(e.MtimeNS)
	w.Int(e.CtimeNS)
	w.Uint(e.Ino)
	w.Bytes(data)
	b.pending[path.String()] = w.Finish()
}

// save writes the blobs recorded and removes those forgotten.
func (b *manifestBlobs) save(sys fsys.System) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return
	}
	_ = sys.Remove(b.dir.Dir().JoinName(legacyManifestCacheFile))
	for path, file := range b.pending {
		target := b.file(path)
		if file == nil {
			if err := sys.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		} else if sys.MkdirAll(b.dir, 0o700) != nil || sys.WriteFile(target, file, 0o600) != nil {
			continue
		}
		delete(b.pending, path)
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
	c.manifests.put(path, fi, data, false)
}

// RecordManifest caches decoded ([DecodedManifestOf]) as the manifest a
// deploy has just written at path, whose stat data the write placed was d:
// the next plan decodes it instead of parsing the text. As with
// [StatCache.Record], d this recent is trusted only when distinct.
func (c *StatCache) RecordManifest(path fsys.AbsPath, d fsys.StatData, decoded []byte, distinct bool) {
	if c == nil || decoded == nil || d.MtimeNS%int64(time.Second) == 0 {
		return
	}
	c.manifests.put(path, &d, decoded, distinct)
}

// encodeManifest renders every field of m, nil lists told from empty
// ones, so a decoded manifest equals what encoding/json decoded. It is
// compact: a path shares its prefix with the one before, a sha256 in
// lowercase hex is 32 bytes, and module ids equal to the file before's
// are one byte.
func encodeManifest(m *TargetManifest) []byte {
	return encodeManifestOf(m, len(m.ManagedFiles), m.ManagedFiles == nil, func(i int) ManagedFile { return m.ManagedFiles[i] })
}

// encodeManifestOf is [encodeManifest] of m's head and the n entries
// file(i) makes (nil: a nil list), so the entries need not be held.
func encodeManifestOf(m *TargetManifest, n int, isNil bool, file func(i int) ManagedFile) []byte {
	w := &bincodec.Writer{B: make([]byte, 0, 256+n*64)}
	w.Int(int64(m.SchemaVersion))
	w.String(m.GeneratedAt)
	w.String(m.Tool)
	w.String(m.SnapshotID)
	w.String(m.Profile)
	w.String(m.Repo)
	w.Len(n, isNil)
	var prev ManagedFile
	for i := range n {
		f := file(i)
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
		kl := f.key()
		w.String(kl.Format)
		w.Strings(kl.Container)
		w.Len(len(kl.Entries), kl.Entries == nil)
		for _, e := range kl.Entries {
			w.String(e.Name)
			writeHash(w, e.SHA256)
			w.Strings(e.ModuleIDs)
		}
		w.Bool(kl.Created)
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
	// formats) are made once each, so nothing decoded keeps data (a file
	// of the cache) in memory.
	size := len(data) + n*64
	if share != nil {
		size = min(size, 64<<10) // most strings are the desired state's
	}
	strs := arena.New(size)
	in := interner{strs: arena.New(4 << 10), m: map[string]string{}}
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
			f.Path = strs.Join(prev.Path[:shared], suffix)
			f.SHA256, f.OwnedSHA256 = readHash(r, strs, nil), readHash(r, strs, nil)
		}
		if r.Bool() {
			// The previous file's list, capped so that an append makes a
			// copy: nothing changes a manifest's lists in place.
			f.ModuleIDs = slices.Clip(prev.ModuleIDs)
		} else {
			f.ModuleIDs = in.strings(r)
		}
		var kl KeyLevel
		kl.Format, kl.Container = in.string(r), in.strings(r)
		if n, isNil := r.Len(4); !isNil {
			kl.Entries = make([]ManagedEntry, n)
		}
		for j := range kl.Entries {
			kl.Entries[j] = ManagedEntry{Name: in.string(r), SHA256: readHash(r, strs, nil), ModuleIDs: in.strings(r)}
		}
		kl.Created = r.Bool()
		if kl.Format != "" || kl.Container != nil || kl.Entries != nil || kl.Created {
			f.KeyLevel = &kl
		}
		m.ManagedFiles[i] = f
		prev = f
	}
	if r.Err != nil || len(r.B) != 0 {
		return nil, bincodec.ErrDamaged
	}
	return m, nil
}

// interner makes each distinct string read once: a manifest names a few
// module ids and formats many times.
type interner struct {
	strs *arena.Arena
	m    map[string]string
}

// string reads a string written by [bincodec.Writer.String].
func (in *interner) string(r *bincodec.Reader) string {
	b := r.Bytes()
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := in.strs.Join("", b)
	in.m[s] = s
	return s
}

// strings reads a list written by [bincodec.Writer.Strings].
func (in *interner) strings(r *bincodec.Reader) []string {
	n, isNil := r.Len(1)
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = in.string(r)
	}
	return out
}

// writeHash writes a lowercase hex sha256 as its 32 bytes, anything else
// (a hand-edited manifest's) as it is.
func writeHash(w *bincodec.Writer, h string) {
	if raw, ok := checksum.ParseSHA256Hex(h); ok {
		w.Bool(true)
		w.B = append(w.B, raw[:]...)
		return
	}
	w.Bool(false)
	w.String(h)
}

// readHash reads what [writeHash] wrote: d's hash when it is the same
// (d may be nil), else a string made in strs.
func readHash(r *bincodec.Reader, strs *arena.Arena, d *desired.File) string {
	if r.Bool() {
		return sharedHash(d, r.Raw(32), strs)
	}
	return r.String()
}
