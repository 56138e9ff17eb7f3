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
}
