package snapshots

import (
	"bytes"
	"fmt"
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

// TestContentsFailsFastOnManyDeltas: a manifest flipped between versions
// by many deploys and rollbacks leaves many deltas between the same few
// versions. With none of them anchored (nothing whole, nothing on disk),
// the answer is E_SNAPSHOT_CORRUPTED at once: a search that tried every
// path through them took minutes for a few dozen (this test's 30 versions,
// each pair of neighbours saved by two records, made it 2^30 paths).
func TestContentsFailsFastOnManyDeltas(t *testing.T) {
	s := NewStore(t.TempDir())
	const versions = 30
	v := make([][]byte, versions)
	for i := range v {
		v[i] = manifestLike(40+i, func(int) string { return "v" })
	}
	var records []*Record
	for i := 0; i+1 < versions; i++ {
		for copy := 0; copy < 2; copy++ {
			id := fmt.Sprintf("R%02d-%d", i, copy)
			before, after := v[i], v[i+1]
			undo, redo := ComputeDelta(after, before), ComputeDelta(before, after)
			if _, err := s.SavePack(id, [][]byte{undo, redo}); err != nil {
				t.Fatal(err)
			}
			f := change("codex", "m.json", "x", "y")
			f.Before = &Content{SHA256: checksum.SHA256Hex(before), Delta: &DeltaRef{Base: checksum.SHA256Hex(after), SHA256: checksum.SHA256Hex(undo)}}
			f.After = &Content{SHA256: checksum.SHA256Hex(after), Delta: &DeltaRef{Base: checksum.SHA256Hex(before), SHA256: checksum.SHA256Hex(redo)}}
			records = append(records, &Record{ID: id, Kind: KindDeploy, Files: []FileChange{f}})
		}
	}
	last := records[len(records)-1].Files[0]
	_, err := s.Contents(records).Read(last.Target, last.Path, records[len(records)-1].ID, last.After, nil)
	wantCode(t, err, apperr.SnapshotCorrupted)
	// Anchored at one end (the disk holds the first version), the last
	// version is rebuilt through all of them.
	got, err := s.Contents(records).Read(last.Target, last.Path, records[len(records)-1].ID, last.After, v[0])
	if err != nil || !bytes.Equal(got, v[versions-1]) {
		t.Fatalf("the last version rebuilt from the first on disk: %v", err)
	}
}
