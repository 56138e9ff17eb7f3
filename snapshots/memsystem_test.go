package snapshots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// durableMem is a MemSystem whose durable version records what is written
// through it, so a test can tell the journal's writes from the others.
type durableMem struct {
	*fsys.MemSystem
	durable *[]fsys.AbsPath
}

// Durable implements fsys.Durabler.
func (m durableMem) Durable() fsys.System { return recordingMem{m.MemSystem, m.durable} }

// recordingMem is a MemSystem that notes every path it writes.
type recordingMem struct {
	*fsys.MemSystem
	writes *[]fsys.AbsPath
}

// recordingMu guards the writes of every recordingMem: the journal's two
// are written at once.
var recordingMu sync.Mutex

// WriteFile implements fsys.System.
func (m recordingMem) WriteFile(path fsys.AbsPath, data []byte, perm fs.FileMode) error {
	recordingMu.Lock()
	*m.writes = append(*m.writes, path)
	recordingMu.Unlock()
	return m.MemSystem.WriteFile(path, data, perm)
}

// TestStoreOnMemSystem runs the whole Store on an in-memory System: records,
// blobs, packs, the journal and its copy, leftovers and prune, with no byte
// on the real disk.
func TestStoreOnMemSystem(t *testing.T) {
	disk := t.TempDir()
	dir, err := fsys.NewAbsPath(filepath.Join(disk, "state"))
	if err != nil {
		t.Fatal(err)
	}
	mem := fsys.NewMemSystem()
	var durable []fsys.AbsPath
	s := NewStoreOn(durableMem{mem, &durable}, dir)
	if s.Dir() != dir.String() {
		t.Fatalf("Dir = %s, want %s", s.Dir(), dir)
	}

	// Two applies: single blobs, a pack and a record each.
	var ids []string
	for i, body := range []string{"first", "second"} {
		id := s.NewID(time.Now())
		ids = append(ids, id)
		sha, err := s.SaveBlob(id, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		shas, err := s.SavePack(id, [][]byte{[]byte("packed " + body), []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		for want, sha := range map[string]string{body: sha, "packed " + body: shas[0], "x": shas[1]} {
			if got, err := s.ReadBlob(id, sha); err != nil || string(got) != want {
				t.Fatalf("ReadBlob(%d, %s) = %q, %v; want %q", i, sha, got, err, want)
			}
		}
		if err := s.Save(sampleRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Load(ids[0]); err != nil || got.ID != ids[0] || len(got.Files) != 3 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if list, warnings, err := s.List(); err != nil || len(warnings) != 0 || len(list) != 2 {
		t.Fatalf("List = %v, %v, %v", list, warnings, err)
	}
	if latest, err := s.Latest(); err != nil || latest.ID != ids[1] {
		t.Fatalf("Latest = %+v, %v", latest, err)
	}
	// State is private: folders 0700, files 0600.
	for path, want := range map[fsys.AbsPath]fs.FileMode{
		dir: 0o700, s.snapshotsDir(): 0o700, s.blobDir(ids[0]): 0o700, s.recordPath(ids[0]): 0o600,
	} {
		if fi, err := mem.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("mode of %s = %v, %v; want %v", path, fi, err, want)
		}
	}
	if len(durable) != 0 {
		t.Fatalf("records and blobs went through the durable System: %v", durable)
	}

	// The journal of a third apply goes through the durable System, twice.
	j := &Journal{ID: s.NewID(time.Now()), Command: "deploy --apply", PID: 1, StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Files: []FileChange{{Target: "codex", Root: "/r", Path: "/r/a", Op: OpCreate, After: content("a")}}}
	if err := s.WriteJournal(j); err != nil {
		t.Fatal(err)
	}
	slices.Sort(durable)
	if want := slices.Sorted(slices.Values([]fsys.AbsPath{s.blobDir(j.ID).JoinName(journalCopyName), s.journalPath()})); !slices.Equal(durable, want) {
		t.Fatalf("durable writes = %v, want %v", durable, want)
	}
	if got, err := s.ReadJournal(); err != nil || !reflect.DeepEqual(got, j) {
		t.Fatalf("ReadJournal = %+v, %v", got, err)
	}
	// A damaged journal falls back to the copy, and can be set aside.
	if err := mem.WriteFile(s.journalPath(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadJournal(); err != nil || got.ID != j.ID || got.CopyPath == "" {
		t.Fatalf("ReadJournal of a damaged journal = %+v, %v; want its copy", got, err)
	}
	aside, err := s.SetAsideJournal(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(fsys.AbsPath(aside)); err != nil {
		t.Fatalf("damaged journal not kept at %s: %v", aside, err)
	}
	if err := s.RemoveJournal(); err != nil {
		t.Fatal(err)
	}

	// Leftovers: the third apply's folder (no record, no journal now) and a
	// temp file of an interrupted write.
	temp := s.snapshotsDir().JoinName(fsys.TempPrefix + "1")
	if err := mem.WriteFile(temp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	left, err := s.FindLeftovers()
	if err != nil || !slices.Equal(left.Orphans, []string{j.ID}) || !slices.Equal(left.TempFiles, []string{temp.String()}) {
		t.Fatalf("FindLeftovers = %+v, %v", left, err)
	}
	removed, err := s.Prune(1)
	if err != nil || !slices.Equal(removed, []string{ids[0], j.ID}) {
		t.Fatalf("Prune(1) = %v, %v; want %v", removed, err, []string{ids[0], j.ID})
	}
	for _, p := range []fsys.AbsPath{temp, s.recordPath(ids[0]), s.blobDir(ids[0]), s.blobDir(j.ID)} {
		if _, err := mem.Lstat(p); err == nil {
			t.Errorf("%s survived Prune", p)
		}
	}
	if list, _, _ := s.List(); len(list) != 1 || list[0].ID != ids[1] {
		t.Fatalf("after Prune, List = %v", list)
	}
	if err := s.DeleteBlobs(ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(s.blobDir(ids[1])); err == nil {
		t.Fatal("DeleteBlobs left the folder")
	}

	// Nothing reached the real disk.
	if entries, err := os.ReadDir(disk); err != nil || len(entries) != 0 {
		t.Fatalf("the real folder %s holds %v (%v); the Store must write only through its System", disk, entries, err)
	}
}

// TestNewStoreWritesTheJournalDurably checks that the Store of the real disk
// writes the journal through an fsyncing RealSystem whatever
// AGENTPACK_FSYNC says, and other state only when it says so.
func TestNewStoreWritesTheJournalDurably(t *testing.T) {
	fsyncing := fsys.NewRealSystem(fsys.RealSystemOptions{Fsync: true})
	for _, env := range []string{"", "0", "1"} {
		t.Setenv(fsyncEnv, env)
		s := NewStore(t.TempDir())
		if !reflect.DeepEqual(s.durable, fsyncing) {
			t.Errorf("AGENTPACK_FSYNC=%q: the journal System %+v does not fsync", env, s.durable)
		}
		if got := reflect.DeepEqual(s.sys, fsyncing); got != (env == "1") {
			t.Errorf("AGENTPACK_FSYNC=%q: the state System %+v fsyncs = %v", env, s.sys, got)
		}
	}
}

// failingCopy is a durable System that cannot write journal copies.
type failingCopy struct{ *fsys.MemSystem }

func (m failingCopy) Durable() fsys.System { return copyRefusing{m.MemSystem} }

type copyRefusing struct{ *fsys.MemSystem }

func (m copyRefusing) WriteFile(path fsys.AbsPath, data []byte, perm fs.FileMode) error {
	if path.Base() == journalCopyName && path.Dir().Dir().Base() == "snapshots" {
		return errors.New("disk full")
	}
	return m.MemSystem.WriteFile(path, data, perm)
}

// A journal whose copy cannot be written is not left behind: the apply
// stops before any file, and no later command recovers an apply that
// wrote nothing.
func TestJournalWithoutItsCopyIsNotLeft(t *testing.T) {
	dir, err := fsys.NewAbsPath(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStoreOn(failingCopy{fsys.NewMemSystem()}, dir)
	j := &Journal{ID: s.NewID(time.Now()), Command: "deploy --apply", PID: 1, StartedAt: time.Now().UTC(),
		Files: []FileChange{{Target: "codex", Root: "/r", Path: "/r/a", Op: OpCreate, After: content("a")}}}
	if err := s.WriteJournal(j); err == nil {
		t.Fatal("WriteJournal succeeded without its copy")
	}
	if got, err := s.ReadJournal(); got != nil || err != nil {
		t.Errorf("ReadJournal = %+v, %v; want no journal", got, err)
	}
}
