package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSymlinkedSingleFileModuleReadable: a single-file module (prompt,
// command, agent) whose .md is a symlink to another file of the repo loads,
// deploys, is served by prompts/get and listed by resources/list, so
// resources/read serves it too (the file the manifest names, as the engine
// reads it), and still nothing but that file name.
func TestSymlinkedSingleFileModuleReadable(t *testing.T) {
	te := newTestEnv(t)
	prompt := filepath.Join(te.Repo, "modules", "prompts", "review.md")
	shared := filepath.Join(te.Repo, "shared", "review.md")
	data, err := os.ReadFile(prompt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shared, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(prompt); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "shared", "review.md"), prompt); err != nil {
		t.Skip("no symlinks:", err)
	}
	cs := connect(t, te.server(t), "2025-11-25")
	const uri = "agentpack://modules/prompt:review/review.md"
	listed := false
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		listed = listed || r.URI == uri
	}
	if !listed {
		t.Fatalf("%s not listed", uri)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "prompt_review", Arguments: map[string]string{"arguments": "x"}}); err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	if c, err := readURI(t, cs, uri); err != nil || c.Text != string(data) {
		t.Fatalf("resources/read of a listed resource: %v", err)
	}
	for _, other := range []string{
		"agentpack://modules/prompt:review/other.md",
		"agentpack://modules/prompt:review/../../shared/review.md",
		"agentpack://modules/prompt:review/%2e%2e/%2e%2e/shared/review.md",
		"agentpack://modules/prompt:review/review.md/x",
	} {
		if c, err := readURI(t, cs, other); err == nil {
			t.Errorf("%s: read %q", other, c.Text)
		} else if !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "E_IO_INVALID_PATH") {
			t.Errorf("%s: %v", other, err)
		}
	}
}
