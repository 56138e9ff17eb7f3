// Package textdiff renders unified diffs of text files.
package textdiff

import (
	"fmt"
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

// lineDiff is the unified diff of a and b, line by line.
func lineDiff(fromName, toName string, a, b []byte, max int) (diff string, ok bool) {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(string(a), string(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)

	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var all []line
	for _, d := range diffs {
		for _, l := range SplitLines(d.Text) {
			all = append(all, line{d.Type, l})
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
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
		var body strings.Builder
		na, nb := 0, 0
		for j := start; j < end; j++ {
			l := all[j]
			text := l.text
			noNL := !strings.HasSuffix(text, "\n")
			text = strings.TrimSuffix(text, "\n")
			switch l.op {
			case diffmatchpatch.DiffEqual:
				body.WriteString(" " + text + "\n")
				na++
				nb++
			case diffmatchpatch.DiffDelete:
				body.WriteString("-" + text + "\n")
				na++
			case diffmatchpatch.DiffInsert:
				body.WriteString("+" + text + "\n")
				nb++
			}
			if noNL {
				body.WriteString(noNewline)
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
		fmt.Fprintf(&out, "@@ -%s +%s @@\n%s", hunkRange(aStart, na), hunkRange(bStart, nb), body.String())
		i = end
		if max >= 0 && out.Len() > max {
			return "", false
		}
	}
	return out.String(), true
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

func isText(b []byte) bool {
	if len(b) > 8000 {
		if strings.IndexByte(string(b[:8000]), 0) >= 0 {
			return false
		}
	} else if strings.IndexByte(string(b), 0) >= 0 {
		return false
	}
	return utf8.Valid(b)
}
