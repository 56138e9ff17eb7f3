package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

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
// sharing a few folders: each folder is stat'ed once, however many workers
// ask about it at the same time.
type LinkGuard struct {
	sys fsys.System

	mu   sync.Mutex
	dirs map[fsys.AbsPath]*guardDir
	// gone are the folders (and roots) found missing. Reads (ReadActual)
	// take every path below one as missing without a stat: a plan into a
	// fresh project asks for 10,000 paths below a few hundred missing
	// folders. Check and the writers never trust it and look again.
	gone sync.Map
	// anyGone is set once gone holds a path: a plan over deployed files
	// finds none, and asks for no folder above each file.
	anyGone atomic.Bool
	// roots are the roots reads have looked for.
	roots sync.Map
}

// guardDir is one folder's Lstat, taken once; only real folders stay in
// the guard's memory (a folder missing now may be made later).
type guardDir struct {
	once sync.Once
	data fsys.StatData
	err  error
}

// NewLinkGuard returns a [LinkGuard] that looks with sys.
func NewLinkGuard(sys fsys.System) *LinkGuard {
	return &LinkGuard{sys: sys, dirs: map[fsys.AbsPath]*guardDir{}}
}

// Check walks from root down to path with Lstat. A missing component ends
// the walk: nothing exists through it. It returns E_IO_INVALID_PATH naming
// the first link, or when path is not strictly inside root. root and path
// may come from a damaged record, so neither is trusted to be clean.
func (g *LinkGuard) Check(root, path fsys.AbsPath) error {
	_, err := g.LstatData(root, path)
	if err != nil && apperr.CodeOf(err) == apperr.IOInvalidPath {
		return err
	}
	return nil
}

// CheckParents is [LinkGuard.Check] without the Lstat of path itself: the
// folders above it only. A writer uses it where the write refuses a link
// or folder at path itself ([fsys.System.WriteFile] does), so a file costs
// no second look.
func (g *LinkGuard) CheckParents(root, path fsys.AbsPath) error {
	_, err := g.parents(root, path)
	return err
}

// Lstat is [LinkGuard.Check] followed by an Lstat of path: plan stats each
// managed file once. A refused path returns the guard's error; otherwise
// the Lstat's result.
func (g *LinkGuard) Lstat(root, path fsys.AbsPath) (fs.FileInfo, error) {
	p, err := g.parents(root, path)
	if err != nil {
		return nil, err
	}
	fi, err := g.sys.Lstat(p)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, linkError(root, path, p)
	}
	return fi, err
}

// LstatData is [LinkGuard.Lstat] as an [fsys.StatData].
func (g *LinkGuard) LstatData(root, path fsys.AbsPath) (fsys.StatData, error) {
	p, err := g.parents(root, path)
	if err != nil {
		return fsys.StatData{}, err
	}
	d, err := fsys.LstatData(g.sys, p)
	if err == nil && d.IsLink() {
		return fsys.StatData{}, linkError(root, path, p)
	}
	return d, err
}

// readData is [LinkGuard.LstatData] for a read: missing says path is not
// there, found from a missing folder above it when one was seen before.
func (g *LinkGuard) readData(root, path fsys.AbsPath) (d fsys.StatData, missing bool, err error) {
	if g.goneAbove(root, path) {
		return fsys.StatData{}, true, nil
	}
	d, err = g.LstatData(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return fsys.StatData{}, true, nil
	}
	return d, false, err
}

// goneAbove reports whether root, or a folder between root and path, was
// found missing. The root is looked for once (followed: a root may be a
// link).
func (g *LinkGuard) goneAbove(root, path fsys.AbsPath) bool {
	if _, seen := g.roots.Load(root); !seen {
		if _, err := fsys.StatDataFollow(g.sys, root); errors.Is(err, fs.ErrNotExist) {
			g.markGone(root)
		}
		g.roots.Store(root, struct{}{})
	}
	if !g.anyGone.Load() || !root.Contains(path) {
		return false
	}
	for p := path.Dir(); len(p) >= len(root); p = p.Dir() {
		if _, ok := g.gone.Load(p); ok {
			return true
		}
		if p == root {
			break
		}
	}
	return false
}

