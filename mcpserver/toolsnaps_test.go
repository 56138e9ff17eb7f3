package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const toolsnapsDir = "testdata/toolsnaps"

// TestToolSnapshots freezes each tool's definition (name, description,
// input schema, annotations) in testdata/toolsnaps/<tool>.json. A missing,
// different or stale snapshot fails; `go test -run TestToolSnapshots
// -update` rewrites them — read the diff before committing.
func TestToolSnapshots(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string][]byte{}
	for _, tl := range listed.Tools {
		served[tl.Name], _ = json.Marshal(tl)
	}
	if *update {
		_ = os.RemoveAll(toolsnapsDir)
		if err := os.MkdirAll(toolsnapsDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, tl := range allTools() {
		names = append(names, tl.name)
		got, err := json.MarshalIndent(tl.def(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		if !jsonEqual(t, got, served[tl.name]) {
			t.Errorf("%s: tools/list serves something else than its definition:\n%s", tl.name, served[tl.name])
		}
		path := filepath.Join(toolsnapsDir, tl.name+".json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (%v); run go test -run TestToolSnapshots -update and review it", tl.name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s: the tool changed; if intended, run with -update and review the diff.\ngot:\n%s\nwant:\n%s", tl.name, got, want)
		}
	}
	entries, _ := os.ReadDir(toolsnapsDir)
	for _, e := range entries {
		if name := strings.TrimSuffix(e.Name(), ".json"); !slices.Contains(names, name) {
			t.Errorf("stale snapshot %s: no such tool", e.Name())
		}
	}
}

// TestWriteToolsHiddenAndNotReadOnly: write tools never claim readOnlyHint,
// declare destructiveHint, and are not listed in read-only mode; read
// tools claim readOnlyHint.
func TestWriteToolsHiddenAndNotReadOnly(t *testing.T) {
	te := newTestEnv(t)
	for _, tl := range allTools() {
		ann := tl.def().Annotations
		if tl.write && (ann.ReadOnlyHint || ann.DestructiveHint == nil || !*ann.DestructiveHint) {
			t.Errorf("%s writes but has readOnlyHint=%v destructiveHint=%v", tl.name, ann.ReadOnlyHint, ann.DestructiveHint)
		}
		if !tl.write && !ann.ReadOnlyHint {
			t.Errorf("%s is read-only but has no readOnlyHint", tl.name)
		}
	}
	ro := listToolNames(t, connect(t, te.server(t), "2025-11-25"))
	rw := listToolNames(t, connect(t, te.server(t, allowWrite), "2025-11-25"))
	for _, tl := range allTools() {
		if tl.write && slices.Contains(ro, tl.name) {
			t.Errorf("%s is listed in read-only mode", tl.name)
		}
		if !slices.Contains(rw, tl.name) {
			t.Errorf("%s is not listed with --allow-write", tl.name)
		}
	}
}
