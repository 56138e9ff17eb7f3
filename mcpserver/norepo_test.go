package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadToolsWithoutRepo checks that plan, status, source_list and
// agentpack://sources answer empty data and a warning, not
// E_CONFIG_MISSING, when no repo is named and the default repo
// ($AGENTPACK_HOME/repo) was never created.
func TestReadToolsWithoutRepo(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t, func(o *Options) { o.Defaults.Repo = "" })
	cs := connect(t, s, "2025-11-25")

	for _, tc := range []struct {
		tool string
		args M
		want string
	}{
		{"plan", nil, `{"profile":"default","targets":[],"changes":[],"summary":{"create":0,"update":0,"delete":0}}`},
		{"plan", M{"profile": "work", "target": "codex"}, `{"profile":"work","targets":[],"changes":[],"summary":{"create":0,"update":0,"delete":0}}`},
		{"status", M{"only": []string{"missing"}}, `{"profile":"default","targets":[],"drift":[],"summary":{"modified":0,"missing":0,"extra":0,"pending":0},
			"summary_by_root":[],"next_actions":[],"next_actions_detailed":[]}`},
		{"source_list", nil, `{"sources":[]}`},
	} {
		env := callTool(t, cs, tc.tool, tc.args)
		if !env.OK {
			t.Fatalf("%s without a repo: %s", tc.tool, env.raw)
		}
		data, _ := json.Marshal(env.Data)
		if !jsonEqual(t, data, []byte(tc.want)) {
			t.Errorf("%s data = %s, want %s", tc.tool, data, tc.want)
		}
		if len(env.Warnings) != 1 || !strings.Contains(env.Warnings[0], "no agentpack.yaml") || !strings.Contains(env.Warnings[0], "agentpack init") {
			t.Errorf("%s warnings = %q, want one naming agentpack.yaml and agentpack init", tc.tool, env.Warnings)
		}
	}
	c, err := readURI(t, cs, URISources)
	if err != nil || !jsonEqual(t, []byte(c.Text), []byte(`{"sources":[]}`)) || c.MIMEType != mimeJSON {
		t.Fatalf("%s without a repo: %+v %v", URISources, c, err)
	}

	// The other tools still say there is no repo.
	if env := callTool(t, cs, "diff", nil); env.code() != "E_CONFIG_MISSING" {
		t.Errorf("diff without a repo: %s", env.raw)
	}
	// A repo named on purpose that does not exist is an error.
	missing := filepath.Join(te.Home, "no-such-repo")
	for _, tool := range []string{"plan", "status", "source_list"} {
		if env := callTool(t, cs, tool, M{"repo": missing}); env.code() != "E_CONFIG_MISSING" {
			t.Errorf("%s with a missing named repo: %s", tool, env.raw)
		}
	}
	// Other failures of the default repo stay errors.
	repo := filepath.Join(te.APHome, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "agentpack.yaml"), []byte("version: 99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"plan", "status", "source_list"} {
		if env := callTool(t, cs, tool, nil); env.OK || env.code() == "E_CONFIG_MISSING" {
			t.Errorf("%s with a bad agentpack.yaml: %s", tool, env.raw)
		}
	}
	if _, err := readURI(t, cs, URISources); err == nil {
		t.Errorf("%s with a bad agentpack.yaml: no error", URISources)
	}
}
