package textdiff

import (
	"bytes"
	"strings"
	"testing"
)

// The diff of a created file made from its shape is the one made from its
// bytes and let go of them: the same text, the same length, the same
// verdict on binary and oversized files.
func TestCreatedIsTheDroppedDiffOfTheBytes(t *testing.T) {
	for name, b := range map[string][]byte{
		"text":            []byte("one\ntwo\n"),
		"no final eol":    []byte("one\ntwo"),
		"one line":        []byte("x"),
		"blank lines":     []byte("\n\n\n"),
		"empty":           {},
		"binary":          []byte("a\x00b\n"),
		"invalid utf-8":   []byte("a\xffb\n"),
		"over MaxBytes":   bytes.Repeat([]byte("0123456789\n"), MaxBytes/11+1),
		"at the limit":    bytes.Repeat([]byte("x\n"), (MaxBytes-200)/3),
		"multibyte":       []byte("héllo wörld\n"),
		"carriage return": []byte("a\r\nb\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			load := func() ([]byte, error) { return b, nil }
			want, wantOK := UnifiedDiff("/dev/null", "x.md", nil, b)
			want = want.Dropped(load)
			got, ok := Created("/dev/null", "x.md", ShapeOf(b), load)
			if ok != wantOK {
				t.Fatalf("ok = %v, want %v", ok, wantOK)
			}
			if !ok {
				return
			}
			if got.String() != want.String() || got.Len() != want.Len() || got.Reloads() != want.Reloads() {
				t.Errorf("from the shape:\n%q (len %d)\nfrom the bytes:\n%q (len %d)", got.String(), got.Len(), want.String(), want.Len())
			}
			if strings.Contains(got.String(), changedNote) {
				t.Errorf("the bytes did not match their shape: %q", got.String())
			}
		})
	}
}
