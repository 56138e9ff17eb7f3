package snapshots

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestJournalWriteReadRemove(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "state"))
	if j, err := s.ReadJournal(); j != nil || err != nil {
		t.Fatalf("ReadJournal with none = %v, %v", j, err)
	}
	j := &Journal{
		ID: s.NewID(time.Now()), Command: "deploy --apply", PID: os.Getpid(),
		StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Files: []FileChange{
			{Target: "codex", Root: "/r", Path: "/r/AGENTS.md", Op: OpUpdate, Before: content("a")},
			{Target: "codex", Root: "/r", Path: "/r/new.md", Op: OpCreate},
		},
	}
	t.Setenv(fsyncEnv, "1") // exercise the directory fsyncs too
	if err := s.WriteJournal(j); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadJournal()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, j) {
		t.Fatalf("ReadJournal = %+v, want %+v", got, j)
	}
	if err := s.RemoveJournal(); err != nil {
		t.Fatal(err)
	}
	if j, err := s.ReadJournal(); j != nil || err != nil {
		t.Fatalf("ReadJournal after remove = %v, %v", j, err)
	}
	if err := s.RemoveJournal(); err != nil {
		t.Fatalf("removing a missing journal: %v", err)
	}
	wantCode(t, s.WriteJournal(&Journal{ID: "../x"}), apperr.InvalidArgument)
}

func TestReadJournalUnreadable(t *testing.T) {
	for name, body := range map[string]string{"bad json": "{\"id\":", "bad id": `{"id":"../../x"}`} {
		s := NewStore(t.TempDir())
		path := filepath.Join(s.Dir(), "journal.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.ReadJournal()
		e := wantCode(t, err, apperr.IOFailed)
		if !strings.Contains(e.Hint, path) || !strings.Contains(e.Hint, "after checking your files") {
			t.Fatalf("%s: hint %q should say to remove %s after checking files", name, e.Hint, path)
		}
	}
}
