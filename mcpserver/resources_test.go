package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func readURI(t testing.TB, cs *mcp.ClientSession, uri string) (*mcp.ResourceContents, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0], nil
}

func TestResourcesList(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Resources {
		got[r.URI] = r.MIMEType
	}
	for uri, mime := range map[string]string{
		URIConfig: mimeTOML, URIManifest: mimeJSON, URILock: mimeJSON, URISnapshots: mimeJSON,
		"agentpack://modules/skill:release-notes/SKILL.md":           mimeMarkdown,
		"agentpack://modules/skill:release-notes/scripts/changes.sh": mimeText,
		"agentpack://modules/prompt:review/review.md":                mimeMarkdown,
		"agentpack://modules/command:ap-plan/ap-plan.md":             mimeMarkdown,
	} {
		if got[uri] != mime {
			t.Errorf("%s: mime %q, want %q (listed: %v)", uri, got[uri], mime, got)
		}
	}
	// agent:reviewer is only in the work profile.
	if _, ok := got["agentpack://modules/agent:reviewer/reviewer.md"]; ok {
		t.Error("listed a module outside the default profile")
	}
	tpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, x := range tpl.ResourceTemplates {
		uris = append(uris, x.URITemplate)
	}
	slices.Sort(uris)
	if want := []string{ModuleURITemplate, PackageURITemplate, SourceURITemplate, SourceCandidatesTemplate}; !slices.Equal(uris, sortedCopy(want)) {
		t.Fatalf("templates = %v, want %v", uris, want)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestResourcesRead(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")

	// Absent files are JSON null, not errors.
	for _, uri := range []string{URIConfig, URILock} {
		c, err := readURI(t, cs, uri)
		if err != nil || c.Text != "null" || c.MIMEType != mimeJSON {
			t.Errorf("%s: %+v %v", uri, c, err)
		}
	}
	c, err := readURI(t, cs, URIManifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version int `json:"version"`
		Modules []struct {
			ID string `json:"id"`
		} `json:"modules"`
	}
	if err := json.Unmarshal([]byte(c.Text), &m); err != nil || m.Version != 1 || len(m.Modules) != 6 {
		t.Fatalf("manifest: %v %s", err, c.Text)
	}
	if c, err := readURI(t, cs, URISnapshots); err != nil || !strings.Contains(c.Text, `"snapshots": []`) {
		t.Fatalf("snapshots: %+v %v", c, err)
	}

	// Fresh on every read: files created after the server started show.
	if err := os.WriteFile(filepath.Join(te.APHome, "config.toml"), []byte("[mcp]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(te.Repo, lockfile.FileName), []byte(`{"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := readURI(t, cs, URIConfig); c.Text != "[mcp]\n" || c.MIMEType != mimeTOML {
		t.Errorf("config: %+v", c)
	}
	if c, _ := readURI(t, cs, URILock); c.Text != `{"version":1}` {
		t.Errorf("lock: %+v", c)
	}

	want, _ := os.ReadFile(filepath.Join(te.Repo, "modules", "skills", "release-notes", "scripts", "changes.sh"))
	for _, uri := range []string{
		"agentpack://modules/skill:release-notes/scripts/changes.sh",
		"agentpack://modules/skill%3Arelease-notes/scripts%2Fchanges.sh", // RFC 6570 expansion of the template
	} {
		c, err := readURI(t, cs, uri)
		if err != nil || c.Text != string(want) || c.MIMEType != mimeText {
			t.Errorf("%s: %+v %v", uri, c, err)
		}
	}
	if c, err := readURI(t, cs, "agentpack://modules/prompt:review/review.md"); err != nil || c.MIMEType != mimeMarkdown || !strings.Contains(c.Text, "$ARGUMENTS") {
		t.Errorf("prompt file: %+v %v", c, err)
	}
}

func TestResourcesRefused(t *testing.T) {
	te := newTestEnv(t)
	// A file next to the module folder that traversal would reach.
	if err := os.WriteFile(filepath.Join(te.Repo, "modules", "skills", "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, te.server(t), "2025-11-25")
	for _, uri := range []string{
		"agentpack://modules/skill:release-notes/../secret.txt",
		"agentpack://modules/skill:release-notes/%2e%2e/secret.txt",
		"agentpack://modules/skill:release-notes/%2E%2E%2Fsecret.txt",
		"agentpack://modules/skill:release-notes/scripts/../../secret.txt",
		"agentpack://modules/skill:release-notes/%2Fetc%2Fpasswd",
		"agentpack://modules/prompt:review/../agents/reviewer.md",
		"agentpack://modules/prompt:review/other.md",
		"agentpack://modules/nope:x/SKILL.md",
		"agentpack://modules/skill:release-notes/missing.md",
		"agentpack://elsewhere",
		"file:///etc/passwd",
	} {
		c, err := readURI(t, cs, uri)
		if err == nil {
			t.Errorf("%s: read %q", uri, c.Text)
			continue
		}
		if strings.Contains(err.Error(), "secret") && !strings.Contains(err.Error(), "secret.txt") {
			t.Errorf("%s: error leaks content: %v", uri, err)
		}
	}
	// The resources tool refuses the same way, as an envelope.
	env := callTool(t, cs, "resources", M{"action": "read", "uri": "agentpack://modules/skill:release-notes/%2e%2e/secret.txt"})
	if env.code() != "E_IO_INVALID_PATH" {
		t.Fatalf("tool traversal: %s", env.raw)
	}
	// And the server keeps serving.
	if _, err := readURI(t, cs, URIManifest); err != nil {
		t.Fatal(err)
	}
}

// TestModuleFilesComeFromTheEngine: module files are served as the engine
// loaded them, never read from the module folder by the server, so a link
// leaving the module (which the engine refuses) cannot be served, and a
// file the engine did not load is not found.
func TestModuleFilesComeFromTheEngine(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	skill := filepath.Join(te.Repo, "modules", "skills", "release-notes")
	if c, err := readURI(t, cs, "agentpack://modules/skill:release-notes/SKILL.md"); err != nil || !strings.Contains(c.Text, "name:") {
		t.Fatalf("SKILL.md: %+v %v", c, err)
	}
	// A file added after loading is served from a fresh load.
	if err := os.WriteFile(filepath.Join(skill, "later.md"), []byte("later"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := readURI(t, cs, "agentpack://modules/skill:release-notes/later.md"); err != nil || c.Text != "later" {
		t.Fatalf("later.md: %+v %v", c, err)
	}
	// A link leaving the module makes the engine refuse the module, so
	// nothing behind the link is served.
	outside := filepath.Join(te.Home, "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(skill, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	env := callTool(t, cs, "resources", M{"action": "read", "uri": "agentpack://modules/skill:release-notes/link.txt"})
	if env.OK || strings.Contains(string(env.raw), "secret\"") || env.code() != "E_MODULE_INVALID" {
		t.Fatalf("a link leaving the module: %s", env.raw)
	}
}

func TestManifestNullWithoutRepo(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t, func(o *Options) { o.Defaults.Repo = filepath.Join(te.Home, "none") })
	cs := connect(t, s, "2025-11-25")
	c, err := readURI(t, cs, URIManifest)
	if err != nil || c.Text != "null" {
		t.Fatalf("manifest without repo: %+v %v", c, err)
	}
	// Listing still works and shows the fixed resources.
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) != len(fixedResources) {
		t.Fatalf("list without repo: %v %v", res, err)
	}
	env := callTool(t, cs, "resources", M{"action": "list"})
	if !env.OK || len(env.Warnings) != 1 || !strings.Contains(env.Warnings[0], "E_CONFIG_MISSING") {
		t.Fatalf("resources list without repo: %s", env.raw)
	}
	if env := callTool(t, cs, "plan", nil); env.code() != "E_CONFIG_MISSING" {
		t.Fatalf("plan without repo: %s", env.raw)
	}
}

func TestResourcesTool(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	env := callTool(t, cs, "resources", M{"action": "read", "uri": "agentpack://modules/command:ap-plan/ap-plan.md"})
	if !env.OK || env.Data["mime_type"] != mimeMarkdown || !strings.Contains(env.Data["text"].(string), "agentpack plan") {
		t.Fatalf("read: %s", env.raw)
	}
	env = callTool(t, cs, "resources", M{"action": "read", "uri": URIManifest})
	if !env.OK || env.Data["mime_type"] != mimeJSON {
		t.Fatalf("read manifest: %s", env.raw)
	}
	env = callTool(t, cs, "resources", M{"action": "search", "query": "STAGED"})
	matches := env.Data["matches"].([]any)
	if len(matches) != 1 || matches[0].(map[string]any)["module_id"] != "prompt:review" {
		t.Fatalf("search: %s", env.raw)
	}
	env = callTool(t, cs, "resources", M{"action": "search", "query": "zzz-nothing"})
	if !env.OK || len(env.Data["matches"].([]any)) != 0 {
		t.Fatalf("empty search: %s", env.raw)
	}
	if env := callTool(t, cs, "resources", M{"action": "read", "uri": "agentpack://nope"}); env.code() != "E_INVALID_ARGUMENT" {
		t.Fatalf("unknown uri: %s", env.raw)
	}
}
