package plan

import (
	"encoding/hex"
	"strings"
)

// arena makes many small strings out of a few large buffers instead of an
// allocation each: decoding a 10,000-entry cache file makes tens of
// thousands of them. A string it returned never changes: a buffer is only
// appended to, and a full one is left to the strings that point into it
// while the next strings go to a new one.
type arena struct {
	b     strings.Builder
	chunk int // the size of each buffer after the first
}

// newArena returns an arena with room for size bytes, growing by size
// again when they are used up.
func newArena(size int) *arena {
	a := &arena{chunk: max(size, 4<<10)}
	a.b.Grow(size)
	return a
}

// room makes sure the current buffer has n bytes free.
func (a *arena) room(n int) {
	if a.b.Cap()-a.b.Len() < n {
		a.b = strings.Builder{}
		a.b.Grow(max(n, a.chunk))
	}
}

// join is prefix followed by suffix.
func (a *arena) join(prefix string, suffix []byte) string {
	a.room(len(prefix) + len(suffix))
	start := a.b.Len()
	a.b.WriteString(prefix)
	a.b.Write(suffix)
	return a.b.String()[start:]
}

// concat is parts, one after the other.
func (a *arena) concat(parts ...string) string {
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

// hex is raw in lowercase hex.
func (a *arena) hex(raw []byte) string {
	var buf [64]byte
	n := hex.Encode(buf[:], raw[:min(len(raw), 32)])
	a.room(n)
	start := a.b.Len()
	a.b.Write(buf[:n])
	return a.b.String()[start:]
}
