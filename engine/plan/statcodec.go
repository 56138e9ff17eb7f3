package plan

import (
	"bytes"
	"io"
	"maps"
	"slices"

	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/bincodec"
)

// The stat cache's files (statcache.go) are bincodec files: magic, version,
// the base's generation (a base's own, a delta's the one it amends), the
// number of entries, then each
// entry sorted by path: the length of the path it shares with the previous
// one, the rest of the path, and either 0 (a delta's "forgotten") or 1,
// size, mtime, ctime, inode and the 32 bytes of the sha256.
const (
	statBaseMagic  = "agentpack stat cache\n"
	statDeltaMagic = "agentpack stat cache delta\n"
	statVersion    = 1
)

// encodeStatFile renders the entries named by keys; a key with no entry is
// written as forgotten. gen is the base's generation.
func encodeStatFile(magic string, gen uint64, entries map[string]statEntry, keys []string) []byte {
	var out bytes.Buffer
	_ = writeStatFile(&out, magic, gen, entries, keys)
	return out.Bytes()
}

// writeStatFile is encodeStatFile writing to out as it encodes.
func writeStatFile(out io.Writer, magic string, gen uint64, entries map[string]statEntry, keys []string) error {
	slices.Sort(keys)
	enc := newStatEncoder(out, magic, gen, len(keys))
	for _, k := range keys {
		enc.add(k, entries[k])
	}
	return enc.s.Close()
}

// writeMergedBase writes to out a new base of gen: the entries of the old
// base (a base file) that keepOld wants and neither foreign nor own names,
// and the hashed entries of foreign and own (own's first), merged in path
// order, without a map of the old base's entries or the new file whole in
// memory.
func writeMergedBase(out io.Writer, gen uint64, old []byte, keepOld func(path []byte) bool, foreign, own map[string]statEntry) error {
	entry := ownFirst(own, foreign)
	keys := slices.AppendSeq(slices.Collect(maps.Keys(own)), maps.Keys(foreign))
	slices.Sort(keys)
	keys = slices.Compact(keys)
	keys = slices.DeleteFunc(keys, func(k string) bool { e, _ := entry(k); return !e.Hashed })
	kept := func(path []byte, e statEntry) bool {
		_, named := entry(string(path))
		return e.Hashed && keepOld(path) && !named
	}
	n := len(keys)
	if walkStatFile(old, statBaseMagic, func(path []byte, e statEntry) {
		if kept(path, e) {
			n++
		}
	}) != nil {
		n, old = len(keys), nil // a damaged old base only loses its entries
	}
	enc := newStatEncoder(out, statBaseMagic, gen, n)
	add := func(k string) {
		e, _ := entry(k)
		enc.add(k, e)
	}
	next := 0
	_ = walkStatFile(old, statBaseMagic, func(path []byte, e statEntry) {
		if !kept(path, e) {
			return
		}
		for ; next < len(keys) && keys[next] < string(path); next++ {
			add(keys[next])
		}
		enc.add(string(path), e)
	})
	for _, k := range keys[next:] {
		add(k)
	}
	return enc.s.Close()
}

// ownFirst looks a path up in own, else in foreign: the scope's entries
// are newer than those a loaded delta held for outside it.
func ownFirst(own, foreign map[string]statEntry) func(path string) (statEntry, bool) {
	return func(path string) (statEntry, bool) {
		if e, ok := own[path]; ok {
			return e, true
		}
		e, ok := foreign[path]
		return e, ok
	}
}

// statEncoder writes a stat cache file's entries, given in path order.
type statEncoder struct {
	s    *bincodec.Stream
	prev string
}

func newStatEncoder(out io.Writer, magic string, gen uint64, n int) *statEncoder {
	s := bincodec.NewStream(out, magic, statVersion)
	s.Uint(gen)
	s.Len(n, false)
	return &statEncoder{s: s}
}

// add writes path's entry, as forgotten when it has no hash.
func (enc *statEncoder) add(path string, e statEntry) {
	w := &enc.s.Writer
	shared := commonPrefix(enc.prev, path)
	w.Uint(uint64(shared))
	w.String(path[shared:])
	enc.prev = path
	if !e.Hashed {
		w.Bool(false)
	} else {
		w.Bool(true)
		w.Int(e.Size)
		w.Int(e.MtimeNS)
		w.Int(e.CtimeNS)
		w.Uint(e.Ino)
		w.B = append(w.B, e.Sum[:]...)
	}
	enc.s.Flush()
}

// decodeStatFile adds a file's entries to out, a forgotten one with no
// hash, and returns the file's generation; with want set, only the entries
// whose path it wants. The paths are decoded into a few large strings, not
// one allocation each.
func decodeStatFile(data []byte, magic string, out map[string]statEntry, want func(path []byte) bool) (uint64, error) {
	size := len(data)
	if want != nil {
		size /= 8 // most entries may be left out; the arena grows if not
	}
	keys := arena.New(size)
	return walkStatFileGen(data, magic, func(path []byte, e statEntry) {
		if want == nil || want(path) {
			out[keys.Join("", path)] = e
		}
	})
}

// walkStatFile calls fn with each entry of a stat cache file, in path
// order; path is only valid during the call.
func walkStatFile(data []byte, magic string, fn func(path []byte, e statEntry)) error {
	_, err := walkStatFileGen(data, magic, fn)
	return err
}

func walkStatFileGen(data []byte, magic string, fn func(path []byte, e statEntry)) (uint64, error) {
	r, err := bincodec.Open(data, magic, statVersion)
	if err != nil {
		return 0, err
	}
	gen := r.Uint()
	n, _ := r.Len(2)
	var path []byte
	for range n {
		shared := r.Uint()
		suffix := r.Bytes()
		if r.Err != nil || shared > uint64(len(path)) {
			return 0, bincodec.ErrDamaged
		}
		path = append(path[:shared], suffix...)
		var e statEntry
		if r.Bool() {
			e = statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint(), Hashed: true}
			copy(e.Sum[:], r.Raw(32))
		}
		if r.Err != nil {
			return 0, r.Err
		}
		fn(path, e)
	}
	if r.Err != nil || len(r.B) != 0 || gen == 0 {
		return 0, bincodec.ErrDamaged
	}
	return gen, nil
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
