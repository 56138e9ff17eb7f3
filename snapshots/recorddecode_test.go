package snapshots

import (
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestDecodeRecordMatchesUnmarshal: a record decoded file by file is the
// one json.Unmarshal gives, whatever the order, case or repetition of its
// keys, and what Unmarshal refuses it refuses.
func TestDecodeRecordMatchesUnmarshal(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	file := func(p string) string {
		return `{"target":"codex","root":"/r","path":"/r/` + p + `","op":"create","before":null,"after":{"sha256":"` + sha + `","mode":420,"size":3}}`
	}
	good := []string{
		`{"id":"x","kind":"deploy","files":[` + file("a") + `,` + file("b") + `],"targets":["codex"],"created_dirs":["/r/d"]}`,
		"{\n  \"files\": [],\n  \"rolled_back_to\": \"y\", \"unknown\": {\"a\": [1]}\n}\n",
		`{"Files":[` + file("a") + `],"ID":"x","files":[` + file("b") + `]}`,
		`{"files":null,"kind":"rollback","created_at":"2026-01-02T03:04:05Z"}`,
		`{"id":"a\u003cb","files":[` + file("c") + `]}`,
	}
	for _, in := range good {
		var want Record
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		for name, r := range readersOf(in) {
			got, err := decodeRecord(r, 0, nil)
			if err != nil || !reflect.DeepEqual(*got, want) {
				t.Errorf("decodeRecord(%s) read %s = %+v, %v; want %+v", in, name, got, err, want)
			}
		}
	}
	bad := []string{``, `null`, `[]`, `{"files":{}}`, `{"files":[1]}`, `{"id":"x"} {}`, `{"id":"x"`, `{"files":[` + file("a"),
		`{"files":[` + file("a") + `,]}`, `{"id":"x",}`, `{,"id":"x"}`, `{"id" "x"}`, `{"files":[` + file("a") + file("b") + `]}`,
		`{"id":"x""kind":"y"}`, `{"files":[{"target":"a"]}`, `{"id":1 2}`, `{"id":tru}`, `{"files":nul}`, `{"targets":["a",]}`}
	for _, in := range bad {
		for name, r := range readersOf(in) {
			if _, err := decodeRecord(r, 0, nil); err == nil {
				t.Errorf("decodeRecord(%q) read %s accepted it", in, name)
			}
		}
	}
}

// readersOf gives in whole and a byte at a time, so that every value
// crosses the end of what was read.
func readersOf(in string) map[string]io.Reader {
	return map[string]io.Reader{"whole": strings.NewReader(in), "a byte at a time": iotest.OneByteReader(strings.NewReader(in))}
}

// FuzzDecodeRecord: whatever the bytes, decodeRecord accepts what
// json.Unmarshal accepts, with the same record, and refuses what it
// refuses.
func FuzzDecodeRecord(f *testing.F) {
	sha := strings.Repeat("ab", 32)
	f.Add(`{"id":"x","kind":"deploy","files":[{"target":"codex","root":"/r","path":"/r/a","op":"create","before":null,"after":{"sha256":"` + sha + `","mode":420,"size":3,"delta":{"base":"` + sha + `","sha256":"` + sha + `"}},"manifest":true}],"targets":["codex"]}`)
	f.Add(`{"Files":[{"TARGET":"c","path":"/a\u00e9\"b"}],"files":null,"created_at":"2026-01-02T03:04:05Z","created_dirs":["/d"],"rolled_back_to":"y"}`)
	f.Add(`{"files":[{},{"before":{"size":-1,"mode":0}}] , "schema_version" : 2 }`)
	f.Fuzz(func(t *testing.T, in string) {
		var want Record
		werr := json.Unmarshal([]byte(in), &want)
		for name, r := range readersOf(in) {
			got, err := decodeRecord(r, 0, nil)
			switch {
			case werr == nil && err != nil:
				t.Fatalf("decodeRecord(%q) read %s refused it: %v", in, name, err)
			case werr != nil && err == nil:
				t.Fatalf("decodeRecord(%q) read %s accepted what json.Unmarshal refuses: %v", in, name, werr)
			case werr == nil && !reflect.DeepEqual(*got, want):
				t.Fatalf("decodeRecord(%q) read %s = %+v; want %+v", in, name, *got, want)
			}
		}
	})
}

// TestLoadSharesRepeatedStrings: the files of a loaded record share one
// copy of the target, root and op they repeat; a record file that is not
// JSON is E_SNAPSHOT_CORRUPTED.
func TestLoadSharesRepeatedStrings(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	sha := strings.Repeat("cd", 32)
	root := t.TempDir()
	r := &Record{ID: id, Kind: KindDeploy, CreatedAt: time.Now().UTC(), Targets: []string{"codex"}}
	for _, p := range []string{"a", "b", "c"} {
		r.Files = append(r.Files, FileChange{Target: "codex", Root: root, Path: root + "/" + p, Op: OpCreate, After: &Content{SHA256: sha, Mode: 0o644, Size: 1}})
	}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(id)
	if err != nil || len(got.Files) != 3 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	a, b := got.Files[0], got.Files[2]
	if unsafe.StringData(a.Root) != unsafe.StringData(b.Root) || unsafe.StringData(a.Target) != unsafe.StringData(b.Target) || unsafe.StringData(a.Op) != unsafe.StringData(b.Op) {
		t.Error("repeated strings are copies")
	}
	if err := s.sys.WriteFile(s.recordPath(id), []byte(`{"id":`), filePerm); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load(id)
	wantCode(t, err, apperr.SnapshotCorrupted)
}

// TestLoadReadsLargeRecordsInChunks: a record larger than a chunk loads
// as json.Unmarshal reads it whole.
func TestLoadReadsLargeRecordsInChunks(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	root := t.TempDir()
	r := &Record{ID: id, Kind: KindDeploy, CreatedAt: time.Now().UTC(), Targets: []string{"codex"}}
	for i := range 3000 {
		r.Files = append(r.Files, FileChange{Target: "codex", Root: root, Path: root + "/" + strings.Repeat("p", i%50) + string(rune('a'+i%26)) + "/" + time.Duration(i).String(), Op: OpCreate,
			After: &Content{SHA256: strings.Repeat("0123456789abcdef", 4), Mode: 0o644, Size: int64(i)}})
	}
	slices.SortFunc(r.Files, compareFiles)
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	data, err := s.sys.ReadFile(s.recordPath(id))
	if err != nil || len(data) <= recordChunk {
		t.Fatalf("record of %d bytes, %v: want more than a chunk", len(data), err)
	}
	var want Record
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(id)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("Load differs from json.Unmarshal: %v", err)
	}
}
