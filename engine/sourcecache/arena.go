package sourcecache

import (
	"encoding/hex"
	"strings"
)

// arena makes many small strings in a few large buffers: a decoded desired
// state's 100,000 paths and hashes are then a few dozen allocations, not
// 200,000 (each rounded up to its size class, each a pointer for the
// collector to follow).
type arena struct {
	b     strings.Builder
	chunk int // the size of each buffer
}

// newArena returns an arena that allocates size bytes at a time.
func newArena(size int) *arena { return &arena{chunk: max(size, 4<<10)} }

// take is n bytes' room at the end of the current buffer, a new one when
// it has not that much left.
func (a *arena) take(n int) {
	if a.b.Cap()-a.b.Len() < n {
		a.b = strings.Builder{}
		a.b.Grow(max(n, a.chunk))
	}
}

// join is prefix followed by suffix.
func (a *arena) join(prefix string, suffix []byte) string {
	a.take(len(prefix) + len(suffix))
	start := a.b.Len()
	a.b.WriteString(prefix)
	a.b.Write(suffix)
	return a.b.String()[start:]
}

// hex is raw in lowercase hex.
func (a *arena) hex(raw []byte) string {
	var buf [64]byte
	n := hex.Encode(buf[:], raw[:min(len(raw), 32)])
	a.take(n)
	start := a.b.Len()
	a.b.Write(buf[:n])
	return a.b.String()[start:]
}
