package sourcecache

import (
	"encoding/binary"
	"errors"
)

// errDamaged is every decoding failure: the caller only needs to know the
// file cannot be used.
var errDamaged = errors.New("sourcecache: damaged cache file")

// errNoBytes refuses to encode a file that has neither bytes nor a source
// the entry's fingerprint covers: it could not be read back.
var errNoBytes = errors.New("sourcecache: a file has neither bytes nor a fingerprinted source")

// writer appends the cache's primitives: unsigned and signed varints, and
// byte strings and lists prefixed by their length plus one, 0 being nil
// (a nil list renders as JSON null, an empty one as []: both round-trip).
type writer struct {
	b    []byte
	syms map[string]uint64
}

// sym writes s as a symbol: a repeated string is written once, then by
// its number (a file's target, root and module ids repeat across files).
func (w *writer) sym(s string) {
	if i, ok := w.syms[s]; ok {
		w.uint(i + 1)
		return
	}
	if w.syms == nil {
		w.syms = map[string]uint64{}
	}
	w.syms[s] = uint64(len(w.syms))
	w.uint(0)
	w.string(s)
}

func (w *writer) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) bytes(p []byte) {
	w.len(len(p), p == nil)
	w.b = append(w.b, p...)
}
func (w *writer) len(n int, isNil bool) {
	if isNil {
		w.uint(0)
	} else {
		w.uint(uint64(n) + 1)
	}
}
func (w *writer) string(s string) {
	w.len(len(s), false)
	w.b = append(w.b, s...)
}
func (w *writer) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *writer) strings(ss []string) {
	w.len(len(ss), ss == nil)
	for _, s := range ss {
		w.string(s)
	}
}

// reader takes a cache file apart; the first problem sticks in err and
// every later read returns zero values, so callers check err once.
type reader struct {
	b    []byte
	err  error
	syms []string
}

// sym reads a symbol written by writer.sym; a repeated one shares the
// first one's string.
func (r *reader) sym() string {
	i := r.uint()
	if i == 0 {
		s := r.string()
		r.syms = append(r.syms, s)
		return s
	}
	if i > uint64(len(r.syms)) {
		r.fail()
		return ""
	}
	return r.syms[i-1]
}

func (r *reader) fail() { r.err, r.b = errDamaged, nil }

func (r *reader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// len reads a length written by writer.len, checking that at least min
// bytes per item remain, so a damaged length cannot make the decoder
// allocate gigabytes.
func (r *reader) len(min int) (n int, isNil bool) {
	v := r.uint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(r.b)/max(min, 1)) {
		r.fail()
		return 0, true
	}
	return int(v - 1), false
}

// bytes returns a slice of the file's buffer, not a copy: the decoded
// state keeps the buffer alive instead of copying every file's bytes.
func (r *reader) bytes() []byte {
	n, isNil := r.len(1)
	if isNil {
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) string() string {
	n, _ := r.len(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) bool() bool {
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *reader) strings() []string {
	n, isNil := r.len(1)
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.string()
	}
	return out
}
