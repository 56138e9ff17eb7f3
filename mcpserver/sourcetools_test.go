package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gitRepo builds a local repo with one skill and one prompt (no network).
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "community")
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"skills/lint/SKILL.md":       "---\nname: lint\ndescription: Lints code\n---\nRun the linter.\n",
		"skills/lint/rules/style.md": "Keep lines short.\n",
		"prompts/ask.md":             "---\ndescription: Ask well\n---\nAsk one question.\n",
	}
	wt, _ := r.Worktree()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wt.Commit("init", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@t", When: time.Unix(1700000000, 0)}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSourceToolsAndResources(t *testing.T) {
	te := newTestEnv(t)
	up := gitRepo(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")

	// Writes need yes=true, like every write tool.
	if env := callTool(t, cs, "source_add", map[string]any{"spec": "file://" + up}); env.code() != "E_CONFIRM_REQUIRED" {
		t.Fatalf("want E_CONFIRM_REQUIRED, got %s", env.raw)
	}
	env := callTool(t, cs, "source_add", map[string]any{"spec": "file://" + up, "name": "community", "yes": true})
	if !env.OK || env.CommandID != "source add" {
		t.Fatalf("source_add failed: %s", env.raw)
	}
	if data, _ := os.ReadFile(filepath.Join(te.Repo, "agentpack.yaml")); !strings.Contains(string(data), "name: community") {
		t.Fatalf("agentpack.yaml has no source entry:\n%s", data)
	}
	if env := callTool(t, cs, "source_list", map[string]any{}); !env.OK || !strings.Contains(string(env.raw), `"community"`) {
		t.Fatalf("source_list: %s", env.raw)
	}
	scan := callTool(t, cs, "source_scan", map[string]any{"name": "community"})
	if !scan.OK || !strings.Contains(string(scan.raw), `"lint"`) || !strings.Contains(string(scan.raw), `"ask"`) {
		t.Fatalf("source_scan: %s", scan.raw)
	}
	if env := callTool(t, cs, "source_candidates", map[string]any{"type": "skill"}); !env.OK || !strings.Contains(string(env.raw), `"lint"`) || strings.Contains(string(env.raw), `"ask"`) {
		t.Fatalf("source_candidates: %s", env.raw)
	}
	if env := callTool(t, cs, "source_diff", map[string]any{"name": "community"}); !env.OK {
		t.Fatalf("source_diff: %s", env.raw)
	}
	if env := callTool(t, cs, "source_scan", map[string]any{"name": "nope"}); env.code() != "E_SOURCE_NOT_FOUND" {
		t.Fatalf("want E_SOURCE_NOT_FOUND, got %s", env.raw)
	}
	if env := callTool(t, cs, "source_update", map[string]any{"yes": true}); env.code() != "E_INVALID_ARGUMENT" {
		t.Fatalf("want E_INVALID_ARGUMENT without name or all, got %s", env.raw)
	}

	// The same data as resources.
	for uri, want := range map[string]string{
		URISources:                                 `"community"`,
		"agentpack://sources/community":            `"lint"`,
		"agentpack://sources/community/candidates": `"ask"`,
	} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if text := res.Contents[0].Text; !strings.Contains(text, want) || !json.Valid([]byte(text)) {
			t.Fatalf("%s: %s", uri, text)
		}
	}
	for _, uri := range []string{"agentpack://sources/../x", "agentpack://sources/%2e%2e/candidates", "agentpack://sources/nope"} {
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatalf("%s: want an error", uri)
		}
	}
	// A missing source is "resource not found", as a missing module.
	for _, uri := range []string{"agentpack://sources/nope", "agentpack://sources/nope/candidates"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "Resource not found") {
			t.Fatalf("%s: want resource not found, got %v", uri, err)
		}
	}

	if env := callTool(t, cs, "source_remove", map[string]any{"name": "community", "yes": true}); !env.OK {
		t.Fatalf("source_remove: %s", env.raw)
	}
}
