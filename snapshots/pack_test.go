package snapshots

import (
	"os"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestSavePackRoundTrip(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	datas := [][]byte{[]byte("one"), []byte("two"), []byte("one"), {}}
	shas, err := s.SavePack(id, datas)
	if err != nil {
		t.Fatal(err)
	}
	if shas[0] != shas[2] {
		t.Fatal("equal bytes must get equal hashes")
	}
	for i, d := range datas {
		got, err := s.ReadBlob(id, shas[i])
		if err != nil || string(got) != string(d) {
			t.Fatalf("ReadBlob(%d) = %q, %v", i, got, err)
		}
	}
	if n := len(s.packedHashes(id)); n != 3 {
		t.Fatalf("want 3 distinct blobs in the pack, got %d", n)
	}
	// Damage inside the pack is detected by the hash check.
	pack := s.blobDir(id).JoinName(packName).String()
	data, _ := os.ReadFile(pack)
	data[0] ^= 0xff
	if err := os.WriteFile(pack, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = NewStore(s.Dir()).ReadBlob(id, shas[0])
	wantCode(t, err, apperr.SnapshotCorrupted)
}
