package sourcecache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// errDamaged is every decoding failure: the caller only needs to know the
// file cannot be used.
var errDamaged = bincodec.ErrDamaged

// errNoBytes refuses to encode a file that has neither bytes nor a source
// the entry's fingerprint covers: it could not be read back.
var errNoBytes = errors.New("sourcecache: a file has neither bytes nor a fingerprinted source")

// writer is a [bincodec.Stream] that also writes symbols: a cache file
// goes to its file as it is encoded, never whole in memory (7 MB at
// 100,000 files, on top of the load that made it).
type writer struct {
	*bincodec.Stream
	syms map[string]uint64
}

// newWriter starts a file of magic and version written to out.
func newWriter(out io.Writer, magic string, version byte) *writer {
	return &writer{Stream: bincodec.NewStream(out, magic, version)}
}

// sym writes s as a symbol: a repeated string is written once, then by
// its number (a file's target, root and module ids repeat across files).
func (w *writer) sym(s string) {
	if i, ok := w.syms[s]; ok {
		w.Uint(i + 1)
		return
	}
	if w.syms == nil {
		w.syms = map[string]uint64{}
	}
	w.syms[s] = uint64(len(w.syms))
	w.Uint(0)
	w.String(s)
}

// path writes s as the length of the prefix it shares with prev, the path
// written before it, and the rest: sorted paths differ in a few bytes.
func (w *writer) path(prev, s string) {
	k := 0
	for k < len(prev) && k < len(s) && prev[k] == s[k] {
		k++
	}
	w.Uint(uint64(k))
	w.String(s[k:])
}

// sha writes a hex sha256 as its 32 bytes, anything else as a string.
func (w *writer) sha(s string) {
	var sum [sha256.Size]byte
	if len(s) == 2*sha256.Size && checksum.IsLowerHex(s) {
		if _, err := hex.Decode(sum[:], []byte(s)); err == nil {
			w.Bool(true)
			w.B = append(w.B, sum[:]...)
			return
		}
	}
	w.Bool(false)
	w.String(s)
}

// flags packs booleans into one number, the first in the lowest bit.
func flags(bs ...bool) uint64 {
	var v uint64
	for i, b := range bs {
		if b {
			v |= 1 << i
		}
	}
	return v
}

// reader is a [bincodec.Reader] that also reads symbols; the first
// problem sticks in Err and every later read returns zero values, so
// callers check Err once.
type reader struct {
	*bincodec.Reader
	syms []string
}

// str reads a string that outlives the decoding (a desired state's): a
// copy, where a part of data would keep the whole file in memory (700
// KB at 10,000 files) for a few module ids.
func (r *reader) str() string { return strings.Clone(r.String()) }

// strs is [reader.str] for a list.
func (r *reader) strs() []string {
	out := r.Strings()
	for i, s := range out {
		out[i] = strings.Clone(s)
	}
	return out
}

// path reads a path written by writer.path after prev, made in strs.
func (r *reader) path(strs *arena.Arena, prev string) string {
	k := r.Uint()
	if k > uint64(len(prev)) {
		r.Fail()
		return ""
	}
	return strs.Join(prev[:k], r.Bytes())
}

// sha reads what writer.sha wrote, made in strs.
func (r *reader) sha(strs *arena.Arena) string {
	if r.Bool() {
		return strs.Hex(r.Raw(sha256.Size))
	}
	return strs.Join("", r.Bytes())
}

// sym reads a symbol written by writer.sym; a repeated one shares the
// first one's string.
func (r *reader) sym() string {
	i := r.Uint()
	if i == 0 {
		s := r.str()
		r.syms = append(r.syms, s)
		return s
	}
	if i > uint64(len(r.syms)) {
		r.Fail()
		return ""
	}
	return r.syms[i-1]
}

// fingerprint writes fp's entries. Sorted paths share long prefixes, and
// files written together have close times and inode numbers: each entry
// is written as what differs from the one before.
func (w *writer) fingerprint(fp []fsys.FingerprintEntry) {
	w.Uint(uint64(len(fp)))
	var prev fsys.FingerprintEntry
	for _, f := range fp {
		w.path(string(prev.Path), string(f.Path))
		w.Uint(flags(f.Follow, f.Listed, f.Missing))
		w.Uint(uint64(f.Mode))
		w.Int(f.Size)
		w.Int(f.MtimeNS - prev.MtimeNS)
		w.Int(f.CtimeNS - prev.CtimeNS)
		w.Int(int64(f.Ino - prev.Ino))
		prev = f
		w.Flush()
	}
}

// Stamp is a fingerprint as a cache file keeps it, still encoded:
// [Stamp.Unchanged] checks it against the disk a few thousand entries at
// a time, so checking 200,000 paths never holds them all decoded (26 MB
// at 100,000 files).
type Stamp struct {
	n int
	b []byte // the encoded entries, a part of the file's data
}

