package module

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Symlinks follow one rule in every kind of source (local folder, local
// file, git checkout): a link whose target, resolved from the folder holding
// the link, stays inside the module's folder is loaded as what it points to
// (a file as a regular file with the target's bytes and mode, a folder as
// the files it holds, under the link's own path), so targets deploy regular
// files and never links. A link that is absolute, leaves the module's
// folder (even on the way back in), dangles or loops is refused with
// E_MODULE_INVALID naming the link and its target. The module's folder is
// the folder a folder module names, and the folder holding a single-file
// module; when the path a module names is itself a link, the rule applies
// to it with the folder holding it as the module's folder.

// Resolution outcomes that refuse a link.
const (
	linkAbsolute = "is absolute"
	linkLeaves   = "leaves the module folder"
	linkDangles  = "dangles"
	linkLoops    = "loops"
	linkSpecial  = "points to something that is neither a file nor a folder"
)

// maxLinkHops bounds the links followed to resolve one path, as Linux does.
const maxLinkHops = 40

// maxFolderLinks bounds the folder links expanded while loading one module,
// so links that fan out cannot make a module explode.
const maxFolderLinks = 1000

// resolveIn resolves the '/'-separated path rel below the folder root step
// by step through sys, following symlinks, and returns the path it leads to
// below root ("" for root itself) with that entry's description. It never
// leaves root: an absolute target or a ".." above root is refused, as are a
// dangling path and more than [maxLinkHops] links, with why saying which.
// Only other I/O failures are errors.
func resolveIn(sys fsys.System, root fsys.AbsPath, rel string) (res string, fi fs.FileInfo, why string, err error) {
	var done []string
	// last describes the entry done names, when the last step added it: the
	// path holds no link then, so a final Stat would only repeat that Lstat.
	var last fs.FileInfo
	todo := strings.Split(rel, "/")
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", nil, linkLeaves, nil
			}
			done, last = done[:len(done)-1], nil
			continue
		}
		cur := below(root, path.Join(path.Join(done...), name))
		fi, err := sys.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", nil, linkDangles, nil
		}
		if err != nil {
			return "", nil, "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, last = append(done, name), fi
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", nil, linkLoops, nil
		}
		target, err := sys.Readlink(cur)
		if err != nil {
			return "", nil, "", err
		}
		target = filepath.ToSlash(target)
		switch {
		case target == "":
			return "", nil, linkDangles, nil
		case strings.HasPrefix(target, "/") || filepath.IsAbs(target) || filepath.VolumeName(target) != "":
			return "", nil, linkAbsolute, nil
		}
		todo = append(strings.Split(target, "/"), todo...)
		last = nil
	}
	res = path.Join(done...)
	if last != nil {
		return res, last, "", nil
	}
	fi, err = sys.Stat(below(root, res))
	return res, fi, "", err
}

// below returns the entry at the '/'-separated path rel below root. rel is
// built from names sys listed or links held, never with "..", so it stays
// below root; "" is root itself.
func below(root fsys.AbsPath, rel string) fsys.AbsPath {
	return fsys.AbsPath(filepath.Join(root.String(), filepath.FromSlash(rel)))
}

// ioCause is what an I/O error from a System says went wrong ("permission
// denied"), without the path its message already repeats.
func ioCause(err error) string {
	if c, ok := apperr.As(err).Details["cause"].(string); ok {
		return c
	}
	return err.Error()
}

// linkErr refuses the symlink link of mod, whose module folder is root.
func linkErr(sys fsys.System, mod *Module, link, root fsys.AbsPath, why string) *apperr.Error {
	target, _ := sys.Readlink(link)
	return linkRefused(mod, link.String(), target, root.String(), why)
}

// linkRefused refuses the symlink link (holding target) of mod, whose
// module folder is root.
func linkRefused(mod *Module, link, target, root, why string) *apperr.Error {
	hint := "replace the link with a copy of what it points to, or point it at a file inside the module folder"
	if why == linkLoops {
		hint = "point the link at a file, or at a folder that does not hold the link"
	}
	return moduleErr(mod, link, "symlink %s -> %s %s (links must resolve inside the module folder %s)", link, target, why, root).
		WithHint("%s", hint).With("link", link).With("link_posix", filepath.ToSlash(link)).
		With("target", target).With("reason", why).With("module_root", root)
}