// Dir is the Lstat the guard took of dir when it found it a real folder;
// ok is false when it has not looked at dir or found something else.
func (g *LinkGuard) Dir(dir fsys.AbsPath) (d fsys.StatData, ok bool) {
	if g == nil {
		return fsys.StatData{}, false
	}
	g.mu.Lock()
	e := g.dirs[dir]
	g.mu.Unlock()
	if e == nil {
		return fsys.StatData{}, false
	}
	g.look(e, dir)
	return e.data, e.err == nil && e.data.IsDir()
}

// parents checks the folders between root and path and returns path as the
// walk reached it (cleaned). A missing or non-folder component ends the
// walk without error: the Lstat of path then says it does not exist.
func (g *LinkGuard) parents(root, path fsys.AbsPath) (fsys.AbsPath, error) {
	r, p := root.String(), path.String()
	if filepath.Separator != '/' || !fsys.CleanAbs(r) || !fsys.CleanAbs(p) || len(p) <= len(r)+1 || p[:len(r)] != r || (p[len(r)] != '/' && r != "/") {
		return g.parentsSlow(root, path)
	}
	start := len(r) + 1
	if r == "/" {
		start = 1
	}
	for i := start; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		ok, err := g.dir(root, path, fsys.AbsPath(p[:i]))
		if err != nil || !ok {
			return path, err
		}
	}
	return path, nil
}

// parentsSlow is parents for paths that may be unclean or outside root.
func (g *LinkGuard) parentsSlow(root, path fsys.AbsPath) (fsys.AbsPath, error) {
	rel, err := filepath.Rel(root.String(), path.String())
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || !filepath.IsAbs(root.String()) {
		return "", apperr.New(apperr.IOInvalidPath, "%s is not inside the managed folder %s", path, root).
			WithHint("the record naming this path is damaged or was not written by agentpack").
			With("path", path.String()).With("path_posix", path.ToSlash()).With("root", root.String()).With("root_posix", root.ToSlash())
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := root
	for _, part := range parts[:len(parts)-1] {
		// Not JoinName: a damaged record may hold a name it would refuse.
		cur = fsys.AbsPath(filepath.Join(cur.String(), part))
		ok, err := g.dir(root, path, cur)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
	}
	return fsys.AbsPath(filepath.Join(root.String(), rel)), nil
}

// dir reports whether cur, a folder on the way from root to path, is a
// real folder; a link there is refused.
func (g *LinkGuard) dir(root, path, cur fsys.AbsPath) (bool, error) {
	g.mu.Lock()
	e := g.dirs[cur]
	if e == nil {
		e = &guardDir{}
		g.dirs[cur] = e
	}
	g.mu.Unlock()
	g.look(e, cur)
	if e.err != nil {
		return false, nil
	}
	if e.data.IsLink() {
		return false, linkError(root, path, cur)
	}
	return e.data.IsDir(), nil
}

// look takes e's Lstat of dir, once; what is not a real folder is
// forgotten, so a later question looks again.
func (g *LinkGuard) look(e *guardDir, dir fsys.AbsPath) {
	e.once.Do(func() {
		e.data, e.err = fsys.LstatData(g.sys, dir)
		if errors.Is(e.err, fs.ErrNotExist) {
			g.markGone(dir)
		}
		if e.err != nil || !e.data.IsDir() {
			g.mu.Lock()
			delete(g.dirs, dir)
			g.mu.Unlock()
		}
	})
}

// markGone remembers dir as missing.
func (g *LinkGuard) markGone(dir fsys.AbsPath) {
	g.gone.Store(dir, struct{}{})
	g.anyGone.Store(true)
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
