// Package merge3 merges two line-based edits of the same base text, the
// way `git merge-file` does: changes on one side only are taken, the same
// change on both sides is taken once, and different changes to the same
// lines are a conflict shown between markers.
package merge3

import (
	"bytes"
	"strings"

	"github.com/agentpack/agentpack/internal/textdiff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Result is the outcome of a merge.
type Result struct {
	// Merged is the merged text; where Conflicts > 0 it holds conflict
	// markers.
	Merged []byte
	// Conflicts counts the conflicting regions.
	Conflicts int
}

// Labels name the two sides in conflict markers.
type Labels struct{ Ours, Theirs string }

// Merge merges ours and theirs, both edits of base.
func Merge(base, ours, theirs []byte, labels Labels) Result {
	o, a, b := lines(base), lines(ours), lines(theirs)
	ma, mb := matches(o, a), matches(o, b)
	var out bytes.Buffer
	conflicts := 0
	io, ia, ib := 0, 0, 0
	for {
		// A stable run: base lines matched by both sides in step.
		n := 0
		for io+n < len(o) && ma[io+n] == ia+n && mb[io+n] == ib+n {
			n++
		}
		if n > 0 {
			writeLines(&out, o[io:io+n])
			io, ia, ib = io+n, ia+n, ib+n
			continue
		}
		// The next base line both sides kept ends an unstable chunk.
		next := -1
		for j := io; j < len(o); j++ {
			if ma[j] >= ia && mb[j] >= ib {
				next = j
				break
			}
		}
		oc, ac, bc := o[io:], a[ia:], b[ib:]
		if next >= 0 {
			oc, ac, bc = o[io:next], a[ia:ma[next]], b[ib:mb[next]]
		}
		if conflicts += resolve(&out, oc, ac, bc, labels); next < 0 {
			break
		}
		io, ia, ib = next, ma[next], mb[next]
	}
	return Result{Merged: out.Bytes(), Conflicts: conflicts}
}

// resolve writes one unstable chunk and reports whether it conflicted.
func resolve(out *bytes.Buffer, o, a, b []string, labels Labels) int {
	switch {
	case equal(a, o):
		writeLines(out, b)
	case equal(b, o), equal(a, b):
		writeLines(out, a)
	default:
		out.WriteString("<<<<<<< " + labels.Ours + "\n")
		writeSection(out, a)
		out.WriteString("=======\n")
		writeSection(out, b)
		out.WriteString(">>>>>>> " + labels.Theirs + "\n")
		return 1
	}
	return 0
}

// HasMarkers reports whether text still holds conflict markers.
func HasMarkers(text []byte) bool {
	for _, l := range lines(text) {
		if strings.HasPrefix(l, "<<<<<<< ") || strings.HasPrefix(l, ">>>>>>> ") || l == "=======\n" {
			return true
		}
	}
	return false
}

// matches maps each base line to the index of the line of other it was
// kept as (in a longest common subsequence), or -1.
func matches(base, other []string) []int {
	m := make([]int, len(base))
	for i := range m {
		m[i] = -1
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	cb, co, _ := dmp.DiffLinesToRunes(strings.Join(base, ""), strings.Join(other, ""))
	ib, iother := 0, 0
	for _, d := range dmp.DiffMainRunes(cb, co, false) {
		n := len([]rune(d.Text))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				m[ib+k] = iother + k
			}
			ib, iother = ib+n, iother+n
		case diffmatchpatch.DiffDelete:
			ib += n
		case diffmatchpatch.DiffInsert:
			iother += n
		}
	}
	return m
}

// lines splits text into lines that keep their "\n".
func lines(text []byte) []string { return textdiff.SplitLines(string(text)) }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func writeLines(out *bytes.Buffer, ls []string) {
	for _, l := range ls {
		out.WriteString(l)
	}
}

// writeSection writes a conflict side, ending it with a newline so the
// marker after it starts its own line.
func writeSection(out *bytes.Buffer, ls []string) {
	writeLines(out, ls)
	if n := len(ls); n > 0 && !strings.HasSuffix(ls[n-1], "\n") {
		out.WriteString("\n")
	}
}
