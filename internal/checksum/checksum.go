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
