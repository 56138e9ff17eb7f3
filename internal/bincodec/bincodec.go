// Package bincodec holds the primitives of agentpack's compact binary cache
// files: varints, length-prefixed byte strings and lists, and a framing of
// magic, version and CRC-32C that tells a torn or damaged file from a good
// one. A cache that fails to decode is ignored and rebuilt; it only costs
// speed.
package bincodec

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync"
	"unsafe"
)

// ErrDamaged is every decoding failure: callers only need to know the file
// cannot be used.
var ErrDamaged = errors.New("bincodec: damaged cache file")

// castagnoli is the CRC-32C table, made on first use: making it costs
// every process 0.1 ms of package init, cache or not.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Writer appends the primitives: unsigned and signed varints, and byte
// strings and lists prefixed by their length plus one, 0 being nil (so a
// nil list and an empty one both round-trip).
type Writer struct{ B []byte }

// NewWriter starts a file with magic and version.
func NewWriter(magic string, version byte, capacity int) *Writer {
	w := &Writer{B: make([]byte, 0, capacity)}
	w.B = append(w.B, magic...)
	w.B = append(w.B, version)
	return w
}

// Finish appends the CRC-32C of everything written and returns the file.
func (w *Writer) Finish() []byte {
	return binary.BigEndian.AppendUint32(w.B, crc32.Checksum(w.B, castagnoli()))
}

// Uint appends an unsigned varint.
func (w *Writer) Uint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }

// Int appends a signed varint.
func (w *Writer) Int(v int64) { w.B = binary.AppendVarint(w.B, v) }

// Len appends a length, 0 standing for nil.
func (w *Writer) Len(n int, isNil bool) {
	if isNil {
		w.Uint(0)
	} else {
		w.Uint(uint64(n) + 1)
	}
}

// Bytes appends p with its length.
func (w *Writer) Bytes(p []byte) {
	w.Len(len(p), p == nil)
	w.B = append(w.B, p...)
}

// String appends s with its length.
func (w *Writer) String(s string) {
	w.Len(len(s), false)
	w.B = append(w.B, s...)
}

// Bool appends one byte, 0 or 1.
func (w *Writer) Bool(v bool) {
	if v {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

// Strings appends a list of strings.
func (w *Writer) Strings(ss []string) {
	w.Len(len(ss), ss == nil)
	for _, s := range ss {
		w.String(s)
	}
}

// Reader takes a file apart; the first problem sticks in Err and every
// later read returns zero values, so callers check Err once.
type Reader struct {
	B   []byte
	Err error
	// shared, after [Reader.Share], holds what B held then: B always ends
	// where it ends, so a string at B's start is a part of it.
	shared string
}

// Share makes every later String a part of the data itself instead of an
// allocation of its own: a file of thousands of strings decodes with
// none. The caller hands the data over: nothing may change its bytes
// afterwards (the strings would change with them), and the strings keep
// all of it in memory, so it suits a file whose strings are most of it.
func (r *Reader) Share() {
	if len(r.B) > 0 {
		r.shared = unsafe.String(&r.B[0], len(r.B))
	}
}

// Open checks data's magic, version and CRC-32C and returns a Reader of
// what lies between them.
func Open(data []byte, magic string, version byte) (*Reader, error) {
	if len(data) < len(magic)+1+4 || string(data[:len(magic)]) != magic || data[len(magic)] != version {
		return nil, ErrDamaged
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, castagnoli()) != binary.BigEndian.Uint32(sum) {
		return nil, ErrDamaged
	}
	return &Reader{B: body[len(magic)+1:]}, nil
}

// Fail marks the file damaged.
func (r *Reader) Fail() { r.Err, r.B = ErrDamaged, nil }

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Int reads a signed varint.
func (r *Reader) Int() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Len reads a length written by [Writer.Len], checking that at least min
// bytes per item remain, so a damaged length cannot make the decoder
// allocate gigabytes.
func (r *Reader) Len(min int) (n int, isNil bool) {
	v := r.Uint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(r.B)/max(min, 1)) {
		r.Fail()
		return 0, true
	}
	return int(v - 1), false
}

// Raw reads n bytes as a slice of the file's buffer, not a copy.
func (r *Reader) Raw(n int) []byte {
	if n > len(r.B) {
		r.Fail()
		return nil
	}
	p := r.B[:n:n]
	r.B = r.B[n:]
	return p
}

// Bytes reads a byte string as a slice of the file's buffer, not a copy.
func (r *Reader) Bytes() []byte {
	n, isNil := r.Len(1)
	if isNil {
		return nil
	}
	return r.Raw(n)
}

// String reads a string.
func (r *Reader) String() string {
	n, _ := r.Len(1)
	if r.shared != "" && n <= len(r.B) {
		at := len(r.shared) - len(r.B)
		r.B = r.B[n:]
		return r.shared[at : at+n]
	}
	return string(r.Raw(n))
}

// Bool reads one byte, 0 or 1.
func (r *Reader) Bool() bool {
	if len(r.B) == 0 || r.B[0] > 1 {
		r.Fail()
		return false
	}
	v := r.B[0] == 1
	r.B = r.B[1:]
	return v
}

// Strings reads a list of strings.
func (r *Reader) Strings() []string {
	n, isNil := r.Len(1)
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.String()
	}
	return out
}
