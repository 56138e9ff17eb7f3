// Package textdiff renders unified diffs of text files.
package textdiff

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// MaxBytes is the largest unified diff agentpack prints (SPEC §7.1).
const MaxBytes = 100 * 1024

// Unified returns a unified diff of a and b with 3 lines of context, or
// ok=false for binary input or a diff over MaxBytes.
func Unified(fromName, toName string, a, b []byte) (diff string, ok bool) {
	return unified(fromName, toName, a, b, MaxBytes)
}

// Patch is [Unified] without the size cap, for diffs that are stored
// (overlay patches) rather than shown; ok=false for binary input.
func Patch(fromName, toName string, a, b []byte) (diff string, ok bool) {
	return unified(fromName, toName, a, b, -1)
}

func unified(fromName, toName string, a, b []byte, max int) (diff string, ok bool) {
	if !isText(a) || !isText(b) {
		return "", false
	}
	switch {
	case len(a) == 0 || len(b) == 0 || string(a) == string(b):
		// A created, deleted or unchanged file: one hunk of every line (or
		// none), written straight out; diffing 10,000 created files line
		// by line would cost more than reading them.
		return oneSided(fromName, toName, a, b, max)
	}
	return lineDiff(fromName, toName, a, b, max)
}

// oneSided is the unified diff of a and b when one is empty or both are
// the same, as lineDiff writes it.
func oneSided(fromName, toName string, a, b []byte, max int) (string, bool) {
	d := oneSidedDiff(fromName, toName, a, b)
	if d.sign != 0 && max >= 0 && d.Len() > max {
		return "", false
	}
	return d.String(), true
}

// noNewline follows a last line that has no newline.
const noNewline = "\\ No newline at end of file\n"

// lineDiff is the unified diff of a and b, line by line: go-diff's
// line-mode diff (each distinct line one rune, as its DiffLinesToChars
// numbers them), written hunk by hunk straight into one buffer.
func lineDiff(fromName, toName string, a, b []byte, max int) (diff string, ok bool) {
	all := lineOps(a, b)
	out := make([]byte, 0, 256)
	out = append(append(append(append(append(out, "--- "...), fromName...), "\n+++ "...), toName...), '\n')
	const ctx = 3
	aLine, bLine := 1, 1
	for i := 0; i < len(all); {
		if all[i].op == diffmatchpatch.DiffEqual {
			i++
			aLine++
			bLine++
			continue
		}
		// Hunk: back up ctx lines, then run until ctx*2 equal lines in a row.
		start := i - ctx
		if start < 0 {
			start = 0
		}
		for start > 0 && all[start-1].op != diffmatchpatch.DiffEqual {
			start--
		}
		aStart, bStart := aLine-(i-start), bLine-(i-start)
		end, equalRun := i, 0
		for end < len(all) && (equalRun < 2*ctx) {
			if all[end].op == diffmatchpatch.DiffEqual {
				equalRun++
			} else {
				equalRun = 0
			}
			end++
		}
		if equalRun > ctx {
			end -= equalRun - ctx
		}
		na, nb := 0, 0
		for j := start; j < end; j++ {
			switch all[j].op {
			case diffmatchpatch.DiffEqual:
				na++
				nb++
			case diffmatchpatch.DiffDelete:
				na++
			case diffmatchpatch.DiffInsert:
				nb++
			}
		}
		out = append(out, "@@ -"...)
		out = appendHunkRange(out, aStart, na)
		out = append(out, " +"...)
		out = appendHunkRange(out, bStart, nb)
		out = append(out, " @@\n"...)
		for j := start; j < end; j++ {
			l := all[j]
			switch l.op {
			case diffmatchpatch.DiffEqual:
				out = append(out, ' ')
			case diffmatchpatch.DiffDelete:
				out = append(out, '-')
			case diffmatchpatch.DiffInsert:
				out = append(out, '+')
			}
			out = append(out, l.text...)
			if !strings.HasSuffix(l.text, "\n") {
				out = append(append(out, '\n'), noNewline...)
			}
			if j >= i {
				switch l.op {
				case diffmatchpatch.DiffEqual:
					aLine++
					bLine++
				case diffmatchpatch.DiffDelete:
					aLine++
				case diffmatchpatch.DiffInsert:
					bLine++
				}
			}
		}
		i = end
		if max >= 0 && len(out) > max {
			return "", false
		}
	}
	return string(out), true
}

// line is one line of a line diff: kept, deleted or inserted.
type line struct {
	op   diffmatchpatch.Operation
	text string
}

// lineOps is go-diff's line-mode diff of a and b, a line at a time.
func lineOps(a, b []byte) []line {
	lines := make([]string, 1, 64) // by number, from 1, as DiffLinesToChars numbers them
	seen := make(map[string]rune, 64)
	ra, rb := lineRunes(string(a), &lines, seen), lineRunes(string(b), &lines, seen)
	all := make([]line, 0, len(ra)+len(rb))
	for _, d := range diffmatchpatch.New().DiffMainRunes(ra, rb, false) {
		for _, r := range d.Text {
			all = append(all, line{d.Type, lines[runeLine(r)]})
		}
	}
	return all
}

// lineRunes numbers the lines of s (each with its "\n"; the last may lack
// one) as go-diff's DiffLinesToChars does: a line seen before keeps its
// number, a new one gets the next; each number becomes the rune go-diff
// gives it, so DiffMainRunes sees the very runes DiffMain would.
func lineRunes(s string, lines *[]string, seen map[string]rune) []rune {
	out := make([]rune, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		l := s[:i]
		s = s[i:]
		r, ok := seen[l]
		if !ok {
			r = lineRune(len(*lines))
			seen[l] = r
			*lines = append(*lines, l)
		}
		out = append(out, r)
	}
	return out
}

// lineRune is the rune go-diff (v1.4.0's intToRune) encodes line number n
// as: n itself below the surrogates, above them shifted past them.
func lineRune(n int) rune {
	switch {
	case n < 0xD800:
		return rune(n)
	case n < 0x10000-0x800-3:
		return rune(n + 0x800)
	}
	return rune(n + 0x800 + 3)
}

// runeLine is the line number lineRune encoded as r.
func runeLine(r rune) int {
	switch {
	case r < 0xD800:
		return int(r)
	case r < 0x10000:
		return int(r) - 0x800
	}
	return int(r) - 0x800 - 3
}

// SplitLines splits s into lines that keep their "\n" (the last may lack
// one), so joining them gives s back.
func SplitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// isText reports whether b is UTF-8 with no NUL byte in its first 8000
// bytes (git's test for binary). bytes.IndexByte, not strings': a string
// conversion would copy up to 8000 bytes of every file diffed.
func isText(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) < 0 && utf8.Valid(b)
}
