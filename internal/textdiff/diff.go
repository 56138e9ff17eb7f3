package textdiff

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/agentpack/agentpack/internal/jsonstream"
)

// Diff is a unified diff as [Unified] renders it, written out only when it
// is shown: the diff of a created or deleted file is every line of the
// file, so it keeps the file's bytes (which the caller holds anyway) and
// writes the diff from them, instead of holding a second copy of each of
// 10,000 created files. The zero Diff is no diff.
type Diff struct {
	text string // a line diff, written whole
	// A one-sided diff: the header naming from and to, then every line of
	// side with sign before it (sign 0: no lines, the same file twice).
	oneSided bool
	sign     byte
	from, to string
	lines    int
	side     []byte
	// size is side's length and noEOL whether it ends without a newline,
	// kept for a diff whose side was let go of ([Diff.Dropped]) and is
	// read again by load when the diff is written.
	size  int
	noEOL bool
	load  func() ([]byte, error)
}

// UnifiedDiff is [Unified] as a [Diff]: ok=false for binary input or a
// diff over MaxBytes. The diff of a created or deleted file is sized, not
// built.
func UnifiedDiff(fromName, toName string, a, b []byte) (Diff, bool) {
	if !isText(a) || !isText(b) {
		return Diff{}, false
	}
	if len(a) == 0 || len(b) == 0 || string(a) == string(b) {
		d := oneSidedDiff(fromName, toName, a, b)
		return d, d.sign == 0 || d.Len() <= MaxBytes
	}
	s, ok := lineDiff(fromName, toName, a, b, MaxBytes)
	return Diff{text: s}, ok
}

// Text is the Diff whose text is s.
func Text(s string) Diff { return Diff{text: s} }

// oneSidedDiff is the unified diff of a and b when one is empty or both
// are the same.
func oneSidedDiff(fromName, toName string, a, b []byte) Diff {
	d := Diff{oneSided: true, from: fromName, to: toName}
	if string(a) == string(b) {
		return d
	}
	d.sign, d.side = '+', b
	if len(b) == 0 {
		d.sign, d.side = '-', a
	}
	d.lines = bytes.Count(d.side, []byte{'\n'})
	d.size, d.noEOL = len(d.side), d.side[len(d.side)-1] != '\n'
	if d.noEOL {
		d.lines++
	}
	return d
}

// Dropped is d without the bytes of the created or deleted file it shows,
// which load reads again when d is written: a diff of 100,000 created
// files need not hold them all. Bytes load cannot read, or that are not
// the same length, are written as a line saying so instead of the file's
// lines. Any other diff is d.
func (d Diff) Dropped(load func() ([]byte, error)) Diff {
	if !d.oneSided || d.sign == 0 {
		return d
	}
	d.side, d.load = nil, load
	return d
}

// Reloads reports whether d reads its file's bytes again when written
// ([Diff.Dropped]).
func (d Diff) Reloads() bool { return d.load != nil }

// sideBytes is the file's bytes a one-sided diff shows, read again when
// they were dropped; ok is false when they cannot be.
func (d Diff) sideBytes() (side []byte, ok bool) {
	if d.load == nil {
		return d.side, true
	}
	side, err := d.load()
	return side, err == nil && len(side) == d.size
}

// changedNote stands for the lines of a dropped diff whose file changed
// before it was written.
const changedNote = "# the file changed while its diff was shown: run the command again\n"

// IsZero reports whether d is no diff (encoding/json's omitzero).
func (d Diff) IsZero() bool { return d.text == "" && !d.oneSided }

// Len is the length of d's text.
func (d Diff) Len() int {
	if !d.oneSided {
		return len(d.text)
	}
	n := len("--- \n+++ \n") + len(d.from) + len(d.to)
	if d.sign != 0 {
		n += len(d.hunkHeader(nil)) + d.size + d.lines
		if d.noEOL {
			n += 1 + len(noNewline)
		}
	}
	return n
}

// String is d's text.
func (d Diff) String() string {
	if !d.oneSided {
		return d.text
	}
	return string(d.Append(make([]byte, 0, d.Len())))
}

