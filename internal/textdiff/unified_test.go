package textdiff

import (
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
