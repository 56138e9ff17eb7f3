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
	t.Setenv(fsyncEnv, "1") // exercise the directory fsyncs too; NewStore reads it
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
		if !strings.Contains(e.Hint, "agentpack doctor --fix") || e.Details["path"] != path {
			t.Fatalf("%s: hint %q / details %v should name doctor --fix and %s", name, e.Hint, e.Details, path)
		}
	}
}

func TestDamagedJournalFallsBackToItsCopy(t *testing.T) {
	for name, body := range map[string]string{"empty": "", "truncated": "{\"id\": \"2026", "garbage": "\x00\xff not json"} {
		t.Run(name, func(t *testing.T) {
			s := NewStore(t.TempDir())
			older := &Journal{ID: s.NewID(time.Now()), Command: "deploy --apply"}
			j := &Journal{ID: s.NewID(time.Now()), Command: "deploy --apply", PID: 7, StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
				Files: []FileChange{{Target: "codex", Root: "/r", Path: "/r/AGENTS.md", Op: OpCreate, After: content("a")}}}
			for _, jj := range []*Journal{older, j} {
				if err := s.WriteJournal(jj); err != nil {
					t.Fatal(err)
				}
			}
			copyPath := filepath.Join(s.Dir(), "snapshots", j.ID, "journal.json")
			if _, err := os.Stat(copyPath); err != nil {
				t.Fatalf("no journal copy beside the saved bytes: %v", err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir(), "journal.json"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := s.ReadJournal()
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != j.ID || got.CopyPath != copyPath || len(got.Files) != 1 {
				t.Fatalf("ReadJournal = %+v, want the newest copy %s", got, copyPath)
			}
			// A copy whose snapshot was recorded belongs to a finished apply.
			if err := s.Save(&Record{ID: j.ID, Kind: KindDeploy, CreatedAt: time.Now(), Files: j.Files}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.ReadJournal(); err != nil || got.ID != older.ID {
				t.Fatalf("after the record: ReadJournal = %+v, %v; want the older unrecorded copy", got, err)
			}
		})
	}
}

func TestJournalNamingAPathOutsideItsRootIsDamaged(t *testing.T) {
	s := NewStore(t.TempDir())
	body := `{"id":"20260101T000000.000000000Z","files":[{"target":"codex","root":"/r","path":"/r/../etc/passwd","op":"delete","before":null,"after":null}]}`
	if err := os.WriteFile(filepath.Join(s.Dir(), "journal.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.ReadJournal()
	wantCode(t, err, apperr.IOFailed)
}
