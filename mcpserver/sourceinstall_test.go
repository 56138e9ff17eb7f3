package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallSourceArtifact: the install tool takes <source>/<artifact>
// like the CLI: the artifact is packaged at the pinned commit and deployed;
// an unknown artifact is E_PACKAGE_NOT_FOUND with suggestions.
func TestInstallSourceArtifact(t *testing.T) {
	te := newTestEnv(t)
	up := gitRepo(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	if env := callTool(t, cs, "source_add", map[string]any{"spec": "file://" + up, "name": "community", "yes": true}); !env.OK {
		t.Fatalf("source_add: %s", env.raw)
	}
	env := callTool(t, cs, "install", map[string]any{"packages": []string{"community/lint"}, "platform": "claude_code", "yes": true})
	installed, _ := env.Data["installed"].([]any)
	if !env.OK || len(installed) != 1 {
		t.Fatalf("install: %s", env.raw)
	}
	ip := installed[0].(map[string]any)
	if ip["name"] != "lint" || ip["source"] != "source:community" || !strings.HasPrefix(ip["version"].(string), "0.0.0-g") {
		t.Fatalf("installed: %v", ip)
	}
	if _, err := os.Stat(filepath.Join(te.Project, ".claude", "skills", "lint", "rules", "style.md")); err != nil {
		t.Fatalf("not deployed: %v", err)
	}
	env = callTool(t, cs, "install", map[string]any{"packages": []string{"community/lint"}, "yes": true})
	if already, _ := env.Data["already_installed"].([]any); !env.OK || len(already) != 1 {
		t.Fatalf("second install: %s", env.raw)
	}
	env = callTool(t, cs, "install", map[string]any{"packages": []string{"community/lnt"}, "yes": true})
	if env.code() != "E_PACKAGE_NOT_FOUND" || !strings.Contains(string(env.raw), `"lint"`) {
		t.Fatalf("unknown artifact: %s", env.raw)
	}
}

// TestSearchSourcesOfARepo: the search tool's repo argument picks whose
// artifact sources are searched; the server's default repo has none.
func TestSearchSourcesOfARepo(t *testing.T) {
	te := newTestEnv(t)
	up := gitRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	copyDir(t, te.Repo, other)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	if env := callTool(t, cs, "source_add", map[string]any{"repo": other, "spec": "file://" + up, "name": "community", "yes": true}); !env.OK {
		t.Fatalf("source_add: %s", env.raw)
	}
	if env := callTool(t, cs, "search", map[string]any{"repo": other, "query": "lint"}); !env.OK || !strings.Contains(string(env.raw), `"community/lint"`) {
		t.Fatalf("search with repo: %s", env.raw)
	}
	if env := callTool(t, cs, "search", map[string]any{"query": "lint"}); strings.Contains(string(env.raw), `"community/lint"`) {
		t.Fatalf("search of the default repo found the other repo's source: %s", env.raw)
	}
}
