package engine_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestImportMCPEntries turns the servers already in client configs into mcp
// modules (one per server, merged across clients when identical), skips a
// server holding a literal secret without echoing it, and a deploy of the
// imported modules then owns the entries without changing a byte.
func TestImportMCPEntries(t *testing.T) {
	env := testEnv(t)
	env.CodexHome = filepath.Join(filepath.Dir(env.Home), "codex")
	claude := "{\n  \"projects\": {},\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"npx\", \"args\": [\"gh-mcp\"], \"env\": {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}},\n    \"leaky\": {\"command\": \"x\", \"env\": {\"API_KEY\": \"sk-verysecret\"}}\n  }\n}\n"
	cursor := "{\"mcpServers\": {\"gh\": {\"command\": \"npx\", \"args\": [\"gh-mcp\"], \"env\": {\"GITHUB_TOKEN\": \"${env:GITHUB_TOKEN}\"}}}}\n"
	codex := "# mine\n[mcp_servers.docs]\nurl = \"https://docs.example.com/mcp\"\nbearer_token_env_var = \"DOCS_TOKEN\"\n"
	mustWrite(t, filepath.Join(env.Home, ".claude.json"), claude)
	mustWrite(t, filepath.Join(env.Cwd, ".cursor/mcp.json"), cursor)
	mustWrite(t, filepath.Join(env.CodexHome, "config.toml"), codex)
	repo := writeRepo(t, map[string]string{"agentpack.yaml": importManifest})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	d, warnings, err := e.Import(context.Background(), req, engine.ImportOptions{Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"create mcp:docs codex user",
		"create mcp:gh claude_code,cursor both",
		"skip_invalid mcp:leaky claude_code user",
	}
	if got := planOps(d); !slices.Equal(got, want) {
		t.Fatalf("plan:\n got %q\nwant %q", got, want)
	}
	if strings.Contains(strings.Join(warnings, "\n"), "verysecret") {
		t.Fatalf("a secret was echoed: %q", warnings)
	}
	if got := mustRead(t, filepath.Join(repo, "modules/mcp/docs.yaml")); !strings.Contains(got, "Authorization: Bearer ${DOCS_TOKEN}") {
		t.Fatalf("docs.yaml:\n%s", got)
	}
	if got := mustRead(t, filepath.Join(repo, "modules/mcp/gh.yaml")); !strings.Contains(got, "env_vars:\n    - GITHUB_TOKEN") {
		t.Fatalf("gh.yaml:\n%s", got)
	}
	// Imported modules deploy to what is already there.
	_, p, err := e.Plan(context.Background(), engine.Request{Repo: repo, Profile: "imported"})
	if err != nil {
		t.Fatal(err)
	}
	// (claude_code has scope both here, so the project's .mcp.json is new.)
	for _, c := range p.Changes {
		if slices.Contains([]string{filepath.Join(env.Home, ".claude.json"), filepath.Join(env.Cwd, ".cursor/mcp.json"), filepath.Join(env.CodexHome, "config.toml")}, c.Path.String()) {
			t.Errorf("imported server would change %s: %+v", c.Path, c.Entries)
		}
	}
}
