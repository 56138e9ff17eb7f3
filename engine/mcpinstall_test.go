package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

// TestMCPInstallEachClient registers agentpack in every client's file
// next to what is there, checks the client's shape, that a second run
// changes nothing, that uninstall gives back the exact bytes, and that
// rollback undoes an install.
func TestMCPInstallEachClient(t *testing.T) {
	cases := []struct {
		client, scope, file, existing, want string
	}{
		{"claude_code", "", ".claude.json", userClaudeJSON,
			"\"agentpack\": {\n      \"args\": [\n        \"mcp\",\n        \"serve\",\n        \"--allow-write\"\n      ],\n      \"command\": \"/opt/bin/agentpack\"\n    }"},
		{"claude_code", "project", "proj/.mcp.json", "{\n  \"mcpServers\": {}\n}\n", "\"agentpack\": {"},
		{"codex", "", "codex/config.toml", "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n",
			"[mcp_servers.agentpack]\ncommand = \"/opt/bin/agentpack\"\nargs = [\"mcp\", \"serve\", \"--allow-write\"]\n"},
		{"cursor", "", "proj/.cursor/mcp.json", "", "\"agentpack\": {"},
		{"cursor", "user", ".cursor/mcp.json", "{\"mcpServers\": {\"x\": {\"url\": \"https://x\"}}}", "\"agentpack\": {"},
		{"vscode", "", "proj/.vscode/mcp.json", "{\n\t// inputs stay\n\t\"inputs\": [],\n\t\"servers\": {},\n}\n", "\"type\": \"stdio\""},
	}
	for _, tc := range cases {
		t.Run(tc.client+"_"+tc.scope, func(t *testing.T) {
			env := testEnv(t)
			env.CodexHome = filepath.Join(filepath.Dir(env.Home), "codex")
			e := engine.New(env, targets.NewSet())
			path := filepath.Join(env.Home, tc.file)
			if strings.HasPrefix(tc.file, "proj/") || strings.HasPrefix(tc.file, "codex/") {
				path = filepath.Join(filepath.Dir(env.Home), tc.file)
			}
			if tc.existing != "" {
				mustWrite(t, path, tc.existing)
			}
			opt := engine.MCPInstallOptions{Client: tc.client, Scope: tc.scope, Command: "/opt/bin/agentpack", Args: []string{"mcp", "serve", "--allow-write"}}
			d, _, err := e.MCPInstall(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if d.Path.String() != path || d.Action != "installed" || !d.Applied {
				t.Fatalf("got %+v, want installed into %s", d, path)
			}
			got := mustRead(t, path)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("%s lacks %q:\n%s", path, tc.want, got)
			}
			if tc.existing != "" {
				// What was there is still there, byte for byte, around the entry.
				if tc.client == "codex" && !strings.HasPrefix(got, tc.existing) {
					t.Fatalf("codex config changed outside the entry:\n%s", got)
				}
			}
			d, _, err = e.MCPInstall(context.Background(), opt)
			if err != nil || d.Action != "unchanged" || d.Applied {
				t.Fatalf("second install: %+v, %v", d, err)
			}
			opt.Uninstall = true
			if d, _, err = e.MCPInstall(context.Background(), opt); err != nil || d.Action != "uninstalled" {
				t.Fatalf("uninstall: %+v, %v", d, err)
			}
			after, _ := os.ReadFile(path)
			if tc.existing != "" && string(after) != tc.existing {
				t.Fatalf("uninstall did not restore the file:\n%s", after)
			}
			if tc.existing == "" && strings.Contains(string(after), "agentpack") {
				t.Fatalf("entry left: %s", after)
			}
			if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
				t.Fatal(err)
			}
			if back := mustRead(t, path); back != got {
				t.Fatalf("rollback of the uninstall is not byte-exact:\n%s", back)
			}
		})
	}
}

func TestMCPInstallRefusals(t *testing.T) {
	env := testEnv(t)
	e := engine.New(env, targets.NewSet())
	_, _, err := e.MCPInstall(context.Background(), engine.MCPInstallOptions{Client: "vscode", Scope: "user", Command: "/x"})
	if apperr.CodeOf(err) != apperr.TargetUnsupported {
		t.Fatalf("vscode user scope: %v", err)
	}
	_, _, err = e.MCPInstall(context.Background(), engine.MCPInstallOptions{Client: "nope", Command: "/x"})
	if apperr.CodeOf(err) != apperr.TargetUnsupported {
		t.Fatalf("unknown client: %v", err)
	}
	_, _, err = e.MCPInstall(context.Background(), engine.MCPInstallOptions{Client: "codex", Name: "bad name", Command: "/x"})
	if apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Fatalf("bad name: %v", err)
	}
}
