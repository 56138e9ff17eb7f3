package desired

import (
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Copies.Rehashed (and Copies.Use, path by path) gives every copy of an
// edited source its new hash in a copy that shares the other files, when
// all of them were compiled from bytes only hashed, and refuses when one
// was not, when a source is nobody's copy, or when merging made one file
// of two modules' copies; the state rehashed never changes.
func TestRehashed(t *testing.T) {
	origins := Origins{}
	copyWith := func(tgt string, path, src fsys.AbsPath, id string, use module.Use, sum string) *File {
		dir, tail := splitSrc(src, path)
		f := NewFileOf(origins.Get(tgt, "/p", []string{id}, dir), target.DesiredFile{Path: path, SrcUse: use}, sum, true, tail)
		return &f
	}
	copyOf := func(tgt string, path, src fsys.AbsPath, id string, use module.Use) *File {
		return copyWith(tgt, path, src, id, use, "old-"+string(src))
	}
	state := func(files ...*File) *State {
		out, err := merge(files, origins)
		if err != nil {
			t.Fatal(err)
		}
		return Restore([]string{"claude", "codex"}, nil, nil, out)
	}
	ref := fsys.AbsPath("/repo/modules/s1/ref/a.md")
	main := fsys.AbsPath("/repo/modules/s1/SKILL.md")
	d := state(
		copyOf("codex", "/p/.agents/skills/s1/ref/a.md", ref, "skill:s1", module.UseHashed),
		copyOf("claude", "/p/.claude/skills/s1/ref/a.md", ref, "skill:s1", module.UseHashed),
		copyOf("codex", "/p/.agents/skills/s1/SKILL.md", main, "skill:s1", module.UseSkillMain),
		copyOf("claude", "/p/.claude/skills/s1/SKILL.md", main, "skill:s1", module.UseParsed),
	)
	rehashable := d.Copies().Use
	for p, want := range map[fsys.AbsPath]module.Use{ref: module.UseHashed, main: module.UseParsed, "/repo/agentpack.yaml": module.UseParsed} {
		if got := rehashable(p); got != want {
			t.Errorf("Copies().Use(%s) = %v, want %v", p, got, want)
		}
	}
	out, ok := d.Copies().Rehashed(map[fsys.AbsPath]string{ref: "new"})
	if !ok {
		t.Fatal("copies of a hashed-only source were not rehashed")
	}
	for i, f := range out.Files {
		want := "new"
		if f.Src() == main {
			want = "old-" + string(main)
			if f != d.Files[i] {
				t.Errorf("%s, not rehashed, is not shared with the state rehashed", f.Path)
			}
		}
		if f.SHA256 != want {
			t.Errorf("%s hash %s, want %s", f.Path, f.SHA256, want)
		}
		if d.Files[i].SHA256 != "old-"+string(d.Files[i].Src()) {
			t.Errorf("rehashing changed the state rehashed: %s hash %s", d.Files[i].Path, d.Files[i].SHA256)
		}
		if out.File(f.Path) != f {
			t.Errorf("the rehashed state finds another file at %s", f.Path)
		}
	}
	for name, sums := range map[string]map[fsys.AbsPath]string{
		"a source one of whose copies was made from parsed bytes": {ref: "newer", main: "x"},
		"a source no file copies":                                 {ref: "newer", "/repo/agentpack.yaml": "x"},
	} {
		if _, ok := d.Copies().Rehashed(sums); ok {
			t.Errorf("%s: rehashed", name)
		}
	}
	skill := state(
		copyOf("codex", "/p/.agents/skills/s2/SKILL.md", "/repo/modules/s2/SKILL.md", "skill:s2", module.UseSkillMain),
		copyOf("claude", "/p/.claude/skills/s2/SKILL.md", "/repo/modules/s2/SKILL.md", "skill:s2", module.UseSkillMain),
	)
	if use := skill.Copies().Use("/repo/modules/s2/SKILL.md"); use != module.UseSkillMain {
		t.Errorf("a SKILL.md every copy of which is a skill's main file: Copies().Use = %v", use)
	}
	if out, ok := skill.Copies().Rehashed(map[fsys.AbsPath]string{"/repo/modules/s2/SKILL.md": "new"}); !ok || out.Files[0].SHA256 != "new" || out.Files[1].SHA256 != "new" {
		t.Error("a skill's SKILL.md copies were not rehashed")
	}
	other := fsys.AbsPath("/repo/modules/s2/ref/a.md")
	merged := state(
		copyWith("codex", "/p/shared/a.md", ref, "skill:s1", module.UseHashed, "same"),
		copyWith("codex", "/p/shared/a.md", other, "skill:s2", module.UseHashed, "same"),
	)
	if _, ok := merged.Copies().Rehashed(map[fsys.AbsPath]string{ref: "new"}); ok || merged.Copies().Use(ref) != module.UseParsed || merged.Files[0].SrcUse() != module.UseParsed {
		t.Error("the merged copy of two modules' files was rehashed: only compiling can tell they now conflict")
	}
}
