package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// LinkGuard refuses paths that reach through a symlink below their managed
// root. A root may itself be a link (users keep ~/.claude in dotfiles), but
// nothing below it is followed: a planted `.claude/skills/d -> ~` would
// otherwise let a cloned project's manifest delete files in $HOME, and a
// skill folder linked into dotfiles would be rewritten through the link.
// Plan, apply, rollback and recovery check every path they read to decide a
// write, write or delete. It refuses what [fsys.CheckBeneath] refuses, with
// messages naming what to change in agentpack's terms, and it remembers the
// folders it has seen to be real folders, which matters at 10,000 files
// sharing a few folders.
type LinkGuard struct {
	sys  fsys.System
	dirs sync.Map // fsys.AbsPath → struct{}: folders already seen to be real folders
	// missing are folders [LinkGuard.Lstat] found missing: every path
	// below one is missing too, without a stat (a plan into an empty
	// project asks for 10,000 paths below a few hundred missing folders).
	// Check never trusts it: a writer looks again. A root found missing
	// (followed: a root may be a link) is in it too.
	missing sync.Map
	// roots are the roots Lstat has looked for.
	roots sync.Map
}

// NewLinkGuard returns a [LinkGuard] that looks with sys.
func NewLinkGuard(sys fsys.System) *LinkGuard { return &LinkGuard{sys: sys} }

// Check walks from root down to path with Lstat. A missing component ends
// the walk: nothing exists through it. It returns E_IO_INVALID_PATH naming
// the first link, or when path is not strictly inside root. root and path
// may come from a damaged record, so neither is trusted to be clean.
func (g *LinkGuard) Check(root, path fsys.AbsPath) error {
	_, _, err := g.walk(root, path, false)
	return err
}

// Lstat is [LinkGuard.Check] followed by an Lstat of path, sharing the
// Lstat the walk makes of path itself: plan stats each managed file once.
// A refused path returns the guard's error; otherwise the Lstat's result.
func (g *LinkGuard) Lstat(root, path fsys.AbsPath) (fs.FileInfo, error) {
	fi, missing, err := g.lstat(root, path)
	if missing {
		return nil, fsys.ErrMissing(path)
	}
	return fi, err
}

// lstat is Lstat with a path found missing said by missing rather than by
// an error (a plan into a fresh project finds 10,000 of them).
func (g *LinkGuard) lstat(root, path fsys.AbsPath) (fi fs.FileInfo, missing bool, err error) {
	fi, done, err := g.walk(root, path, true)
	switch {
	case err != nil:
		return nil, false, err
	case done:
		return fi, fi == nil, nil
	}
	fi, err = g.sys.Lstat(path)
	return fi, false, err
}

// walk is Check; done says the walk reached path itself, whose Lstat is
// fi, or (fi nil) found it missing. remember lets it skip, and record,
// folders found missing.
func (g *LinkGuard) walk(root, path fsys.AbsPath, remember bool) (fi fs.FileInfo, done bool, err error) {
	rel, err := filepath.Rel(root.String(), path.String())
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || !filepath.IsAbs(root.String()) {
		return nil, false, apperr.New(apperr.IOInvalidPath, "%s is not inside the managed folder %s", path, root).
			WithHint("the record naming this path is damaged or was not written by agentpack").
			With("path", path.String()).With("path_posix", path.ToSlash()).With("root", root.String()).With("root_posix", root.ToSlash())
	}
	if remember && g.rootMissing(root) {
		return nil, true, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := root
	for i, part := range parts {
		// Not JoinName: a damaged record may hold a name it would refuse.
		cur = fsys.AbsPath(filepath.Join(cur.String(), part))
		last := i == len(parts)-1
		if !last {
			if _, ok := g.dirs.Load(cur); ok {
				continue
			}
			if _, ok := g.missing.Load(cur); ok && remember {
				return nil, true, nil
			}
		}
		fi, err := g.sys.Lstat(cur)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, false, nil
			}
			if remember && !last {
				g.missing.Store(cur, struct{}{})
			}
			return nil, true, nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, false, linkError(root, path, cur)
		}
		if last {
			return fi, true, nil
		}
		if !fi.IsDir() {
			return nil, false, nil
		}
		g.dirs.Store(cur, struct{}{})
	}
	return nil, false, nil
}

// rootMissing reports whether root does not exist, asking once per root:
// a plan into a fresh project finds every file below a missing root.
func (g *LinkGuard) rootMissing(root fsys.AbsPath) bool {
	if _, seen := g.roots.Load(root); !seen {
		if _, err := g.sys.Stat(root); errors.Is(err, fs.ErrNotExist) {
			g.missing.Store(root, struct{}{})
		}
		g.roots.Store(root, struct{}{})
	}
	_, ok := g.missing.Load(root)
	return ok
}

func linkError(root, path, link fsys.AbsPath) error {
	msg := "%s is a symlink inside the managed folder %s; agentpack never reads, writes or deletes through a linked folder"
	hint := "replace the link with a real folder (or point the target option at the folder the link names), then run the command again"
	if link == path {
		msg = "%s is a symlink where agentpack manages a file (managed folder %s); agentpack never writes through links"
		hint = "remove the link or point the target option elsewhere"
	}
	return apperr.New(apperr.IOInvalidPath, msg, link, root).WithHint("%s", hint).
		With("path", path.String()).With("path_posix", path.ToSlash()).
		With("link", link.String()).With("link_posix", link.ToSlash()).
		With("root", root.String()).With("root_posix", root.ToSlash()).
		With("reason_code", "symlink_below_root")
}
