package apply

import (
	"io/fs"
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
