package arena

import (
	"strings"
	"testing"
)

// TestStringsStayWhatTheyWere: strings handed out keep their bytes while
// later ones fill the buffer and spill into new ones.
func TestStringsStayWhatTheyWere(t *testing.T) {
	a := New(0)
	var got, want []string
	for i := range 2000 {
		s := strings.Repeat(string(rune('a'+i%26)), i%50)
		switch i % 3 {
		case 0:
			got = append(got, a.Join(s, []byte("/x")))
			want = append(want, s+"/x")
		case 1:
			got = append(got, a.Concat(s, "-", s))
			want = append(want, s+"-"+s)
		default:
			got = append(got, a.Hex([]byte(s)))
			want = append(want, hexOf(s))
		}
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d became %q, want %q", i, got[i], want[i])
		}
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s) && i < 32; i++ {
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&15])
	}
	return b.String()
}
