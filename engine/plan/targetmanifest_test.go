package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// TestRenderTargetManifestIsEncodingJSON checks the manifest bytes against
// encoding/json's indented output for every kind of entry: whole files,
// marked ones, key-level ones, strings that need escaping, few and many.
func TestRenderTargetManifestIsEncodingJSON(t *testing.T) {
	odd := "a<b>&\"c\\d\u2028é\x01\t/x.md"
	kinds := []ManagedFile{
		{Path: "s/SKILL.md", SHA256: "ab", ModuleIDs: []string{"skill:s"}},
		{Path: "s/none.md", SHA256: "cd"},
		{Path: "s/empty.md", SHA256: "cd", ModuleIDs: []string{}},
		{Path: "s/two.md", SHA256: "ef", ModuleIDs: []string{"skill:a", "skill:b"}},
		{Path: "AGENTS.md", SHA256: "01", OwnedSHA256: "02", ModuleIDs: []string{"instructions:x"}},
		{Path: odd, SHA256: odd, OwnedSHA256: odd, ModuleIDs: []string{odd}},
		{Path: "mcp.json", SHA256: "03", ModuleIDs: []string{"mcp:a"}, KeyLevel: &KeyLevel{Format: "json", Container: []string{"mcpServers"},
			Entries: []ManagedEntry{{Name: "a<", SHA256: "04", ModuleIDs: []string{"mcp:a"}}, {Name: "b", SHA256: "05"}}, Created: true}},
		{Path: "cfg.toml", SHA256: "06", KeyLevel: &KeyLevel{Format: "toml", Container: []string{"mcp_servers"}}},
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []int{0, 1, len(kinds), 200, 1500} {
		files := make([]ManagedFile, n)
		for i := range files {
			files[i] = kinds[i%len(kinds)]
			files[i].Path = fmt.Sprintf("%04d/%s", i, files[i].Path)
		}
		for _, id := range []string{"", "20260102T030405Z"} {
			want := TargetManifest{SchemaVersion: TargetManifestSchemaVersion, GeneratedAt: now.Format(time.RFC3339), Tool: "codex",
				SnapshotID: id, Profile: "default", Repo: "/r<&>", ManagedFiles: append([]ManagedFile{}, files...)}
			wb, err := json.MarshalIndent(want, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			wb = append(wb, '\n')
			got := RenderTargetManifest("codex", id, "default", "/r<&>", now, files)
			if !bytes.Equal(got, wb) {
				t.Fatalf("%d files, snapshot %q: rendered\n%s\nencoding/json\n%s", n, id, got, wb)
			}
			var streamed bytes.Buffer
			if err := WriteTargetManifestOf(&streamed, "codex", id, "default", "/r<&>", now, len(files), func(i int) ManagedFile { return files[i] }); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(streamed.Bytes(), wb) {
				t.Fatalf("%d files, snapshot %q: written\n%s\nencoding/json\n%s", n, id, streamed.Bytes(), wb)
			}
		}
	}
}

// What a deploy records of the manifest it writes (DecodedManifestOf) is
// what parsing the manifest's text and caching it records, for every kind
// of entry, the empty lists the text leaves out included; a string that is
// not UTF-8, which the text would not keep, is left to be parsed.
func TestDecodedManifestOfIsWhatParsingRecords(t *testing.T) {
	kinds := []ManagedFile{
		{Path: "s/SKILL.md", SHA256: "ab", ModuleIDs: []string{"skill:s"}},
		{Path: "s/none.md", SHA256: "cd"},
		{Path: "s/empty.md", SHA256: "cd", ModuleIDs: []string{}},
		{Path: "AGENTS.md", SHA256: "01", OwnedSHA256: "02", ModuleIDs: []string{"instructions:x"}},
		{Path: "odd<&>\u2028é.md", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ModuleIDs: []string{"a", "b"}},
		{Path: "mcp.json", SHA256: "03", ModuleIDs: []string{"mcp:a"}, KeyLevel: &KeyLevel{Format: "json", Container: []string{"mcpServers"},
			Entries: []ManagedEntry{{Name: "a<", SHA256: "04", ModuleIDs: []string{"mcp:a"}}, {Name: "b", SHA256: "05", ModuleIDs: []string{}}}, Created: true}},
		{Path: "cfg.toml", SHA256: "06", KeyLevel: &KeyLevel{Format: "toml", Container: []string{}, Entries: []ManagedEntry{}}},
		{Path: "made.json", SHA256: "07", KeyLevel: &KeyLevel{Created: true}},
		{Path: "plain.md", SHA256: "08", KeyLevel: &KeyLevel{}},
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []int{0, 1, len(kinds), 300} {
		files := make([]ManagedFile, n)
		for i := range files {
			files[i] = kinds[i%len(kinds)]
			files[i].Path = fmt.Sprintf("%04d/%s", i, files[i].Path)
		}
		file := func(i int) ManagedFile { return files[i] }
		sys := fsys.NewMemSystem()
		path := fsys.AbsPath("/root/manifest.json")
		if err := sys.WriteFile(path, RenderTargetManifestOf("codex", "snap", "default", "/repo", now, n, file), 0o644); err != nil {
			t.Fatal(err)
		}
		parsed, ok := parseTargetManifest(sys, path, func(w string) { t.Fatal(w) })
		if !ok {
			t.Fatalf("n=%d: the rendered manifest does not parse", n)
		}
		decoded, ok := DecodedManifestOf("codex", "snap", "default", "/repo", now, n, file)
		if want := encodeManifest(parsed); !ok || !bytes.Equal(decoded, want) {
			got, _ := decodeManifest(decoded, nil)
			t.Errorf("n=%d: recorded %+v, parsing records %+v", n, got, parsed)
		}
	}
	bad := []ManagedFile{{Path: "a\xffb.md", SHA256: "09"}}
	if _, ok := DecodedManifestOf("codex", "snap", "default", "/repo", now, 1, func(i int) ManagedFile { return bad[i] }); ok {
		t.Error("a path that is not UTF-8 was recorded; its text replaces the byte")
	}
}
