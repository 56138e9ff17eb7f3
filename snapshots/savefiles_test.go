package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSaveFilesWritesWhatEncodingJSONWrites: a record whose files are made
// one at a time, out of order, is saved byte for byte as encoding/json
// writes the record with its files sorted; a journal likewise, in its
// files' order.
func TestSaveFilesWritesWhatEncodingJSONWrites(t *testing.T) {
	s := NewStore(t.TempDir())
	r := sampleRecord("20260102T030405.000000006Z")
	r.Files = nil
	var list []FileChange
	for i := range 150 {
		p := fmt.Sprintf("/r/<%03d>&.md", (i*67)%150) // out of order, HTML escaped
		list = append(list, FileChange{Target: "codex", Root: "/r", Path: p, Op: OpCreate, After: content("3")})
	}
	made := Files{N: len(list), At: func(i int) FileChange { return list[i] }}
	if err := s.SaveFiles(r, made); err != nil {
		t.Fatal(err)
	}
	want := *r
	want.SchemaVersion = RecordSchemaVersion
	want.Targets = slices.Sorted(slices.Values(r.Targets))
	want.Files = slices.SortedFunc(slices.Values(list), compareFiles)
	wb, _ := json.MarshalIndent(&want, "", "  ")
	got, err := os.ReadFile(filepath.Join(s.Dir(), "snapshots", r.ID+".json"))
	if err != nil || !bytes.Equal(got, append(wb, '\n')) {
		t.Fatalf("saved record differs from encoding/json's (%v)\n got: %.300s\nwant: %.300s", err, got, wb)
	}
	j := &Journal{ID: r.ID, Command: "deploy", PID: 7, StartedAt: r.CreatedAt}
	if err := s.WriteJournalFiles(j, made); err != nil {
		t.Fatal(err)
	}
	wantJ := *j
	wantJ.Files = list
	jb, _ := json.MarshalIndent(&wantJ, "", "  ")
	got, err = os.ReadFile(filepath.Join(s.Dir(), "journal.json"))
	if err != nil || !bytes.Equal(got, append(jb, '\n')) {
		t.Fatalf("journal differs from encoding/json's (%v)\n got: %.300s\nwant: %.300s", err, got, jb)
	}
	// Listed twice, even far apart: refused, nothing written.
	r.ID = "20260102T030405.000000007Z"
	list = append(list, list[3])
	if err := s.SaveFiles(r, Files{N: len(list), At: func(i int) FileChange { return list[i] }}); err == nil {
		t.Fatal("a record listing a path twice was saved")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "snapshots", r.ID+".json")); err == nil {
		t.Fatal("a refused record was written")
	}
}
