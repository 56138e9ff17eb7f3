package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/fsys"
)

// writeOverlay puts one file into the overlay folder of a module.
func writeOverlay(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// explainLayer calls explain plan and returns the layer it names for
// module id.
func explainLayer(t *testing.T, e *decodedEnvelope, id string) string {
	t.Helper()
	if !e.OK {
		t.Fatalf("explain failed: %s", e.raw)
	}
	items, _ := e.Data["items"].([]any)
	for _, it := range items {
		mods, _ := it.(map[string]any)["modules"].([]any)
		for _, m := range mods {
			if m := m.(map[string]any); m["id"] == id {
				return m["layer"].(string)
			}
		}
	}
	t.Fatalf("explain names no file of %s", id)
	return ""
}

// TestMachineArgumentSelectsOverlays checks that a tool's `machine`
// argument, and the server's default machine, pick the machine overlays.
func TestMachineArgumentSelectsOverlays(t *testing.T) {
	te := newTestEnv(t)
	te.Env.MachineID = "laptop"
	lay := overlay.Layout{Repo: fsys.AbsPath(te.Repo), MachineID: "box"}
	writeOverlay(t, lay.ScopeDir(overlay.Machine, "prompt:review").String(), "review.md", "Review as box would.\n")

	cs := connect(t, te.server(t), "2025-11-25")
	args := M{"kind": "plan", "target": "codex"}
	if got := explainLayer(t, callTool(t, cs, "explain", args), "prompt:review"); got != "upstream" {
		t.Errorf("without machine: layer %q, want upstream", got)
	}
	args["machine"] = "box"
	if got := explainLayer(t, callTool(t, cs, "explain", args), "prompt:review"); got != "machine" {
		t.Errorf("machine=box: layer %q, want machine", got)
	}

	te.Env.MachineID = "Box" // $AGENTPACK_MACHINE_ID, normalised
	cs = connect(t, te.server(t), "2025-11-25")
	if got := explainLayer(t, callTool(t, cs, "explain", M{"kind": "plan", "target": "codex"}), "prompt:review"); got != "machine" {
		t.Errorf("AGENTPACK_MACHINE_ID=Box: layer %q, want machine", got)
	}
}

// TestSkillFromAnOverlay checks that the Skills extension serves the bytes
// an overlay puts in a skill, as a deploy would write them.
func TestSkillFromAnOverlay(t *testing.T) {
	te := newTestEnv(t)
	skill := "---\nname: release-notes\ndescription: Release notes, the team's way.\n---\nOverlaid body.\n"
	lay := overlay.Layout{Repo: fsys.AbsPath(te.Repo)}
	writeOverlay(t, lay.ScopeDir(overlay.Global, "skill:release-notes").String(), "SKILL.md", skill)
	cs := skillsClient(t, te.server(t))
	c, err := readURI(t, cs, "skill://release-notes/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != skill {
		t.Errorf("skill://release-notes/SKILL.md = %q, want the overlay's %q", c.Text, skill)
	}
	all, _, _ := listAllSkills(t, cs)
	for _, s := range all {
		if strings.HasPrefix(s.URI, "skill://release-notes/") && !strings.Contains(s.Frontmatter["description"].(string), "the team's way") {
			t.Errorf("skills/list shows the upstream frontmatter %v", s.Frontmatter)
		}
	}
}
