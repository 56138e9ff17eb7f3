package skillset_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/skillset"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

func skillModule(id string) *module.LoadedModule {
	return &module.LoadedModule{Module: &module.Module{ID: id, Type: module.TypeSkill}}
}

// deployed returns desired files of module id under <root>/<name>/.
func deployed(tgt, root, name, id string, files map[string]string) []*desired.File {
	var out []*desired.File
	for rel, data := range files {
		p := filepath.Join(root, name, filepath.FromSlash(rel))
		out = append(out, desired.NewFile(tgt, "", target.DesiredFile{Path: fsys.AbsPath(p), Data: []byte(data), ModuleIDs: []string{id}}, ""))
	}
	return out
}

func build(mods []*module.LoadedModule, files ...[]*desired.File) (*skillset.Set, []string) {
	d := &desired.State{}
	for _, f := range files {
		d.Files = append(d.Files, f...)
	}
	var warnings []string
	set := skillset.Build(mods, d, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) })
	return set, warnings
}

const md = "---\nname: %s\ndescription: d\n---\nbody\n"

func TestBuildServesDeployedCopy(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	files := map[string]string{"SKILL.md": fmt.Sprintf(md, "rev"), "sub/rev/SKILL.md": fmt.Sprintf(md, "rev"), "a.txt": "a"}
	set, warnings := build([]*module.LoadedModule{skillModule("skill:rev"), skillModule("skill:idle")},
		deployed("claude_code", root, "rev", "skill:rev", files),
		deployed("codex", filepath.Join(t.TempDir(), "x"), "rev", "skill:rev", files))
	if len(warnings) != 0 || len(set.Skills) != 1 {
		t.Fatalf("skills %d, warnings %v", len(set.Skills), warnings)
	}
	sk := set.Skill("rev")
	var paths []string
	for _, f := range sk.Files {
		paths = append(paths, f.Path)
	}
	// A SKILL.md nested in the skill's own folder is one of its files.
	if strings.Join(paths, ",") != "SKILL.md,a.txt,sub/rev/SKILL.md" || sk.ModuleID != "skill:rev" {
		t.Fatalf("files %v", paths)
	}
	if f := set.File("rev/a.txt"); f == nil || f.Digest != "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" || f.Size != 1 {
		t.Fatalf("a.txt: %+v", f)
	}
	if kids, ok := set.ReadDir("rev/sub"); !ok || len(kids) != 1 || kids[0].File != nil || kids[0].Path != "rev/sub/rev" {
		t.Fatalf("rev/sub: %+v %v", kids, ok)
	}
	if _, ok := set.ReadDir("rev/a.txt"); ok {
		t.Fatal("a file is not a folder")
	}
}

func TestBuildWarnsOnDifferentCopies(t *testing.T) {
	_, warnings := build([]*module.LoadedModule{skillModule("skill:rev")},
		deployed("claude_code", filepath.Join(t.TempDir(), "a"), "rev", "skill:rev", map[string]string{"SKILL.md": fmt.Sprintf(md, "rev")}),
		deployed("codex", filepath.Join(t.TempDir(), "b"), "rev", "skill:rev", map[string]string{"SKILL.md": fmt.Sprintf(md, "rev") + "x"}))
	if len(warnings) != 1 || !strings.Contains(warnings[0], "deploys different files") {
		t.Fatalf("warnings %v", warnings)
	}
}

func TestBuildLimits(t *testing.T) {
	root := t.TempDir()
	many := map[string]string{"SKILL.md": fmt.Sprintf(md, "many")}
	for i := range skillset.MaxFiles {
		many[fmt.Sprintf("f/%d.txt", i)] = "x"
	}
	big := map[string]string{"SKILL.md": fmt.Sprintf(md, "big"), "big.bin": strings.Repeat("x", skillset.MaxBytes)}
	atLimit := map[string]string{"SKILL.md": fmt.Sprintf(md, "ok")}
	for i := range skillset.MaxFiles - 1 {
		atLimit[fmt.Sprintf("f/%d.txt", i)] = "x"
	}
	set, warnings := build([]*module.LoadedModule{skillModule("skill:many"), skillModule("skill:big"), skillModule("skill:ok")},
		deployed("codex", root, "many", "skill:many", many), deployed("codex", root, "big", "skill:big", big),
		deployed("codex", root, "ok", "skill:ok", atLimit))
	if len(set.Skills) != 1 || set.Skill("ok") == nil || len(set.Skill("ok").Files) != skillset.MaxFiles {
		t.Fatalf("served %d skills", len(set.Skills))
	}
	all := strings.Join(warnings, "\n")
	for _, w := range []string{"skill:many is not served over MCP: it has 513 files, over the limit of 512", fmt.Sprintf("skill:big is not served over MCP: its files hold %d bytes", skillset.MaxBytes+len(fmt.Sprintf(md, "big")))} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
}

func TestBuildFrontmatterIsJSON(t *testing.T) {
	fm := "---\nname: dates\ndescription: d\ncreated: 2024-01-02\nnums: {1: one, 2: two}\nnan: .nan\nnested: {a: [1, {b: c}]}\n---\n"
	set, warnings := build([]*module.LoadedModule{skillModule("skill:dates")},
		deployed("codex", t.TempDir(), "dates", "skill:dates", map[string]string{"SKILL.md": fm}))
	if len(warnings) != 0 || len(set.Skills) != 1 {
		t.Fatalf("warnings %v", warnings)
	}
	b, err := json.Marshal(set.Skills[0].Frontmatter)
	if err != nil {
		t.Fatalf("frontmatter is not JSON: %v", err)
	}
	for _, want := range []string{`"nums":{"1":"one","2":"two"}`, `"nan":".nan"`, `"nested":{"a":[1,{"b":"c"}]}`, `"name":"dates"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"pdf": true, "pdf-2": true, "a": true, "": false, "Pdf": false, "-a": false, "a-": false,
		"a--b": false, "a_b": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false} {
		if skillset.ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}
