package desired

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// A source path is kept as the folder before the tail it shares with the
// file's path, from a separator on, so a module's files share the folder.
func TestSplitSrc(t *testing.T) {
	for _, c := range []struct {
		src, path, dir fsys.AbsPath
		tail           int
	}{
		{"/repo/modules/s1/ref/a.md", "/proj/.codex/skills/s1/ref/a.md", "/repo/modules", len("/s1/ref/a.md")},
		{"/repo/m/x.md", "/proj/y.md", "/repo/m/x.md", 0},  // nothing shared: the whole path
		{"/repo/m/a.md", "/proj/ba.md", "/repo/m/a.md", 0}, // shared, but not from a separator
		{"/repo/m/a.md", "/proj/a.md", "/repo/m", len("/a.md")},
		{"", "/proj/a.md", "", 0},
	} {
		dir, tail := splitSrc(c.src, c.path)
		if dir != c.dir || tail != c.tail {
			t.Errorf("splitSrc(%s, %s) = %s, %d; want %s, %d", c.src, c.path, dir, tail, c.dir, c.tail)
		}
		if c.src == "" {
			continue
		}
		o := NewOrigin("codex", "/proj", nil, dir)
		if f := NewFileOf(o, target.DesiredFile{Path: c.path}, "", true, tail); f.Src() != c.src {
			t.Errorf("Src of %s = %s", c.src, f.Src())
		}
	}
}

// Files of one path merge their module ids when their bytes agree (the
// origin is replaced, never changed: other files share it) and conflict
// when they do not; every file is found by path, whatever the targets'
// order.
func TestMergeAndFind(t *testing.T) {
	origins := Origins{}
	file := func(tgt string, path fsys.AbsPath, id, data string) *File {
		f := NewFileOf(origins.Get(tgt, "/p", []string{id}, ""), target.DesiredFile{Path: path, Data: []byte(data)}, data, false, 0)
		return &f
	}
	shared := file("codex", "/p/b", "skill:a", "x")
	other := file("codex", "/p/c", "skill:a", "y")
	files, err := merge([]*File{shared, file("claude", "/p/z", "skill:c", "z"), other, file("codex", "/p/b", "skill:b", "x")}, origins)
	if err != nil || len(files) != 3 {
		t.Fatalf("merge = %d files, %v", len(files), err)
	}
	if got := shared.ModuleIDs; len(got) != 2 || got[0] != "skill:a" || got[1] != "skill:b" {
		t.Errorf("merged ids = %v", got)
	}
	if len(other.ModuleIDs) != 1 {
		t.Errorf("merging changed another file's ids: %v", other.ModuleIDs)
	}
	d := Restore([]string{"claude", "codex"}, nil, nil, files)
	if d.Files[0].Target != "claude" || d.byPath == nil {
		t.Fatalf("files not sorted by target, or no index by path: %v", d.Files)
	}
	for _, p := range []fsys.AbsPath{"/p/z", "/p/b", "/p/c"} {
		if f := d.File(p); f == nil || f.Path != p || d.FileAt([]byte(p)) != f {
			t.Errorf("File(%s) = %v", p, f)
		}
	}
	if d.File("/p/d") != nil || d.FileAt(nil) != nil {
		t.Error("a path without a file found one")
	}
	_, err = merge([]*File{file("codex", "/p/b", "skill:a", "x"), file("codex", "/p/b", "skill:b", "other")}, origins)
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.DesiredStateConflict {
		t.Errorf("different bytes at one path: %v", err)
	}
}

// A cursor answers like File and FileAt whatever the order it is asked in:
// in path order (its quick case), backwards, shuffled, with paths that
// have no file between them, and with the files sorted by target first
// (the byPath index).
func TestCursorFindsLikeFile(t *testing.T) {
	origins := Origins{}
	var files []*File
	var asked []fsys.AbsPath
	for i := range 40 {
		tgt := []string{"claude", "codex"}[i%2]
		p := fsys.AbsPath(fmt.Sprintf("/p/s%02d/SKILL.md", i))
		if i%5 != 0 { // every fifth path has no file
			f := NewFileOf(origins.Get(tgt, "/p", []string{"skill:s"}, ""), target.DesiredFile{Path: p, Data: []byte("x")}, "x", false, 0)
			files = append(files, &f)
		}
		asked = append(asked, p, p+"x")
	}
	d := Restore([]string{"claude", "codex"}, nil, nil, files)
	if d.byPath == nil {
		t.Fatal("files by target are also in path order: the byPath index is not exercised")
	}
	reversed := slices.Clone(asked)
	slices.Reverse(reversed)
	shuffled := slices.Clone(asked)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, order := range map[string][]fsys.AbsPath{"sorted": asked, "reversed": reversed, "shuffled": shuffled} {
		c, cb := d.Cursor(), d.Cursor()
		for _, p := range order {
			want := d.File(p)
			if got := c.File(p); got != want {
				t.Fatalf("%s: Cursor.File(%s) = %v, want %v", name, p, got, want)
			}
			if got := cb.FileAt([]byte(p)); got != want {
				t.Fatalf("%s: Cursor.FileAt(%s) = %v, want %v", name, p, got, want)
			}
		}
		if c.FileAt(nil) != nil || c.File("/") != nil {
			t.Errorf("%s: an empty path or the root found a file", name)
		}
	}
}
