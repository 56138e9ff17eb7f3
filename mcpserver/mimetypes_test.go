package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestModuleFileMIMETypes checks the MIME type of module files by
// extension, in resources/list, resources/read and the resources tool.
func TestModuleFileMIMETypes(t *testing.T) {
	te := newTestEnv(t)
	skill := filepath.Join(te.Repo, "modules", "skills", "release-notes")
	want := map[string]string{
		"SKILL.md":           "text/markdown",
		"scripts/changes.sh": "text/plain",
		"data/feed.xml":      "application/xml",
		"data/table.csv":     "text/csv",
		"data/Upper.CSV":     "text/csv",
		"data/conf.yaml":     "application/x-yaml",
		"data/conf.yml":      "application/x-yaml",
		"data/pkg.json":      "application/json",
		"data/cfg.toml":      "application/toml",
		"scripts/tool.py":    "text/x-python",
		"data/notes.txt":     "text/plain",
		"data/noext":         "text/plain",
	}
	for name := range want {
		p := filepath.Join(skill, filepath.FromSlash(name))
		if _, err := os.Stat(p); err == nil {
			continue // a fixture file
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x,y\n1,2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, te.server(t), "2025-11-25")

	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, r := range res.Resources {
		listed[r.URI] = r.MIMEType
	}
	for name, mime := range want {
		uri := moduleURI("skill:release-notes", name)
		if listed[uri] != mime {
			t.Errorf("list %s: mime %q, want %q", uri, listed[uri], mime)
		}
		c, err := readURI(t, cs, uri)
		if err != nil || c.MIMEType != mime {
			t.Errorf("read %s: %+v %v, want mime %q", uri, c, err, mime)
		}
		env := callTool(t, cs, "resources", M{"action": "read", "uri": uri})
		if !env.OK || env.Data["mime_type"] != mime {
			t.Errorf("resources tool read %s: want mime %q: %s", uri, mime, env.raw)
		}
	}
}
