package jsonstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendStringMatchesEncodingJSON: every byte value, in every position
// of a rune, is escaped as encoding/json escapes it, with and without HTML
// escaping.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var cases []string
	for b := range 256 {
		cases = append(cases, string(rune(b)), "x"+string([]byte{byte(b)})+"y", string([]byte{0xe2, 0x80, byte(b)}))
	}
	cases = append(cases, "", "\u2028\u2029", "\xe2\x80", "é€𝄞", "a\"b\\c/d<e>&f\u007f", "/home/a b/.agents/skills/s1/SKILL.md")
	for _, html := range []bool{false, true} {
		for _, s := range cases {
			want := encodedString(t, s, html)
			if got := string(AppendString([]byte("x"), s, html)); got != "x"+want {
				t.Errorf("%q (html %v): got %s, want x%s", s, html, got, want)
			}
			if got := string(AppendString(nil, []byte(s), html)); got != want {
				t.Errorf("%q as bytes (html %v): got %s, want %s", s, html, got, want)
			}
		}
	}
}

func encodedString(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
