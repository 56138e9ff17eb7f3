package plan

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/fsys"
)

// dirCacheFile, in the stat cache's folder, holds the listing of folders
// below managed roots with the stat data of each folder: a folder's
// modification time moves whenever an entry is added, removed or renamed
// in it, so an unchanged folder need not be read again to look for files
// agentpack does not manage (status's "extra" files).
const dirCacheFile = "dirs.bin"

const dirCacheMagic = "agentpack folder cache\n"

// DirEntry is one entry of a listed folder.
type DirEntry struct {
	Name    string
	Dir     bool // a folder (not a link to one)
	Regular bool // a regular file
}

// ReadDirCached lists dir as sys.ReadDir does (sorted by name, following a
// link at dir itself), from cache when dir's stat data is unchanged since
// it was listed; cache may be nil. When guard (which may be nil) has seen
// dir to be a real folder, its look stands for dir's stat.
func ReadDirCached(sys fsys.System, cache *StatCache, guard *LinkGuard, dir fsys.AbsPath) ([]DirEntry, error) {
	if cache == nil {
		return readDir(sys, dir)
	}
	fi, ok := guard.Dir(dir)
	if !ok {
		var err error
		if fi, err = fsys.StatDataFollow(sys, dir); err != nil {
			return nil, err
		}
	}
	if data, ok := cache.dirs.get(sys, dir, fi); ok {
		if out, err := decodeDirEntries(data); err == nil {
			fsys.NoteListed(sys, dir)
			return out, nil
		}
	}
	out, err := readDir(sys, dir)
	if err != nil {
		return nil, err
	}
	// fi was taken before the listing: an entry added meanwhile leaves
	// stat data that no longer matches it.
	cache.dirs.put(sys, dir, &fi, encodeDirEntries(out))
	return out, nil
}

func readDir(sys fsys.System, dir fsys.AbsPath) ([]DirEntry, error) {
	entries, err := sys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, len(entries))
	for i, e := range entries {
		out[i] = DirEntry{Name: e.Name(), Dir: e.IsDir(), Regular: e.Type().IsRegular()}
	}
	return out, nil
}

func encodeDirEntries(es []DirEntry) []byte {
	w := &bincodec.Writer{B: make([]byte, 0, 8+len(es)*16)}
	w.Len(len(es), false)
	for _, e := range es {
		w.String(e.Name)
		w.Bool(e.Dir)
		w.Bool(e.Regular)
	}
	return w.B
}

func decodeDirEntries(data []byte) ([]DirEntry, error) {
	r := &bincodec.Reader{B: data}
	n, _ := r.Len(3)
	out := make([]DirEntry, n)
	for i := range out {
		out[i] = DirEntry{Name: r.String(), Dir: r.Bool(), Regular: r.Bool()}
	}
	if r.Err != nil || len(r.B) != 0 {
		return nil, bincodec.ErrDamaged
	}
	return out, nil
}

// statBlobs is a part of a [StatCache] kept in a file of its own: bytes
// derived from a folder (its listing), each with the stat data of what it
// was derived from. A blob is only used while that stat data is unchanged,
// and only recorded when it is not racy. The file is kept as read, its
// records sorted by path and looked up by binary search over their
// offsets, so 20,000 folders cost the file and four bytes each, not a map
// of them; what is recorded since waits in puts until save merges it in.
type statBlobs struct {
	path  fsys.AbsPath
	magic string

	once  sync.Once
	body  []byte   // the records of the file read
	index []uint32 // the offset in body of each record, in path order

	mu    sync.Mutex
	puts  map[string]*statBlob // by path, recorded since the load; nil: forgotten
	dirty bool
}

type statBlob struct {
	stat statEntry // no hash
	data []byte
}

const statBlobsVersion = 3 // 3: records sorted by path

