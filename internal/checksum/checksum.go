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
// is not one.
func ParseSHA256Hex(s string) (sum [sha256.Size]byte, ok bool) {
	if len(s) != 2*sha256.Size {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(s))
	return sum, err == nil
}
