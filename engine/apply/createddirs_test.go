package apply

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/internal/fsys"
)

// lstatCounter counts the Lstat calls made through it.
type lstatCounter struct {
	fsys.System
	n int
}

func (c *lstatCounter) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	c.n++
	return c.System.Lstat(p)
}

// TestCreatedDirsListsEveryMissingFolderOnce: the folders writing the
// paths creates are each path's missing ancestors, whatever order the
// paths come in, and a folder below a missing one is not looked at.
func TestCreatedDirsListsEveryMissingFolderOnce(t *testing.T) {
	mem := fsys.NewMemSystem()
	p := func(s string) fsys.AbsPath { return fsys.AbsPath(s) }
	for _, d := range []string{"/home/u/proj/.git", "/home/u/.codex"} {
		if err := mem.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var paths []fsys.AbsPath
	for _, s := range []string{"s1", "s2", "s3"} {
		for _, f := range []string{"SKILL.md", "a.md", "ref/b.md"} {
			paths = append(paths, p("/home/u/proj/.agents/skills/"+s+"/"+f))
		}
	}
	paths = append(paths, p("/home/u/.codex/AGENTS.md"), p("/home/u/proj/.agents/skills/s1/c.md"), p("/home/u/.codex/prompts/x.md"), p("/other/new/f"))
	sys := &lstatCounter{System: mem}
	got := createdDirs(sys, paths)
	var want []string
	for _, path := range paths {
		for d := path.Dir(); ; d = d.Dir() {
			if _, err := mem.Lstat(d); err == nil {
				break
			}
			if !slices.Contains(want, d.String()) {
				want = append(want, d.String())
			}
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("createdDirs = %q\nwant %q", got, want)
	}
	// The highest missing folder of each new tree (.agents, prompts,
	// /other) and the existing folders above them, each once: not each
	// skill folder.
	if sys.n > 8 {
		t.Errorf("createdDirs looked at %d folders, want at most 8", sys.n)
	}
}

// TestRemoveEmptyCreatedDirs: the folders an apply created go, deepest
// first, once empty; one holding a file stays (and so do those above it),
// and a link put where a created folder was is left alone, with the
// folder it names.
func TestRemoveEmptyCreatedDirs(t *testing.T) {
	dir := t.TempDir()
	at := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	for _, d := range []string{"r/a/b/c", "r/a/x", "r/kept/sub", "elsewhere/empty"} {
		if err := os.MkdirAll(at(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(at("r/kept/sub/mine.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(at("elsewhere"), at("r/link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	var created []string
	for _, d := range []string{"r/a", "r/a/b", "r/a/b/c", "r/a/x", "r/kept", "r/kept/sub", "r/link", "r/link/empty"} {
		created = append(created, at(d))
	}
	removeEmptyCreatedDirs(fsys.NewRealSystem(fsys.RealSystemOptions{}), created)
	for rel, want := range map[string]bool{"r/a": false, "r/kept/sub/mine.md": true, "r/kept": true,
		"r/link": true, "elsewhere/empty": true, "r": true} {
		if _, err := os.Lstat(at(rel)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", rel, err == nil, want)
		}
	}
}
