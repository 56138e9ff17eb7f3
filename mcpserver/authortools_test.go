package mcpserver

import (
	"context"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The authoring tools over MCP: create a package from native assets,
// validate a package folder, add a registry,
// publish to it, find the package with search and describe it with info,
// each answering with the CLI's envelope.
func TestAuthorToolsRoundTrip(t *testing.T) {
	te := newTestEnv(t)
	kit := filepath.Join(t.TempDir(), "kit")
	for rel, body := range map[string]string{
		"aam.yaml":               "name: \"@acme/review-kit\"\nversion: 1.2.0\ndescription: Review helpers.\nartifacts:\n  skills:\n    - name: review\n      path: skills/review\n      description: Review the diff.\n",
		"skills/review/SKILL.md": "---\nname: review\ndescription: Review the diff.\n---\nbody\n",
	} {
		p := filepath.Join(kit, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := filepath.Join(t.TempDir(), "reg")
	if err := os.MkdirAll(reg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reg, "registry.yaml"), []byte("name: team\ntype: local\napi_version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	assets := filepath.Join(t.TempDir(), "assets")
	if err := os.MkdirAll(filepath.Join(assets, ".claude", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assets, ".claude", "commands", "ship.md"), []byte("---\ndescription: Ship it.\n---\nShip.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if env := callTool(t, cs, "create_package", M{"path": assets, "name": "ship-kit"}); env.OK {
		t.Fatalf("create_package without yes succeeded: %s", env.raw)
	}
	if env := callTool(t, cs, "create_package", M{"path": assets, "name": "ship-kit", "artifact_types": []string{"command"}, "yes": true}); !env.OK ||
		!strings.Contains(string(env.raw), `"artifacts_included":["ship"]`) || !strings.Contains(string(env.raw), `"command":"create-package"`) {
		t.Fatalf("create_package: %s", env.raw)
	}
	if env := callTool(t, cs, "validate", M{"path": assets}); !env.OK || !strings.Contains(string(env.raw), `"valid":true`) {
		t.Fatalf("validate the created package: %s", env.raw)
	}
	if env := callTool(t, cs, "validate", M{"path": kit}); !env.OK || !strings.Contains(string(env.raw), `"valid":true`) {
		t.Fatalf("validate: %s", env.raw)
	}
	if env := callTool(t, cs, "publish", M{"path": kit}); env.OK {
		t.Fatalf("publish without yes succeeded: %s", env.raw)
	}
	if env := callTool(t, cs, "registry_add", M{"name": "team", "url": reg, "default": true, "yes": true}); !env.OK {
		t.Fatalf("registry_add: %s", env.raw)
	}
	if env := callTool(t, cs, "registry_list", M{}); !env.OK || !strings.Contains(string(env.raw), `"accessible":true`) {
		t.Fatalf("registry_list: %s", env.raw)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: URIRegistries})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"name": "team"`) {
		t.Fatalf("%s: %v %q", URIRegistries, err, res.Contents[0].Text)
	}
	if env := callTool(t, cs, "publish", M{"path": kit, "yes": true}); !env.OK || !strings.Contains(string(env.raw), `"registry":"team"`) {
		t.Fatalf("publish: %s", env.raw)
	}
	if env := callTool(t, cs, "search", M{"query": "review", "package_type": "skill"}); !env.OK || !strings.Contains(string(env.raw), `"name":"@acme/review-kit"`) {
		t.Fatalf("search: %s", env.raw)
	}
	if env := callTool(t, cs, "info", M{"package_name": "@acme/review-kit"}); !env.OK || !strings.Contains(string(env.raw), `"version":"1.2.0"`) {
		t.Fatalf("info: %s", env.raw)
	}
}
