package snapshots

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func sha(s string) string { return strings.Repeat(s, 64)[:64] }

func content(s string) *Content { return &Content{SHA256: sha(s), Mode: 0o644, Size: 3} }

func sampleRecord(id string) *Record {
	return &Record{
		ID: id, Kind: KindDeploy, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Command: "deploy --apply", Profile: "default", Targets: []string{"codex", "claude_code"},
		Files: []FileChange{
			{Target: "codex", Root: "/r", Path: "/r/b", Op: OpUpdate, Before: content("1"), After: content("2")},
			{Target: "codex", Root: "/r", Path: "/r/a", Op: OpCreate, After: content("3")},
			{Target: "claude_code", Root: "/c", Path: "/c/z", Op: OpDelete, Before: content("4")},
		},
	}
}

func TestSaveLoadListRoundTrip(t *testing.T) {
	s := NewStore(t.TempDir())
	if r, err := s.Latest(); r != nil || err != nil {
		t.Fatalf("Latest on empty store = %v, %v; want nil, nil", r, err)
	}
	ids := []string{"20260101T000000.000000003Z", "20260101T000000.000000001Z", "20260101T000000.000000002Z"}
	for _, id := range ids {
		if err := s.Save(sampleRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	in := sampleRecord(ids[0])
	got, err := s.Load(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if in.Files[0].Path != "/r/b" {
		t.Fatal("Save reordered the caller's Files")
	}
	want := sampleRecord(ids[0])
	want.SchemaVersion = RecordSchemaVersion
	want.Targets = []string{"claude_code", "codex"}
	want.Files = []FileChange{want.Files[2], want.Files[1], want.Files[0]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load = %+v\nwant %+v", got, want)
	}

	raw, err := os.ReadFile(filepath.Join(s.Dir(), "snapshots", ids[0]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"schema_version\": 2,\n  \"id\": ") || !strings.HasSuffix(string(raw), "}\n") {
		t.Fatalf("record is not indented JSON:\n%s", raw)
	}
	if strings.Contains(string(raw), "rolled_back_to") || !strings.Contains(string(raw), `"before": null`) {
		t.Fatalf("unexpected null handling:\n%s", raw)
	}

	list, warnings, err := s.List()
	if err != nil || len(warnings) != 0 {
		t.Fatalf("List: %v %v", warnings, err)
	}
	var listed []string
	for _, r := range list {
		listed = append(listed, r.ID)
		// Counted, not held: the three target files of sampleRecord.
		if r.TargetFiles != 3 || len(r.Files) != 0 || r.Kind != KindDeploy {
			t.Errorf("List gave %s with %d target files and %d held, kind %q; want 3 counted, none held", r.ID, r.TargetFiles, len(r.Files), r.Kind)
		}
	}
	if want := slices.Sorted(slices.Values(ids)); !slices.Equal(listed, want) {
		t.Fatalf("List order = %v, want %v", listed, want)
	}
	latest, err := s.Latest()
	if err != nil || latest.ID != ids[0] {
		t.Fatalf("Latest = %v, %v; want %s", latest, err, ids[0])
	}
}

func TestSaveEmptyRecordWritesArrays(t *testing.T) {
	s := NewStore(t.TempDir())
	to := "20260101T000000.000000000Z"
	r := &Record{ID: "20260102T000000.000000000Z", Kind: KindRollback, RolledBackTo: &to}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(s.Dir(), "snapshots", r.ID+".json"))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["files"] == nil || m["targets"] == nil || m["rolled_back_to"] != to {
		t.Fatalf("want files and targets as [] and rolled_back_to set, got %s", raw)
	}
}

func TestSaveRejectsInvalidRecords(t *testing.T) {
	s := NewStore(t.TempDir())
	id := "20260101T000000.000000000Z"
	for name, mutate := range map[string]func(*Record){
		"kind":            func(r *Record) { r.Kind = "apply" },
		"op":              func(r *Record) { r.Files[0].Op = "move" },
		"create before":   func(r *Record) { r.Files[1].Before = content("9") },
		"update no after": func(r *Record) { r.Files[0].After = nil },
		"delete after":    func(r *Record) { r.Files[2].After = content("9") },
		"bad sha":         func(r *Record) { r.Files[0].Before.SHA256 = "xyz" },
		"duplicate":       func(r *Record) { r.Files[1].Path = r.Files[0].Path },
		// Sorted, a path listed twice is found next to itself; unsorted,
		// anywhere.
		"duplicate sorted":   func(r *Record) { r.Files = []FileChange{r.Files[0], r.Files[0]} },
		"duplicate unsorted": func(r *Record) { r.Files = append(r.Files, r.Files[0]) },
	} {
		r := sampleRecord(id)
		mutate(r)
		wantCode(t, s.Save(r), apperr.Unexpected)
		if _, err := os.Stat(filepath.Join(s.Dir(), "snapshots", id+".json")); err == nil {
			t.Fatalf("%s: invalid record was written", name)
		}
	}
	wantCode(t, s.Save(sampleRecord("../x")), apperr.InvalidArgument)
}

func TestLoadErrors(t *testing.T) {
	s := NewStore(t.TempDir())
	e := wantCode(t, func() error { _, err := s.Load("20990101T000000.000000000Z"); return err }(), apperr.SnapshotNotFound)
	if !strings.Contains(e.Hint, "agentpack snapshots") {
		t.Fatalf("hint %q does not point at `agentpack snapshots`", e.Hint)
	}
	for _, id := range []string{"", ".", "..", "../etc/passwd", "a/b", `a\b`, "x..y", ".hidden", "c:x"} {
		_, err := s.Load(id)
		wantCode(t, err, apperr.InvalidArgument)
	}

	dir := filepath.Join(s.Dir(), "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for id, body := range map[string]string{
		"bad-json":  "{not json",
		"wrong-id":  `{"id":"other","kind":"deploy","targets":[],"files":[]}`,
		"bad-kind":  `{"id":"bad-kind","kind":"nope","targets":[],"files":[]}`,
		"truncated": `{"id":"truncated","kind":"deploy"`,
	} {
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.Load(id)
		wantCode(t, err, apperr.SnapshotCorrupted)
	}
}

func TestListSkipsUnreadableRecords(t *testing.T) {
	s := NewStore(t.TempDir())
	good := "20260101T000000.000000000Z"
	bad := "20260101T000000.000000001Z"
	if err := s.Save(sampleRecord(good)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "snapshots", bad+".json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not records: a blob folder, a temp file, a stray file.
	for _, p := range []string{good + "/x", ".tmp123", "notes.txt"} {
		path := filepath.Join(s.Dir(), "snapshots", p)
		_ = os.MkdirAll(filepath.Dir(path), 0o700)
		_ = os.WriteFile(path, nil, 0o600)
	}
	list, warnings, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != good {
		t.Fatalf("List = %v, want only %s", list, good)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], bad) {
		t.Fatalf("warnings = %q, want one naming %s", warnings, bad)
	}
	latest, err := s.Latest()
	if err != nil || latest.ID != good {
		t.Fatalf("Latest = %v, %v; want the readable %s", latest, err, good)
	}
}

func TestNewIDSortsAndNeverCollides(t *testing.T) {
	s := NewStore(t.TempDir())
	now := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	first := s.NewID(now)
	if first != "20260304T040607.000000008Z" {
		t.Fatalf("NewID = %s, want UTC with nanoseconds", first)
	}
	if _, err := time.Parse(IDLayout, first); err != nil {
		t.Fatal(err)
	}
	// Same instant again: the Store remembers what it handed out.
	second := s.NewID(now)
	if second != "20260304T040607.000000009Z" {
		t.Fatalf("second NewID = %s", second)
	}
	// A fresh Store on the same dir sees existing records and blob folders.
	if err := s.Save(sampleRecord(second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveBlob("20260304T040607.000000010Z", []byte("x")); err != nil {
		t.Fatal(err)
	}
	fresh := NewStore(s.Dir())
	if got := fresh.NewID(now); got != "20260304T040607.000000011Z" {
		t.Fatalf("fresh NewID = %s, want past existing ids", got)
	}
	// A clock that went back still yields an id after the newest.
	if got := NewStore(s.Dir()).NewID(now.Add(-time.Hour)); got <= "20260304T040607.000000010Z" {
		t.Fatalf("NewID with an earlier clock = %s, want after the newest id", got)
	}
	// Many ids in a row sort in the order they were made.
	var ids []string
	for i := 0; i < 1000; i++ {
		ids = append(ids, s.NewID(time.Now()))
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatal("ids are not strictly increasing")
	}
}

// TestLoadReadsEveryRecordVersion: a record written before schema_version
// existed (version 1) still loads; one from a newer agentpack is corrupted
// to this one, never misread.
func TestLoadReadsEveryRecordVersion(t *testing.T) {
	s := NewStore(t.TempDir())
	id := "20260101T000000.000000001Z"
	if err := s.Save(sampleRecord(id)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "snapshots", id+".json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for version, ok := range map[string]bool{"": true, `"schema_version": 1,`: true, `"schema_version": 3,`: false} {
		old := strings.Replace(string(raw), `"schema_version": 2,`, version, 1)
		if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		s := NewStore(s.Dir())
		_, err := s.Load(id)
		if (err == nil) != ok {
			t.Errorf("Load of a record with %q: err = %v, want ok %v", version, err, ok)
		}
	}
}

// List counts a record's target files, not its manifests or state files,
// and holds none of them.
func TestListCountsTargetFiles(t *testing.T) {
	s := NewStore(t.TempDir())
	r := sampleRecord("20260101T000000.000000001Z")
	r.Files = append(r.Files,
		FileChange{Target: "codex", Root: "/r", Path: "/r/.agentpack.manifest.codex.json", Op: OpCreate, After: content("5"), Manifest: true},
		FileChange{Target: StateTarget, Root: "/s", Path: "/s/roots.json", Op: OpCreate, After: content("6"), Manifest: true})
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	list, warnings, err := s.List()
	if err != nil || len(warnings) != 0 || len(list) != 1 {
		t.Fatalf("List = %v, %v, %v", list, warnings, err)
	}
	if got := list[0]; got.TargetFiles != 3 || len(got.Files) != 0 {
		t.Fatalf("List counted %d target files and held %d; want 3 and none", got.TargetFiles, len(got.Files))
	}
}
