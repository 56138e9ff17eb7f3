package desired

import (
	"testing"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Rehashed (and Rehashable, path by path) gives every copy of an edited
// source its new hash in a copy that shares the other files, when all of
// them were compiled from bytes only hashed, and refuses when one was not,
// when a source is nobody's copy, or when merging made one file of two
// modules' copies; the state rehashed never changes.
func TestRehash(t *testing.T) {
	origins := Origins{}
	copyWith := func(tgt string, path, src fsys.AbsPath, id string, hashed bool, sum string) *File {
		dir, tail := splitSrc(src, path)
		f := NewFileOf(origins.Get(tgt, "/p", []string{id}, dir), target.DesiredFile{Path: path, SrcHashed: hashed}, sum, true, tail)
		return &f
	}
	copyOf := func(tgt string, path, src fsys.AbsPath, id string, hashed bool) *File {
		return copyWith(tgt, path, src, id, hashed, "old-"+string(src))
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
		copyOf("codex", "/p/.agents/skills/s1/ref/a.md", ref, "skill:s1", true),
		copyOf("claude", "/p/.claude/skills/s1/ref/a.md", ref, "skill:s1", true),
		copyOf("codex", "/p/.agents/skills/s1/SKILL.md", main, "skill:s1", false),
	)
	rehashable := d.Rehashable()
	for p, want := range map[fsys.AbsPath]bool{ref: true, main: false, "/repo/agentpack.yaml": false} {
		if rehashable(p) != want {
			t.Errorf("Rehashable(%s) = %v, want %v", p, !want, want)
		}
	}
	out, ok := d.Rehashed(map[fsys.AbsPath]string{ref: "new"})
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
		"a source whose bytes were compiled": {ref: "newer", main: "x"},
		"a source no file copies":            {ref: "newer", "/repo/agentpack.yaml": "x"},
	} {
		if _, ok := d.Rehashed(sums); ok {
			t.Errorf("%s: rehashed", name)
		}
	}
	other := fsys.AbsPath("/repo/modules/s2/ref/a.md")
	merged := state(
		copyWith("codex", "/p/shared/a.md", ref, "skill:s1", true, "same"),
		copyWith("codex", "/p/shared/a.md", other, "skill:s2", true, "same"),
	)
	if _, ok := merged.Rehashed(map[fsys.AbsPath]string{ref: "new"}); ok || merged.Rehashable()(ref) || merged.Files[0].SrcHashed() {
		t.Error("the merged copy of two modules' files was rehashed: only compiling can tell they now conflict")
	}
}
