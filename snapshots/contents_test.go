package snapshots

import (
	"bytes"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
)

// TestContentsRebuildsDeltasFromTheDisk: bytes saved as a delta come back
// from the bytes on disk, chained across snapshots; without an anchor they
// are E_SNAPSHOT_CORRUPTED, never guessed.
func TestContentsRebuildsDeltasFromTheDisk(t *testing.T) {
	s := NewStore(t.TempDir())
	v := [][]byte{manifestLike(50, func(int) string { return "a" }), manifestLike(50, func(int) string { return "b" }), manifestLike(51, func(int) string { return "b" })}
	saved := func(id string, before, after []byte) FileChange {
		undo, redo := ComputeDelta(after, before), ComputeDelta(before, after)
		if _, err := s.SavePack(id, [][]byte{undo, redo}); err != nil {
			t.Fatal(err)
		}
		f := change("codex", "m.json", "x", "y")
		f.Before = &Content{SHA256: checksum.SHA256Hex(before), Mode: 0o644, Size: int64(len(before)), Delta: &DeltaRef{Base: checksum.SHA256Hex(after), SHA256: checksum.SHA256Hex(undo)}}
		f.After = &Content{SHA256: checksum.SHA256Hex(after), Mode: 0o644, Size: int64(len(after)), Delta: &DeltaRef{Base: checksum.SHA256Hex(before), SHA256: checksum.SHA256Hex(redo)}}
		return f
	}
	r1 := &Record{ID: "R1", Kind: KindDeploy, Files: []FileChange{saved("R1", v[0], v[1])}}
	r2 := &Record{ID: "R2", Kind: KindDeploy, Files: []FileChange{saved("R2", v[1], v[2])}}
	f := r1.Files[0]

	got, err := s.Contents([]*Record{r1, r2}).Read(f.Target, f.Path, "R1", f.Before, v[2])
	if err != nil || !bytes.Equal(got, v[0]) {
		t.Fatalf("R1's before, rebuilt from the disk through R2: %v", err)
	}
	_, err = s.Contents([]*Record{r1}).Read(f.Target, f.Path, "R1", f.Before, v[2])
	wantCode(t, err, apperr.SnapshotCorrupted)
	_, err = s.Contents([]*Record{r1, r2}).Read(f.Target, f.Path, "R1", f.Before, nil)
	wantCode(t, err, apperr.SnapshotCorrupted)
}
