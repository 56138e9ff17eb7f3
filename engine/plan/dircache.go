package plan

import (
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
