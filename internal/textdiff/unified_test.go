package textdiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
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

// TestLineOpsMatchGoDiffLineMode: lineOps, which numbers lines itself,
// finds the same line diff as go-diff's DiffLinesToChars, DiffMain and
// DiffCharsToLines, on random edits of random texts.
func TestLineOpsMatchGoDiffLineMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "line of text", "", "x\ty", "é"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(20) > 0 {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	edit := func(s string) string {
		ls := SplitLines(s)
		for range rng.IntN(6) {
			switch i := rng.IntN(len(ls) + 1); rng.IntN(3) {
			case 0:
				ls = append(ls[:i], append([]string{words[rng.IntN(len(words))] + "\n"}, ls[i:]...)...)
			case 1:
				if i < len(ls) {
					ls = append(ls[:i], ls[i+1:]...)
				}
			default:
				if i < len(ls) {
					ls[i] = "changed\n"
				}
			}
		}
		return strings.Join(ls, "")
	}
	for range 3000 {
		a := text(rng.IntN(60))
		b := edit(a)
		if rng.IntN(5) == 0 {
			b = text(rng.IntN(60))
		}
		if got, want := lineOps([]byte(a), []byte(b)), goDiffLineOps([]byte(a), []byte(b)); !slices.Equal(got, want) {
			t.Fatalf("%q -> %q:\ngot  %v\nwant %v", a, b, got, want)
		}
	}
	// Past the surrogates: more distinct lines than runes below U+D800.
	var a, b strings.Builder
	for i := range 70000 {
		fmt.Fprintf(&a, "%d\n", i)
		if i%1000 != 7 {
			fmt.Fprintf(&b, "%d\n", i)
		}
	}
	if got, want := lineOps([]byte(a.String()), []byte(b.String())), goDiffLineOps([]byte(a.String()), []byte(b.String())); !slices.Equal(got, want) {
		t.Fatalf("70,000 lines: %d ops, want %d", len(got), len(want))
	}
	for n := range 0x110000 - 0x803 {
		if runeLine(lineRune(n)) != n || !utf8.ValidRune(lineRune(n)) {
			t.Fatalf("line %d: rune %U", n, lineRune(n))
		}
	}
}

// goDiffLineOps is the line diff as lineDiff made it before lineOps, through
// go-diff's DiffLinesToChars, DiffMain and DiffCharsToLines: the oracle
// lineOps is checked against.
func goDiffLineOps(a, b []byte) []line {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(string(a), string(b))
	var all []line
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines) {
		for _, l := range SplitLines(d.Text) {
			all = append(all, line{d.Type, l})
		}
	}
	return all
}

// TestDroppedDiffWritesTheSame: a one-sided diff that let go of its file's
// bytes writes, from the bytes read again, exactly what it wrote before;
// bytes that cannot be read, or are not the same length, are written as a
// line saying the file changed, and other diffs are not dropped.
func TestDroppedDiffWritesTheSame(t *testing.T) {
	for _, text := range []string{"a\nb\n", "no newline at end", "x<&>\u2028\"q\"\n\n"} {
		for _, pair := range [][2]string{{"", text}, {text, ""}} {
			d, ok := UnifiedDiff("a/f", "b/f", []byte(pair[0]), []byte(pair[1]))
			if !ok {
				t.Fatal("no diff")
			}
			dropped := d.Dropped(func() ([]byte, error) { return []byte(text), nil })
			if dropped.side != nil {
				t.Fatal("Dropped kept the bytes")
			}
			var w1, w2 bytes.Buffer
			_, _ = d.WriteTo(&w1)
			_, _ = dropped.WriteTo(&w2)
			j1, _ := d.MarshalJSON()
			j2, _ := dropped.MarshalJSON()
			if w1.String() != w2.String() || string(j1) != string(j2) || d.String() != dropped.String() || d.Len() != dropped.Len() {
				t.Fatalf("%q: dropped diff differs:\n%s\n%s\n%s\n%s", pair, w1.String(), w2.String(), j1, j2)
			}
			for _, load := range []func() ([]byte, error){
				func() ([]byte, error) { return nil, errors.New("gone") },
				func() ([]byte, error) { return []byte(text + "more"), nil },
			} {
				bad := d.Dropped(load)
				if s := bad.String(); !strings.Contains(s, "changed while its diff was shown") || strings.Contains(s, "\n+a") {
					t.Fatalf("a changed file's dropped diff: %q", s)
				}
				var v string
				if j, _ := bad.MarshalJSON(); json.Unmarshal(j, &v) != nil || !strings.Contains(v, "changed while") {
					t.Fatalf("a changed file's dropped diff in JSON: %s", j)
				}
			}
		}
	}
	line, _ := UnifiedDiff("a/f", "b/f", []byte("a\n"), []byte("b\n"))
	if line.Dropped(func() ([]byte, error) { return nil, nil }).String() != line.String() {
		t.Fatal("a line diff was dropped")
	}
}

// isText is git's test: a NUL in the first 8000 bytes makes a file
// binary, one past them does not; invalid UTF-8 is not diffed as text.
func TestIsText(t *testing.T) {
	pad := strings.Repeat("a", 7999)
	for s, want := range map[string]bool{
		"": true, "text\n": true, "é\n": true,
		"\x00": false, "a\x00b": false, pad + "\x00": false,
		pad + "a\x00": true, "\xff": false, pad + "a\xff": false,
	} {
		if got := isText([]byte(s)); got != want {
			t.Errorf("isText(%.12q… %d bytes) = %v, want %v", s, len(s), got, want)
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
