package snapshots

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestPackAddFuncAndCopyTo: bytes written into a pack as they are made
// are indexed under their hash, found again by ReadBlob and copied out
// chunk by chunk; a second copy of bytes the pack holds is not indexed
// twice, and damaged bytes fail the copy.
func TestPackAddFuncAndCopyTo(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	p, err := s.NewPack(id)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Add([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 3*copyChunk/16+5) // more than three chunks
	sha, n, err := p.AddFunc(func(w io.Writer) error {
		for i := 0; i < len(big); i += 1000 {
			if _, err := io.WriteString(w, big[i:min(i+1000, len(big))]); err != nil {
				return err
			}
		}
		return nil
	})
	want := sha256.Sum256([]byte(big))
	if err != nil || sha != hex.EncodeToString(want[:]) || n != int64(len(big)) {
		t.Fatalf("AddFunc = %s, %d, %v; want %x, %d", sha, n, err, want, len(big))
	}
	again, _, err := p.AddFunc(func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err })
	if err != nil || again != first {
		t.Fatalf("AddFunc of bytes held already = %s, %v; want %s", again, err, first)
	}
	last, err := p.Add([]byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.CopyTo(sha, &out); err != nil || out.String() != big {
		t.Fatalf("CopyTo: %d bytes, %v", out.Len(), err)
	}
	for sha, want := range map[string]string{first: "first", last: "last", sha: big} {
		if got, err := s.ReadBlob(id, sha); err != nil || string(got) != want {
			t.Fatalf("ReadBlob(%s) = %.20q, %v", sha, got, err)
		}
	}
	if err := p.CopyTo(strings.Repeat("0", 64), io.Discard); apperr.CodeOf(err) != apperr.SnapshotCorrupted {
		t.Fatalf("CopyTo of a blob not in the pack: %v", err)
	}
	// Damage the big blob's last chunk on disk: the copy fails.
	path := s.blobDir(id).JoinName(packName).String()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), int64(len("first")+len(big)-1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := p.CopyTo(sha, io.Discard); apperr.CodeOf(err) != apperr.SnapshotCorrupted {
		t.Fatalf("CopyTo of damaged bytes: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
