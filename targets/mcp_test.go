package targets

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
)

func mcpModule(t *testing.T, s module.MCPServer) *module.LoadedModule {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return &module.LoadedModule{Module: &module.Module{ID: "mcp:" + s.Name, Type: module.TypeMCP}, MCP: &s}
}

var (
	stdioServer = module.MCPServer{Name: "gh", Command: "npx", Args: []string{"-y", "gh-mcp"},
		Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG": "debug", "URL_WITH": "https://${HOST}/x"}, EnvVars: []string{"HOME_DIR"}}
	httpServer = module.MCPServer{Name: "docs", Transport: "http", URL: "https://mcp.example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}", "X-Api-Key": "${DOCS_KEY}", "X-Team": "core"}}
)

// TestMCPShapes pins each client's entry for a stdio and an http server:
// where the file is, its syntax and container, and the entry itself.
func TestMCPShapes(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		target string
		scope  target.Scope
		file   string
		format string
		stdio  string
		http   string
		warns  int
	}{
		{"claude_code", target.ScopeUser, filepath.Join(e.home, ".claude.json"), "json",
			`{"args":["-y","gh-mcp"],"command":"npx","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","HOME_DIR":"${HOME_DIR}","LOG":"debug","URL_WITH":"https://${HOST}/x"}}`,
			`{"headers":{"Authorization":"Bearer ${DOCS_TOKEN}","X-Api-Key":"${DOCS_KEY}","X-Team":"core"},"type":"http","url":"https://mcp.example.com/mcp"}`, 0},
		{"claude_code", target.ScopeProject, filepath.Join(e.proj, ".mcp.json"), "json",
			`{"args":["-y","gh-mcp"],"command":"npx","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","HOME_DIR":"${HOME_DIR}","LOG":"debug","URL_WITH":"https://${HOST}/x"}}`,
			`{"headers":{"Authorization":"Bearer ${DOCS_TOKEN}","X-Api-Key":"${DOCS_KEY}","X-Team":"core"},"type":"http","url":"https://mcp.example.com/mcp"}`, 0},
		{"cursor", target.ScopeProject, filepath.Join(e.proj, ".cursor/mcp.json"), "json",
			`{"args":["-y","gh-mcp"],"command":"npx","env":{"GITHUB_TOKEN":"${env:GITHUB_TOKEN}","HOME_DIR":"${env:HOME_DIR}","LOG":"debug","URL_WITH":"https://${env:HOST}/x"}}`,
			`{"headers":{"Authorization":"Bearer ${env:DOCS_TOKEN}","X-Api-Key":"${env:DOCS_KEY}","X-Team":"core"},"url":"https://mcp.example.com/mcp"}`, 0},
		{"vscode", target.ScopeProject, filepath.Join(e.proj, ".vscode/mcp.json"), "json",
			`{"args":["-y","gh-mcp"],"command":"npx","env":{"GITHUB_TOKEN":"${env:GITHUB_TOKEN}","HOME_DIR":"${env:HOME_DIR}","LOG":"debug","URL_WITH":"https://${env:HOST}/x"},"type":"stdio"}`,
			`{"headers":{"Authorization":"Bearer ${env:DOCS_TOKEN}","X-Api-Key":"${env:DOCS_KEY}","X-Team":"core"},"type":"http","url":"https://mcp.example.com/mcp"}`, 0},
		{"codex", target.ScopeUser, filepath.Join(e.codexHome, "config.toml"), "toml",
			`{"args":["-y","gh-mcp"],"command":"npx","env":{"LOG":"debug"},"env_vars":["GITHUB_TOKEN","HOME_DIR"]}`,
			`{"bearer_token_env_var":"DOCS_TOKEN","env_http_headers":{"X-Api-Key":"DOCS_KEY"},"http_headers":{"X-Team":"core"},"url":"https://mcp.example.com/mcp"}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.target+"_"+string(tc.scope), func(t *testing.T) {
			var warns []string
			a := map[string]warningRenderer{"claude_code": ClaudeCode{}, "codex": Codex{}, "cursor": Cursor{}, "vscode": VSCode{}}[tc.target]
			out, err := a.render(e.rc(tc.target, tc.scope, nil), []*module.LoadedModule{mcpModule(t, httpServer), mcpModule(t, stdioServer)},
				func(f string, args ...any) { warns = append(warns, f) })
			if err != nil {
				t.Fatal(err)
			}
			f := file(out, tc.file)
			if f == nil || f.Keyed == nil {
				t.Fatalf("no key-level file %s in %+v", tc.file, out.Files)
			}
			if string(f.Keyed.Format) != tc.format || len(f.Keyed.Entries) != 2 {
				t.Fatalf("format %s, %d entries", f.Keyed.Format, len(f.Keyed.Entries))
			}
			if got := string(f.Keyed.Entry("gh").Canonical()); got != tc.stdio {
				t.Errorf("stdio entry\n got %s\nwant %s", got, tc.stdio)
			}
			if got := string(f.Keyed.Entry("docs").Canonical()); got != tc.http {
				t.Errorf("http entry\n got %s\nwant %s", got, tc.http)
			}
			if len(warns) != tc.warns {
				t.Errorf("warnings %q, want %d", warns, tc.warns)
			}
			if !hasRoot(out, filepath.Dir(tc.file), false) {
				t.Errorf("no root for %s", tc.file)
			}
		})
	}
}

func TestMCPNoModulesNoRoot(t *testing.T) {
	e := newTestEnv(t)
	out, err := ClaudeCode{}.render(e.rc("claude_code", target.ScopeUser, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hasRoot(out, e.home, false) {
		t.Fatal("$HOME claimed as a root without any MCP server")
	}
}

func TestMCPDuplicateNameConflicts(t *testing.T) {
	e := newTestEnv(t)
	a, b := mcpModule(t, stdioServer), mcpModule(t, stdioServer)
	b.ID = "mcp:other"
	if _, err := (VSCode{}).render(e.rc("vscode", target.ScopeProject, nil), []*module.LoadedModule{a, b}, nil); err == nil {
		t.Fatal("two modules defining server gh must conflict")
	}
}

func TestMCPSecretsRefused(t *testing.T) {
	for _, s := range []module.MCPServer{
		{Name: "a", Transport: "http", URL: "https://x", Headers: map[string]string{"Authorization": "Bearer abc"}},
		{Name: "a", Command: "x", Env: map[string]string{"API_KEY": "plain"}},
		{Name: "a", Command: "x", Env: map[string]string{"OTHER": "sk-live-123"}},
		{Name: "a", Command: "x", Args: []string{"--token", "xoxb-1"}},
		{Name: "a b", Command: "x"},
		{Name: "a", Command: "x", URL: "https://x"},
	} {
		if err := s.Validate(); err == nil {
			b, _ := json.Marshal(s)
			t.Errorf("%s accepted", b)
		}
	}
}