// Append appends d's text to dst.
func (d Diff) Append(dst []byte) []byte {
	if !d.oneSided {
		return append(dst, d.text...)
	}
	dst = d.header(dst)
	if d.sign == 0 {
		return dst
	}
	dst = d.hunkHeader(dst)
	side, ok := d.sideBytes()
	if !ok {
		return append(dst, changedNote...)
	}
	for text := side; len(text) > 0; {
		i := bytes.IndexByte(text, '\n')
		dst = append(dst, d.sign)
		if i < 0 {
			dst = append(dst, text...)
			dst = append(dst, '\n')
			return append(dst, noNewline...)
		}
		dst = append(dst, text[:i+1]...)
		text = text[i+1:]
	}
	return dst
}

// header appends the "---" and "+++" lines.
func (d Diff) header(dst []byte) []byte {
	dst = append(append(append(dst, "--- "...), d.from...), "\n+++ "...)
	return append(append(dst, d.to...), '\n')
}

// hunkHeader appends the one hunk's "@@" line.
func (d Diff) hunkHeader(dst []byte) []byte {
	a, b := 0, d.lines
	if d.sign == '-' {
		a, b = b, a
	}
	dst = append(dst, "@@ -"...)
	dst = appendHunkRange(dst, 1, a)
	dst = append(dst, " +"...)
	dst = appendHunkRange(dst, 1, b)
	return append(dst, " @@\n"...)
}

// WriteTo writes d's text to w; a one-sided diff goes through a pooled
// buffer, one write per diff.
func (d Diff) WriteTo(w io.Writer) (int64, error) {
	if !d.oneSided {
		n, err := io.WriteString(w, d.text)
		return int64(n), err
	}
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	*buf = d.Append((*buf)[:0])
	n, err := w.Write(*buf)
	return int64(n), err
}

// scratch holds the buffers one-sided diffs are written through.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// AppendJSON appends d's text as a JSON string, escaped byte for byte as
// encoding/json escapes a string with HTML escaping off; a one-sided diff
// is escaped line by line straight from the file's bytes.
func (d Diff) AppendJSON(dst []byte) []byte {
	if !d.oneSided {
		return jsonstream.AppendString(dst, d.text, false)
	}
	dst = append(dst, '"', '-', '-', '-', ' ')
	dst = append(jsonstream.AppendStringContent(dst, d.from, false), `\n+++ `...)
	dst = append(jsonstream.AppendStringContent(dst, d.to, false), `\n`...)
	if d.sign != 0 {
		var hunk [64]byte
		dst = jsonstream.AppendStringContent(dst, d.hunkHeader(hunk[:0]), false)
		side, ok := d.sideBytes()
		if !ok {
			side = nil
			dst = jsonstream.AppendStringContent(dst, changedNote, false)
		}
		for text := side; len(text) > 0; {
			i := bytes.IndexByte(text, '\n')
			dst = append(dst, d.sign)
			if i < 0 {
				dst = jsonstream.AppendStringContent(dst, text, false)
				dst = append(dst, `\n`...)
				dst = jsonstream.AppendStringContent(dst, noNewline, false)
				break
			}
			dst = append(jsonstream.AppendStringContent(dst, text[:i], false), `\n`...)
			text = text[i+1:]
		}
	}
	return append(dst, '"')
}

// MarshalJSON encodes d as the JSON string of its text.
func (d Diff) MarshalJSON() ([]byte, error) {
	return d.AppendJSON(make([]byte, 0, d.Len()+d.Len()/8+2)), nil
}

// appendHunkRange appends a hunk's line range as diff -u writes it.
func appendHunkRange(dst []byte, start, n int) []byte {
	switch n {
	case 0:
		return append(strconv.AppendInt(dst, int64(start-1), 10), ",0"...)
	case 1:
		return strconv.AppendInt(dst, int64(start), 10)
	}
	dst = strconv.AppendInt(dst, int64(start), 10)
	dst = append(dst, ',')
	return strconv.AppendInt(dst, int64(n), 10)
}
