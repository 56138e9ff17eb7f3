package checksum

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestParseSHA256HexIsSHA256HexBack(t *testing.T) {
	s := SHA256Hex([]byte("agentpack"))
	sum, ok := ParseSHA256Hex(s)
	if !ok || hex.EncodeToString(sum[:]) != s {
		t.Fatalf("ParseSHA256Hex(%q) = %x, %v", s, sum, ok)
	}
	for _, bad := range []string{"", s[:63], s + "0", "g" + s[1:], " " + s[1:], strings.ToUpper(s)} {
		if _, ok := ParseSHA256Hex(bad); ok {
			t.Errorf("ParseSHA256Hex(%q) accepted", bad)
		}
	}
	// Every byte, at the high and the low digit of a byte of the sum.
	for c := range 256 {
		want := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
		for _, at := range []int{0, 63} {
			in := s[:at] + string([]byte{byte(c)}) + s[at+1:]
			sum, ok := ParseSHA256Hex(in)
			if ok != want {
				t.Fatalf("ParseSHA256Hex with byte %#x at %d: ok %v, want %v", c, at, ok, want)
			}
			if ok && hex.EncodeToString(sum[:]) != in {
				t.Fatalf("ParseSHA256Hex(%q) = %x", in, sum)
			}
		}
	}
}

func BenchmarkParseSHA256Hex(b *testing.B) {
	s := SHA256Hex([]byte("agentpack"))
	for b.Loop() {
		if _, ok := ParseSHA256Hex(s); !ok {
			b.Fatal("refused")
		}
	}
}

func TestIsLowerHex(t *testing.T) {
	for s, want := range map[string]bool{"": true, "0123456789abcdef": true, SHA256Hex([]byte("x")): true,
		"ABCDEF": false, "0g": false, `ab"`: false, "ab\x00": false, "é": false} {
		if got := IsLowerHex(s); got != want {
			t.Errorf("IsLowerHex(%q) = %v, want %v", s, got, want)
		}
	}
}