// resolveModulePath returns the file or folder p names, following p itself
// by the link rule when it is a link (with within, when it holds p, else
// the folder holding p, as the boundary), and its description.
func resolveModulePath(sys fsys.System, mod *Module, p fsys.AbsPath, within string) (fsys.AbsPath, fs.FileInfo, error) {
	fi, err := sys.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, moduleErr(mod, p.String(), "source path %s does not exist", p).
			WithHint("fix source.local_path.path or create the folder")
	}
	if err != nil {
		return "", nil, moduleErr(mod, p.String(), "cannot read %s: %s", p, ioCause(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		parent, rel := p.Dir(), p.Base()
		if w, err := fsys.NewAbsPath(within); within != "" && err == nil && w != p && w.Contains(p) {
			r, _ := filepath.Rel(w.String(), p.String())
			parent, rel = w, filepath.ToSlash(r)
		}
		res, rfi, why, err := resolveIn(sys, parent, rel)
		if err != nil {
			return "", nil, moduleErr(mod, p.String(), "cannot read %s: %s", p, ioCause(err))
		}
		if why != "" {
			return "", nil, linkErr(sys, mod, p, parent, why)
		}
		p, fi = below(parent, res), rfi
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", nil, moduleErr(mod, p.String(), "%s is neither a file nor a folder", p)
	}
	return p, fi, nil
}

// readJob is one file of a module to read: its path in the module, where
// its bytes are and, when resolving it already described it, that
// description (nil when only a listing named it).
type readJob struct {
	rel string
	abs fsys.AbsPath
	fi  fs.FileInfo
}

// folderWalk lists the files of the module folder root through sys,
// applying the link rule.
type folderWalk struct {
	sys         fsys.System
	mod         *Module
	root        fsys.AbsPath
	jobs        []readJob
	folderLinks int
}

// walk lists the folder real (below root) as the module path out; stack
// holds the folders being listed, real included, to detect loops.
func (w *folderWalk) walk(real, out string, stack []string) error {
	dir := below(w.root, real)
	entries, err := w.sys.ReadDir(dir)
	if err != nil {
		return moduleErr(w.mod, dir.String(), "cannot read %s: %s", dir, ioCause(err))
	}
	for _, e := range entries {
		name := e.Name()
		r, o := path.Join(real, name), path.Join(out, name)
		abs := dir.JoinName(name)
		switch t := e.Type(); {
		case t.IsDir():
			if name == ".git" {
				continue
			}
			if err := w.walk(r, o, append(stack, r)); err != nil {
				return err
			}
		case t.IsRegular():
			w.jobs = append(w.jobs, readJob{rel: o, abs: abs})
		case t&fs.ModeSymlink != 0:
			if err := w.link(abs, r, o, stack); err != nil {
				return err
			}
		default:
			return moduleErr(w.mod, abs.String(), "%s is neither a file, a folder nor a symlink", abs)
		}
	}
	return nil
}

// link applies the link rule to the symlink abs, at real below root and
// out in the module.
func (w *folderWalk) link(abs fsys.AbsPath, real, out string, stack []string) error {
	res, fi, why, err := resolveIn(w.sys, w.root, real)
	switch {
	case err != nil:
		return moduleErr(w.mod, abs.String(), "cannot read %s: %s", abs, ioCause(err))
	case why != "":
		return linkErr(w.sys, w.mod, abs, w.root, why)
	case fi.Mode().IsRegular():
		w.jobs = append(w.jobs, readJob{rel: out, abs: below(w.root, res), fi: fi})
		return nil
	case !fi.IsDir():
		return linkErr(w.sys, w.mod, abs, w.root, linkSpecial)
	case path.Base(out) == ".git":
		return nil
	}
	for _, s := range stack {
		if res == "" || res == s || strings.HasPrefix(s, res+"/") {
			return linkErr(w.sys, w.mod, abs, w.root, linkLoops)
		}
	}
	if w.folderLinks++; w.folderLinks > maxFolderLinks {
		return moduleErr(w.mod, abs.String(), "more than %d symlinked folders in the module", maxFolderLinks).
			WithHint("replace the links with the folders they point to")
	}
	return w.walk(res, out, append(stack, res))
}

// refuseLinksLeftOut refuses a module at p, in the cached git checkout co,
// that holds (or lies below) a symlink the cache left out of the checkout
// because it breaks the link rule.
func refuseLinksLeftOut(mod *Module, p string, co *gitsource.CheckoutInfo) error {
	rel, err := filepath.Rel(co.Dir, p)
	if err != nil {
		return nil
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	for _, l := range co.LinksLeftOut {
		if rel != "" && l.Path != rel && !strings.HasPrefix(l.Path, rel+"/") && !strings.HasPrefix(rel, l.Path+"/") {
			continue
		}
		why := "dangles or leads out of the module folder"
		switch j := path.Join(path.Dir(l.Path), l.Target); {
		case strings.HasPrefix(l.Target, "/") || filepath.IsAbs(l.Target):
			why = linkAbsolute
		case j == ".." || strings.HasPrefix(j, "../"):
			why = linkLeaves
		}
		link := filepath.Join(co.Dir, filepath.FromSlash(l.Path))
		return linkRefused(mod, link, l.Target, p, why).
			With("note", "the git cache leaves such links out of its checkouts")
	}
	return nil
}

// gitModes gives files loaded from a git checkout the modes git records
// (0644, or 0755 for executables) rather than the cache's read-only ones,
// so deployed files stay writable as they were before the cache was made
// read-only.
func gitModes(files []File) {
	for i := range files {
		if files[i].Mode&0o111 != 0 {
			files[i].Mode = 0o755
		} else {
			files[i].Mode = 0o644
		}
	}
}
