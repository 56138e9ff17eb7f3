package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Every path field in error details gets its '/'-separated twin (SPEC §7).
func TestFailAddsPosixTwins(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "a", "b.md")
	err := apperr.New(apperr.DriftConflict, "x").
		With("path", abs).With("paths", []string{abs, abs}).With("root", abs).With("root_posix", "given").
		With("flag", "--force").With("sample", []string{"relative/x"}).With("problems", []string{"/target: bad"}).With("paths_rel", []string{"x"})
	d := New("deploy", "deploy --apply").Fail(err, nil).Errors[0].Details
	if d["path_posix"] != filepath.ToSlash(abs) || !reflect.DeepEqual(d["paths_posix"], []string{filepath.ToSlash(abs), filepath.ToSlash(abs)}) {
		t.Fatalf("no posix twins: %v", d)
	}
	if d["root_posix"] != "given" {
		t.Fatalf("a twin the error set was replaced: %v", d["root_posix"])
	}
	if _, ok := d["flag_posix"]; ok {
		t.Fatalf("a non-path got a twin: %v", d)
	}
	for _, k := range []string{"sample_posix", "problems_posix", "paths_rel_posix"} {
		if _, ok := d[k]; ok {
			t.Fatalf("%s: not a path field, but got a twin: %v", k, d)
		}
	}
}

// failingWriter refuses every write, like a closed stdout.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

// TestEncodeStreamsWhatJSONRenders: Encode writes the bytes JSON returns;
// data that cannot be encoded becomes an E_UNEXPECTED envelope, with
// nothing of the failed one written; a writer's error is returned.
func TestEncodeStreamsWhatJSONRenders(t *testing.T) {
	env := New("plan", "plan").Succeed(map[string]any{"spec": "a & <b>", "n": []int{1, 2}}, []string{"w"})
	var buf bytes.Buffer
	if err := env.Encode(&buf); err != nil || buf.String() != string(env.JSON()) || !strings.HasSuffix(buf.String(), "}\n") {
		t.Fatalf("Encode = %q, %v; want JSON's %q", buf.String(), err, env.JSON())
	}
	if !strings.Contains(buf.String(), `"spec": "a & <b>"`) {
		t.Errorf("Encode escaped HTML characters: %s", buf.String())
	}
	buf.Reset()
	bad := New("plan", "plan").Succeed(map[string]any{"ch": make(chan int)}, nil)
	if err := bad.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	var got Envelope
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got.OK || len(got.Errors) != 1 || got.Errors[0].Code != apperr.Unexpected {
		t.Fatalf("an unencodable result gave %s (%v); want one E_UNEXPECTED envelope", buf.String(), err)
	}
	if err := env.Encode(failingWriter{}); err == nil {
		t.Error("Encode to a failing writer reported no error")
	}
}

// bigData is shaped like a plan's data: long arrays of structs beside
// short fields.
type bigData struct {
	Profile string      `json:"profile"`
	Targets []string    `json:"targets"`
	Changes []bigChange `json:"changes"`
	Summary struct {
		Create int `json:"create"`
	} `json:"summary"`
	Files []string `json:"files,omitempty"`
}

type bigChange struct {
	Path    string   `json:"path"`
	Before  *string  `json:"before_sha256"`
	Modules []string `json:"module_ids"`
	Unified string   `json:"unified,omitempty"`
}

// TestEncodeStreamedMatchesWhole: an envelope whose data has arrays long
// enough to be written element by element is byte for byte what encoding
// it whole renders.
func TestEncodeStreamedMatchesWhole(t *testing.T) {
	d := &bigData{Profile: "default", Targets: []string{"codex"}}
	for i := range 500 {
		sha := strings.Repeat("ab", 32)
		c := bigChange{Path: filepath.Join("/p", strings.Repeat("d", i%7), "f&<>.md"), Modules: []string{"skill:s"}}
		if i%3 == 0 {
			c.Before, c.Unified = &sha, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+\"y\"\t\n"
		}
		d.Changes = append(d.Changes, c)
		d.Files = append(d.Files, c.Path)
	}
	d.Summary.Create = 500
	env := New("diff", "diff").Succeed(d, []string{"w"})
	var whole bytes.Buffer
	enc := json.NewEncoder(&whole)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(env); err != nil {
		t.Fatal(err)
	}
	var streamed bytes.Buffer
	if err := env.Encode(&streamed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), whole.Bytes()) {
		t.Fatalf("streamed envelope differs from the whole one:\n%s\nwant:\n%s", streamed.Bytes(), whole.Bytes())
	}
}
