// Package arena makes many small strings out of a few large buffers
// instead of an allocation each: decoding a cache of 100,000 entries makes
// hundreds of thousands of paths and hashes, which are then a few dozen
// allocations (not one each, rounded up to its size class, each a pointer
// for the collector to follow).
package arena

import (
	"encoding/hex"
	"strings"
)

// Arena hands out strings from its buffers. A string it returned never
// changes: a buffer is only appended to, and a full one is left to the
// strings that point into it while the next strings go to a new one.
type Arena struct {
	b     strings.Builder
	chunk int // the size of each buffer
}

// New returns an arena that allocates size bytes at a time (4 KiB at
// least).
func New(size int) *Arena { return &Arena{chunk: max(size, 4<<10)} }

// room makes sure the current buffer has n bytes free.
func (a *Arena) room(n int) {
	if a.b.Cap()-a.b.Len() < n {
		a.b = strings.Builder{}
		a.b.Grow(max(n, a.chunk))
	}
}

// Join is prefix followed by suffix.
func (a *Arena) Join(prefix string, suffix []byte) string {
	a.room(len(prefix) + len(suffix))
	start := a.b.Len()
	a.b.WriteString(prefix)
	a.b.Write(suffix)
	return a.b.String()[start:]
}

// Concat is parts, one after the other.
func (a *Arena) Concat(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	a.room(n)
	start := a.b.Len()
	for _, p := range parts {
		a.b.WriteString(p)
	}
	return a.b.String()[start:]
}

// Hex is raw (at most its first 32 bytes) in lowercase hex.
func (a *Arena) Hex(raw []byte) string {
	var buf [64]byte
	n := hex.Encode(buf[:], raw[:min(len(raw), 32)])
	a.room(n)
	start := a.b.Len()
	a.b.Write(buf[:n])
	return a.b.String()[start:]
}
