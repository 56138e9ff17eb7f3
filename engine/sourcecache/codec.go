package sourcecache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/fsys"
)

// errDamaged is every decoding failure: the caller only needs to know the
// file cannot be used.
var errDamaged = bincodec.ErrDamaged

// errNoBytes refuses to encode a file that has neither bytes nor a source
// the entry's fingerprint covers: it could not be read back.
var errNoBytes = errors.New("sourcecache: a file has neither bytes nor a fingerprinted source")

// writer is a [bincodec.Writer] that also writes symbols.
type writer struct {
	*bincodec.Writer
	syms map[string]uint64
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
	if len(s) == 2*sha256.Size && isLowerHex(s) {
		if _, err := hex.Decode(sum[:], []byte(s)); err == nil {
			w.Bool(true)
			w.B = append(w.B, sum[:]...)
			return
		}
	}
	w.Bool(false)
	w.String(s)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c-'0' > 9 && c-'a' > 5 {
			return false
		}
	}
	return true
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

// path reads a path written by writer.path after prev.
func (r *reader) path(prev string) string {
	k := r.Uint()
	if k > uint64(len(prev)) {
		r.Fail()
		return ""
	}
	if k == 0 {
		return r.str() // not a part of data: see [reader.str]
	}
	return prev[:k] + r.String()
}

// sha reads what writer.sha wrote.
func (r *reader) sha() string {
	if r.Bool() {
		return hex.EncodeToString(r.Raw(sha256.Size))
	}
	return r.str()
}

// unflags reads the three booleans flags packed.
func unflags(r *reader) (a, b, c bool) {
	v := r.Uint()
	if v > 7 {
		r.Fail()
	}
	return v&1 != 0, v&2 != 0, v&4 != 0
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
	}
}

// fingerprint reads what [writer.fingerprint] wrote; nil when the count
// cannot be right.
func (r *reader) fingerprint() []fsys.FingerprintEntry {
	n := r.Uint()
	if n > uint64(len(r.B)) {
		return nil
	}
	fp := make([]fsys.FingerprintEntry, n)
	var prev fsys.FingerprintEntry
	for i := range fp {
		f := &fp[i]
		f.Path = fsys.AbsPath(r.path(string(prev.Path)))
		f.Follow, f.Listed, f.Missing = unflags(r)
		f.Mode, f.Size = fs.FileMode(r.Uint()), r.Int()
		f.MtimeNS, f.CtimeNS = prev.MtimeNS+r.Int(), prev.CtimeNS+r.Int()
		f.Ino = prev.Ino + uint64(r.Int())
		prev = *f
	}
	return fp
}

// openKeyed opens a file of magic and version whose strings stay parts of
// data, and reads the key and fingerprint every such file starts with.
func openKeyed(data []byte, magic string, version byte) (r *reader, key string, fp []fsys.FingerprintEntry, err error) {
	br, err := bincodec.Open(data, magic, version)
	if err != nil {
		return nil, "", nil, err
	}
	br.Share()
	r = &reader{Reader: br}
	key = r.String()
	if fp = r.fingerprint(); fp == nil {
		return nil, "", nil, errDamaged
	}
	return r, key, fp, nil
}
