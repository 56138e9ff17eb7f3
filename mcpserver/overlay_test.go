package mcpserver

import (
	"fmt"
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

// TestE2EOverlaidGitSkillOverStdio drives the built binary: a global
// overlay on a skill from a git source replaces its SKILL.md and adds a
// file; skills/get lists both with the digests of the overlaid bytes, and
// resources/read returns exactly what the CLI's deploy wrote.
func TestE2EOverlaidGitSkillOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	skillsRepo(t, te)
	dir := overlay.Layout{Repo: fsys.AbsPath(te.Repo)}.ScopeDir(overlay.Global, "skill:lint").String()
	skill := "---\nname: lint\ndescription: Lints code, our way\n---\nRun the linter twice.\n"
	writeOverlay(t, dir, "SKILL.md", skill)
	writeOverlay(t, dir, "rules/ours.md", "Our rule.\n")
	if out, err := te.command(bin, "deploy", "--apply", "--yes", "--json", "--repo", te.Repo).CombinedOutput(); err != nil {
		t.Fatalf("cli deploy: %v\n%s", err, out)
	}
	rs := startRaw(t, te, bin)
	get := rs.call("skills/get", map[string]any{"uri": "skill://lint/SKILL.md"})
	if get.Error != nil {
		t.Fatalf("skills/get: %+v", get.Error)
	}
	entry := get.Result["skill"].(map[string]any)
	if fm := entry["frontmatter"].(map[string]any); fm["description"] != "Lints code, our way" {
		t.Errorf("frontmatter %v, want the overlay's", fm)
	}
	seen := map[string]bool{}
	for _, r := range entry["resources"].([]any) {
		res := r.(map[string]any)
		uri := res["uri"].(string)
		seen[uri] = true
		read := rs.call("resources/read", map[string]any{"uri": uri})
		if read.Error != nil {
			t.Fatalf("read %s: %+v", uri, read.Error)
		}
		data := []byte(read.Result["contents"].([]any)[0].(map[string]any)["text"].(string))
		disk, err := os.ReadFile(filepath.Join(te.Home, ".claude", "skills", "lint", filepath.FromSlash(strings.TrimPrefix(uri, "skill://lint/"))))
		if err != nil || string(data) != string(disk) || sha(data) != res["digest"] {
			t.Errorf("%s: served %q (%s), deployed %q (%v), listed digest %v", uri, data, sha(data), disk, err, res["digest"])
		}
	}
	for _, uri := range []string{"skill://lint/SKILL.md", "skill://lint/rules/ours.md", "skill://lint/rules/style.md"} {
		if !seen[uri] {
			t.Errorf("skills/get does not list %s: %v", uri, entry["resources"])
		}
	}
	if c, _ := readRaw(rs, "skill://lint/SKILL.md"); c != skill {
		t.Errorf("skill://lint/SKILL.md = %q, want the overlay's", c)
	}
}

func readRaw(rs *rawSession, uri string) (string, error) {
	read := rs.call("resources/read", map[string]any{"uri": uri})
	if read.Error != nil {
		return "", fmt.Errorf("%s", read.Error.Message)
	}
	return read.Result["contents"].([]any)[0].(map[string]any)["text"].(string), nil
}
