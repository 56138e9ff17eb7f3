// Package checksum names content the way every agentpack record does: by
// the lowercase hex SHA-256 of its bytes.
package checksum

import (
	"crypto/sha256"
	"encoding/hex"
)

// SHA256Hex returns the lowercase hex SHA-256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ParseSHA256Hex is the SHA-256 that SHA256Hex wrote as s, and false when s
// is not one (uppercase hex included: no record holds it).
func ParseSHA256Hex(s string) (sum [sha256.Size]byte, ok bool) {
	if len(s) != 2*sha256.Size {
		return sum, false
	}
	for i := range sum {
		hi, ok1 := lowerHex(s[2*i])
		lo, ok2 := lowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return sum, false
		}
		sum[i] = hi<<4 | lo
	}
	return sum, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
