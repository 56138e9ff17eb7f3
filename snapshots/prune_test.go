package snapshots

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestPrune(t *testing.T) {
	s := NewStore(t.TempDir())
	var ids []string
	for i := 0; i < 5; i++ {
		id := s.NewID(time.Now())
		ids = append(ids, id)
		if _, err := s.SaveBlob(id, []byte(id)); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(sampleRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	orphan := s.NewID(time.Now())
	if _, err := s.SaveBlob(orphan, []byte("left by a crash")); err != nil {
		t.Fatal(err)
	}
	inFlight := s.NewID(time.Now())
	if _, err := s.SaveBlob(inFlight, []byte("apply in flight")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJournal(&Journal{ID: inFlight, Command: "deploy --apply", PID: 1}); err != nil {
		t.Fatal(err)
	}

	removed, err := s.Prune(2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ids[0], ids[1], ids[2], orphan}; !slices.Equal(removed, want) {
		t.Fatalf("Prune removed %v, want %v", removed, want)
	}
	list, _, _ := s.List()
	if len(list) != 2 || list[0].ID != ids[3] || list[1].ID != ids[4] {
		t.Fatalf("kept %v, want the newest two", list)
	}
	dir := filepath.Join(s.Dir(), "snapshots")
	for _, id := range []string{ids[3], ids[4], inFlight} {
		if _, err := os.Stat(filepath.Join(dir, id)); err != nil {
			t.Fatalf("blob folder %s should be kept: %v", id, err)
		}
	}
	for _, id := range removed {
		if _, err := os.Stat(filepath.Join(dir, id)); !os.IsNotExist(err) {
			t.Fatalf("blob folder %s should be gone", id)
		}
	}

	// Keeping more than exist removes nothing; keep 0 removes every record.
	if removed, err := s.Prune(10); err != nil || len(removed) != 0 {
		t.Fatalf("Prune(10) = %v, %v", removed, err)
	}
	if err := s.RemoveJournal(); err != nil {
		t.Fatal(err)
	}
	removed, err = s.Prune(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ids[3], ids[4], inFlight}; !slices.Equal(removed, want) {
		t.Fatalf("Prune(0) removed %v, want %v", removed, want)
	}
	_, err = s.Prune(-1)
	wantCode(t, err, apperr.InvalidArgument)
	if removed, err := NewStore(t.TempDir()).Prune(3); err != nil || len(removed) != 0 {
		t.Fatalf("Prune on an empty store = %v, %v", removed, err)
	}
}

func TestPruneRefusesWithUnreadableJournal(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	if _, err := s.SaveBlob(id, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "journal.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Prune(0)
	wantCode(t, err, apperr.IOFailed)
	if _, err := os.Stat(filepath.Join(s.Dir(), "snapshots", id)); err != nil {
		t.Fatal("Prune removed a blob folder although it could not read the journal")
	}
}