// stampChunk is how many entries [Stamp.Unchanged] decodes at a time:
// each part is stat'ed while the next is decoded ([fsys.ChangesAmong]).
const stampChunk = fsys.FingerprintPart

// stamp reads what [writer.fingerprint] wrote without decoding it: the
// entries are only stepped over. ok is false when they cannot be right.
func (r *reader) stamp() (s Stamp, ok bool) {
	n := r.Uint()
	if n > uint64(len(r.B)) {
		return Stamp{}, false
	}
	start := r.B
	for range n {
		r.Uint()  // the shared prefix
		r.Bytes() // the rest of the path: a part of data, not a copy
		r.Uint()
		r.Uint()
		r.Int()
		r.Int()
		r.Int()
		r.Int()
	}
	if r.Err != nil {
		return Stamp{}, false
	}
	return Stamp{n: int(n), b: start[:len(start)-len(r.B)]}, true
}

// Len is the number of paths s describes.
func (s Stamp) Len() int { return s.n }

// Unchanged reports whether every path s describes still has the same
// stat data on sys ([fsys.Fingerprint.Unchanged]), decoding s a chunk at
// a time.
func (s Stamp) Unchanged(sys fsys.System) bool {
	_, ok := s.Changes(sys, 0, nil)
	return ok
}

// Changes is [fsys.Fingerprint.Changes] of s, decoding it a chunk at a
// time: what moved among the paths s describes, as they are now.
func (s Stamp) Changes(sys fsys.System, limit int, accept func(was, now fsys.FingerprintEntry) bool) (changed []fsys.FingerprintEntry, ok bool) {
	return s.ChangesMoved(sys, "", "", nil, limit, accept)
}

// ChangesMoved is [Stamp.Changes] for paths moved from the folder from to
// the folder to (none when from is ""): an entry at or below from is
// checked at the same place below to, or not at all when skip says so.
func (s Stamp) ChangesMoved(sys fsys.System, from, to fsys.AbsPath, skip func(fsys.AbsPath) bool, limit int, accept func(was, now fsys.FingerprintEntry) bool) (changed []fsys.FingerprintEntry, ok bool) {
	return fsys.ChangesAmong(sys, s.n, func(fn func([]fsys.FingerprintEntry) bool) bool {
		return s.each(func(chunk []fsys.FingerprintEntry) bool {
			kept := chunk[:0]
			for _, e := range chunk {
				if from != "" && from.Contains(e.Path) {
					if skip(e.Path) {
						continue
					}
					e.Path = to + e.Path[len(from):]
				}
				kept = append(kept, e)
			}
			return fn(kept)
		})
	}, limit, accept)
}

// Entries are all of s's entries decoded.
func (s Stamp) Entries() []fsys.FingerprintEntry {
	var out []fsys.FingerprintEntry
	s.each(func(chunk []fsys.FingerprintEntry) bool {
		out = append(out, chunk...)
		return true
	})
	return out
}

// each decodes s's entries and hands them to fn stampChunk at a time, in
// order, while fn returns true; false when fn did or s is damaged. Each
// chunk is a new slice whose paths share one new buffer: fn may keep
// them.
func (s Stamp) each(fn func([]fsys.FingerprintEntry) bool) bool {
	r := &bincodec.Reader{B: s.b}
	var prev fsys.FingerprintEntry
	for left := s.n; left > 0; {
		chunk := make([]fsys.FingerprintEntry, min(left, stampChunk))
		strs := arena.New(len(chunk) * 64)
		for i := range chunk {
			f := &chunk[i]
			k := r.Uint()
			if k > uint64(len(prev.Path)) {
				return false
			}
			f.Path = fsys.AbsPath(strs.Join(string(prev.Path[:k]), r.Bytes()))
			v := r.Uint()
			if v > 7 {
				return false
			}
			f.Follow, f.Listed, f.Missing = v&1 != 0, v&2 != 0, v&4 != 0
			f.Mode, f.Size = fs.FileMode(r.Uint()), r.Int()
			f.MtimeNS, f.CtimeNS = prev.MtimeNS+r.Int(), prev.CtimeNS+r.Int()
			f.Ino = prev.Ino + uint64(r.Int())
			prev = *f
		}
		if r.Err != nil || !fn(chunk) {
			return false
		}
		left -= len(chunk)
	}
	return true
}

// openKeyed opens a file of magic and version whose strings stay parts of
// data, and reads the key and fingerprint every such file starts with.
func openKeyed(data []byte, magic string, version byte) (r *reader, key string, fp Stamp, err error) {
	br, err := bincodec.Open(data, magic, version)
	if err != nil {
		return nil, "", Stamp{}, err
	}
	br.Share()
	r = &reader{Reader: br}
	key = r.String()
	fp, ok := r.stamp()
	if !ok {
		return nil, "", Stamp{}, errDamaged
	}
	return r, key, fp, nil
}
