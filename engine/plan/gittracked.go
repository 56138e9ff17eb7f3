package plan

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// GitTracked answers whether a path is tracked by the project's git
// repository. A target manifest the project tracks came with the clone, not
// from an agentpack run on this machine, so it is no record of what
// agentpack owns here: a planted one could otherwise name files to delete.
// The index is read once, and only when a manifest inside the project asks.
type GitTracked struct {
	sys     fsys.System
	project fsys.AbsPath

	once  sync.Once
	paths map[string]bool // project-relative, '/'
}

// NewGitTracked returns a [GitTracked] for the project folder (none when
// project is "").
func NewGitTracked(sys fsys.System, project fsys.AbsPath) *GitTracked {
	return &GitTracked{sys: sys, project: project}
}

// Has reports whether abs is in the project's git index.
func (g *GitTracked) Has(abs fsys.AbsPath) bool {
	if g == nil || g.project == "" || !g.project.Contains(abs) || abs == g.project {
		return false
	}
	g.once.Do(g.load)
	rel, err := filepath.Rel(g.project.String(), abs.String())
	return err == nil && g.paths[filepath.ToSlash(rel)]
}

func (g *GitTracked) load() {
	g.paths = map[string]bool{}
	data, err := g.sys.ReadFile(g.gitDir().JoinName("index"))
	if err != nil {
		return
	}
	var idx index.Index
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
		return
	}
	for _, e := range idx.Entries {
		g.paths[e.Name] = true
	}
}

// gitDir is <project>/.git, or the folder a ".git" file points to
// (worktrees and submodules).
func (g *GitTracked) gitDir() fsys.AbsPath {
	dotgit := g.project.JoinName(".git")
	data, err := g.sys.ReadFile(dotgit)
	if err != nil {
		return dotgit
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return dotgit
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.project.String(), dir)
	}
	return fsys.AbsPath(filepath.Clean(dir))
}
