package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
)

// lstatCount counts the Lstat calls of a System.
type lstatCount struct {
	fsys.System
	n *int
}

func (c lstatCount) Lstat(p fsys.AbsPath) (os.FileInfo, error) {
	*c.n++
	return c.System.Lstat(p)
}

// ProjectRoots answers as Env.ProjectRoot does for every folder, in a git
// project or not, looking at each folder on the way up once in all.
func TestProjectRootsAsProjectRoot(t *testing.T) {
	tmp := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(tmp, "proj", ".git"), 0o755))
	var dirs []string
	for _, d := range []string{"proj/a/b", "proj/a/c", "proj", "loose/x/y", "loose/x/z", "loose"} {
		dirs = append(dirs, filepath.Join(tmp, filepath.FromSlash(d)))
		must(t, os.MkdirAll(dirs[len(dirs)-1], 0o755))
	}
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	var n int
	rootOf := engine.ProjectRoots(lstatCount{sys, &n})
	for range 3 {
		for _, d := range dirs {
			if got, want := rootOf(d), (engine.Env{Cwd: d}).ProjectRoot(sys); got != want {
				t.Errorf("ProjectRoots(%s) = %s, ProjectRoot %s", d, got, want)
			}
		}
	}
	// Every folder from each asked one up to its project, or to the root.
	want := map[string]bool{}
	for _, d := range dirs {
		for ; !want[d]; d = filepath.Dir(d) {
			want[d] = true
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
				break
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d looks for .git, want %d: each folder on the way up once", n, len(want))
	}
}
