package plan

import (
	"encoding/hex"
	"strings"
)

// arena makes many small strings out of one growing buffer instead of an
// allocation each: decoding a 10,000-entry cache file makes tens of
// thousands of them. A string it returned never changes (the buffer is
// only appended to; growing it copies, and the old one stays with the
// strings that point into it).
type arena struct{ b strings.Builder }

// newArena returns an arena with room for size bytes.
func newArena(size int) *arena {
	a := &arena{}
	a.b.Grow(size)
	return a
}

// join is prefix followed by suffix.
func (a *arena) join(prefix string, suffix []byte) string {
	start := a.b.Len()
	a.b.WriteString(prefix)
	a.b.Write(suffix)
	return a.b.String()[start:]
}

// concat is parts, one after the other.
func (a *arena) concat(parts ...string) string {
	start := a.b.Len()
	for _, p := range parts {
		a.b.WriteString(p)
	}
	return a.b.String()[start:]
}

// hex is raw in lowercase hex.
func (a *arena) hex(raw []byte) string {
	var buf [64]byte
	n := hex.Encode(buf[:], raw[:min(len(raw), 32)])
	start := a.b.Len()
	a.b.Write(buf[:n])
	return a.b.String()[start:]
}
