package textdiff

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestOneSidedMatchesLineDiff checks that a created, deleted or unchanged
// file's diff, written straight out, is byte for byte the line diff's.
func TestOneSidedMatchesLineDiff(t *testing.T) {
	texts := []string{"", "x", "x\n", "a\nb\n", "a\nb", "\n", "\n\n", "a\r\nb\r\n", "é\n" + strings.Repeat("line\n", 500)}
	for _, text := range texts {
		for _, pair := range [][2]string{{"", text}, {text, ""}, {text, text}} {
			for _, max := range []int{-1, MaxBytes, 10} {
				got, gotOK := oneSided("a/f", "b/f", []byte(pair[0]), []byte(pair[1]), max)
				want, wantOK := lineDiff("a/f", "b/f", []byte(pair[0]), []byte(pair[1]), max)
				if got != want || gotOK != wantOK {
					t.Errorf("%q -> %q (max %d):\ngot  %v %q\nwant %v %q", pair[0], pair[1], max, gotOK, got, wantOK, want)
				}
			}
		}
	}
}

// TestDiffMatchesUnified: a Diff's text, length, written and JSON forms
// are what Unified returns and encoding/json makes of it.
func TestDiffMatchesUnified(t *testing.T) {
	texts := []string{"", "x", "x\n", "a\nb\n", "a\nb", "\n", "a\r\nb\r\n", "é\"\\\t<&>\n" + strings.Repeat("line\n", 50),
		"\x00bin", "\xffbad\n", strings.Repeat("big line of text\n", 8000)}
	for _, x := range texts {
		for _, y := range texts {
			want, wantOK := Unified("a/f\u2028", "b/f", []byte(x), []byte(y))
			d, ok := UnifiedDiff("a/f\u2028", "b/f", []byte(x), []byte(y))
			if ok != wantOK || (ok && d.String() != want) {
				t.Fatalf("%.20q -> %.20q: got %v %.80q, want %v %.80q", x, y, ok, d.String(), wantOK, want)
			}
			if !ok {
				continue
			}
			if d.Len() != len(want) || d.IsZero() {
				t.Errorf("%.20q -> %.20q: Len %d, want %d (zero %v)", x, y, d.Len(), len(want), d.IsZero())
			}
			var w bytes.Buffer
			if _, err := d.WriteTo(&w); err != nil || w.String() != want {
				t.Errorf("%.20q -> %.20q: WriteTo %q", x, y, w.String())
			}
			if got, wantJSON := string(d.AppendJSON(nil)), jsonOf(t, want); got != wantJSON {
				t.Errorf("%.20q -> %.20q: JSON %.80q, want %.80q", x, y, got, wantJSON)
			}
		}
	}
	if !(Diff{}).IsZero() {
		t.Error("the zero Diff is not zero")
	}
}

// TestAppendJSONStringMatchesEncodingJSON: every byte value, in every
// position of a rune, is escaped as encoding/json escapes it.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	var cases []string
	for b := range 256 {
		cases = append(cases, string(rune(b)), "x"+string([]byte{byte(b)})+"y", string([]byte{0xe2, 0x80, byte(b)}))
	}
	cases = append(cases, "\u2028\u2029", "\xe2\x80", "é€𝄞", "a\"b\\c/d<e>&f\u007f")
	for _, s := range cases {
		if got, want := string(AppendJSONString([]byte("x"), s)), "x"+jsonOf(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		if got, want := string(AppendJSONString(nil, []byte(s))), jsonOf(t, s); got != want {
			t.Errorf("%q as bytes: got %s, want %s", s, got, want)
		}
	}
}

func jsonOf(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
