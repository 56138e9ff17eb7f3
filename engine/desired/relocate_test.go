package desired

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Relocated moves the files and roots of one project folder to another,
// keeping each file's source, and refuses what it cannot move exactly.
func TestRelocated(t *testing.T) {
	from, to := fsys.AbsPath("/w/a"), fsys.AbsPath("/w/b")
	file := func(o *Origin, path string, tail int) *File {
		f := NewFileOf(o, target.DesiredFile{Path: fsys.AbsPath(path)}, "sum", tail > 0, tail)
		return &f
	}
	project := NewOrigin("codex", "/w/a/.agents/skills", []string{"skill:s"}, "/repo/modules")
	home := NewOrigin("codex", "/home/.codex/skills", []string{"skill:s"}, "/repo/modules")
	d := Restore([]string{"codex"}, []Root{{Target: "codex", Path: "/home/.codex/skills"}, {Target: "codex", Path: "/w/a/.agents/skills"}}, nil,
		[]*File{file(home, "/home/.codex/skills/s/SKILL.md", len("/s/SKILL.md")), file(project, "/w/a/.agents/skills/s/SKILL.md", len("/s/SKILL.md"))})
	got, ok := d.Relocated(from, to)
	if !ok {
		t.Fatal("not relocated")
	}
	want := Restore([]string{"codex"}, []Root{{Target: "codex", Path: "/home/.codex/skills"}, {Target: "codex", Path: "/w/b/.agents/skills"}}, nil,
		[]*File{file(home, "/home/.codex/skills/s/SKILL.md", len("/s/SKILL.md")),
			file(NewOrigin("codex", "/w/b/.agents/skills", []string{"skill:s"}, "/repo/modules"), "/w/b/.agents/skills/s/SKILL.md", len("/s/SKILL.md"))})
	if !sameCompiled(got, want) {
		t.Errorf("relocated: %+v, want %+v", got, want)
	}
	if !SameRelocated(d, from, to, want) {
		t.Error("SameRelocated does not see the relocated state")
	}
	other := Restore(want.Targets, want.Roots, nil, []*File{want.Files[0], file(want.Files[1].Origin, "/w/b/.agents/skills/s/OTHER.md", len("/s/OTHER.md"))})
	if SameRelocated(d, from, to, other) || SameRelocated(d, from, "/w/c", want) {
		t.Error("SameRelocated sees another state as the relocated one")
	}
	if d.Files[1].Path != "/w/a/.agents/skills/s/SKILL.md" || d.Roots[1].Path != "/w/a/.agents/skills" {
		t.Error("the original state changed")
	}
	if got.Files[1].Src() != "/repo/modules/s/SKILL.md" {
		t.Errorf("source %s", got.Files[1].Src())
	}

	// A source named by more of the path than lies below the folder.
	whole := Restore(nil, nil, nil, []*File{file(NewOrigin("codex", "/w/a", nil, "/repo"), "/w/a/f", len("/a/f"))})
	if _, ok := whole.Relocated(from, to); ok {
		t.Error("a file whose source path takes the project's name was relocated")
	}
	if SameRelocated(whole, from, to, Restore(nil, nil, nil, []*File{file(NewOrigin("codex", "/w/b", nil, "/repo"), "/w/b/f", len("/b/f"))})) {
		t.Error("SameRelocated: a file whose source path takes the project's name")
	}
	// A path left where it is, below the new folder.
	below := Restore(nil, nil, nil, []*File{file(NewOrigin("codex", "/w/b", nil, ""), "/w/b/x", 0)})
	if _, ok := below.Relocated(from, to); ok {
		t.Error("a state with a file in the new folder was relocated")
	}
	if _, ok := d.Relocated("/", to); ok {
		t.Error("the file system's root was relocated")
	}
}

// sameCompiled reports whether a and b are the same compiled state: the
// same targets, roots and files (origin, path, hash, bytes or source,
// entries, mode), in the same order. Stale roots are not compared: they
// come from the roots registry, not from compiling.
func sameCompiled(a, b *State) bool {
	if !slices.Equal(a.Targets, b.Targets) || !slices.Equal(a.Roots, b.Roots) || len(a.Files) != len(b.Files) {
		return false
	}
	for i, f := range a.Files {
		g := b.Files[i]
		if f.Target != g.Target || f.Root != g.Root || !slices.Equal(f.ModuleIDs, g.ModuleIDs) || f.Src() != g.Src() ||
			f.Path != g.Path || f.SHA256 != g.SHA256 || !bytes.Equal(f.Data, g.Data) || (f.Data == nil) != (g.Data == nil) ||
			f.Mode != g.Mode || f.Marked != g.Marked || !reflect.DeepEqual(f.Keyed, g.Keyed) {
			return false
		}
	}
	return true
}