func (b *statBlobs) load(sys fsys.System) {
	b.once.Do(func() {
		data, err := sys.ReadFile(b.path)
		if err != nil {
			return
		}
		r, err := bincodec.Open(data, b.magic, statBlobsVersion)
		if err != nil {
			return
		}
		n, _ := r.Len(6)
		body := r.B
		index := make([]uint32, n)
		var prev []byte
		for i := range index {
			if uint64(len(body)) > math.MaxUint32 {
				return
			}
			index[i] = uint32(len(body) - len(r.B))
			path := r.Bytes()
			r.Int()
			r.Int()
			r.Int()
			r.Uint()
			r.Bytes()
			if r.Err != nil || (i > 0 && bytes.Compare(prev, path) >= 0) {
				return // damaged, or not in path order
			}
			prev = path
		}
		if r.Err == nil && len(r.B) == 0 {
			b.body, b.index = body, index
		}
	})
}

// record decodes the record at off in b.body.
func (b *statBlobs) record(off uint32) (path []byte, e statBlob) {
	r := bincodec.Reader{B: b.body[off:]}
	path = r.Bytes()
	e.stat = statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint()}
	e.data = r.Bytes()
	return path, e
}

// find is the record of path in the file read.
func (b *statBlobs) find(path string) (statBlob, bool) {
	i, found := slices.BinarySearchFunc(b.index, path, func(off uint32, path string) int {
		p, _ := b.record(off)
		return strings.Compare(unsafe.String(unsafe.SliceData(p), len(p)), path)
	})
	if !found {
		return statBlob{}, false
	}
	_, e := b.record(b.index[i])
	return e, true
}

// get returns the blob of path when d, path's stat data now, is the
// stat data it was recorded with.
func (b *statBlobs) get(sys fsys.System, path fsys.AbsPath, d fsys.StatData) ([]byte, bool) {
	b.load(sys)
	b.mu.Lock()
	put, recorded := b.puts[path.String()]
	b.mu.Unlock()
	var e statBlob
	switch {
	case recorded && put == nil:
		return nil, false
	case recorded:
		e = *put
	default:
		var ok bool
		if e, ok = b.find(path.String()); !ok {
			return nil, false
		}
	}
	if e.stat != entryFor(d, [32]byte{}, false) || e.stat.Ino == 0 {
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
	if b.puts == nil {
		b.puts = map[string]*statBlob{}
	}
	if data == nil || d == nil {
		b.puts[path.String()] = nil
		b.dirty = true
		return
	}
	e := entryFor(*d, [32]byte{}, false)
	if racy(e) || e.Ino == 0 {
		return
	}
	b.puts[path.String()] = &statBlob{stat: e, data: data}
	b.dirty = true
}

// save writes the blobs when one was recorded or forgotten: the records
// of the file read that were not, and those recorded, in path order.
func (b *statBlobs) save(sys fsys.System) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.dirty {
		return
	}
	size, n := len(b.body)+64, 0
	b.merged(func(path string, e statBlob) {
		size += len(path) + len(e.data) + 64
		n++
	})
	w := bincodec.NewWriter(b.magic, statBlobsVersion, size)
	w.Len(n, false)
	b.merged(func(path string, e statBlob) {
		w.String(path)
		w.Int(e.stat.Size)
		w.Int(e.stat.MtimeNS)
		w.Int(e.stat.CtimeNS)
		w.Uint(e.stat.Ino)
		w.Bytes(e.data)
	})
	if sys.MkdirAll(b.path.Dir(), 0o700) == nil && sys.WriteFile(b.path, w.Finish(), 0o600) == nil {
		b.dirty = false
	}
}

// merged calls fn with every record save writes, in path order: those of
// the file read that were neither recorded nor forgotten since, and those
// recorded.
func (b *statBlobs) merged(fn func(path string, e statBlob)) {
	puts := slices.Sorted(maps.Keys(b.puts))
	next := 0
	put := func(p string) {
		if e := b.puts[p]; e != nil {
			fn(p, *e)
		}
	}
	for _, off := range b.index {
		path, e := b.record(off)
		for ; next < len(puts) && puts[next] < string(path); next++ {
			put(puts[next])
		}
		if _, recorded := b.puts[string(path)]; !recorded {
			fn(string(path), e)
		}
	}
	for _, p := range puts[next:] {
		put(p)
	}
}
