package overlay

import (
	"errors"
	"io/fs"
	"path"
	"sort"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// listFiles returns the files below dir (not under .agentpack), sorted,
// with their data. A symlink anywhere in an overlay is refused: overlay
// bytes must come from the repo itself.
func listFiles(sys fsys.System, dir fsys.AbsPath) ([]module.File, error) {
	var out []module.File
	var walk func(p fsys.AbsPath, rel string) error
	walk = func(p fsys.AbsPath, rel string) error {
		entries, err := sys.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			r := path.Join(rel, e.Name())
			if r == MetaDir {
				continue
			}
			child := p.JoinName(e.Name())
			fi, err := sys.Lstat(child)
			if err != nil {
				return err
			}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				return symlinkErr(dir, child)
			case fi.IsDir():
				if err := walk(child, r); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				data, err := sys.ReadFile(child)
				if err != nil {
					return err
				}
				out = append(out, module.File{Path: r, Data: data, Mode: fi.Mode().Perm(), Src: child})
			}
		}
		return nil
	}
	if err := walk(dir, ""); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func symlinkErr(dir, link fsys.AbsPath) error {
	return apperr.New(apperr.ConfigInvalid, "overlay %s holds a symlink: %s", dir, link).
		WithHint("replace the link with the file it points to; overlays hold plain files only").
		With("overlay_dir", dir.String()).With("path", link.String())
}

// checkDir reports whether the overlay folder dir exists, refusing a dir
// that is (or lies below) a symlink inside the repo.
func checkDir(sys fsys.System, repo, dir fsys.AbsPath) (bool, error) {
	rel, err := repo.Rel(dir)
	if err != nil {
		return false, err
	}
	p := repo
	for _, part := range rel.Parts() {
		p = p.JoinName(part)
		fi, err := sys.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false, symlinkErr(dir, p)
		}
		if !fi.IsDir() {
			return false, apperr.New(apperr.ConfigInvalid, "%s should be a folder of overlays", p).
				WithHint("move the file away; overlay paths are folders").With("path", p.String())
		}
	}
	return true, nil
}

// patchFiles lists the patches of a patch overlay: .patch files below
// .agentpack/patches, each named after the file it changes.
func patchFiles(sys fsys.System, dir fsys.AbsPath) ([]module.File, error) {
	root := dir.JoinName(MetaDir).JoinName("patches")
	fi, err := sys.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, symlinkErr(dir, root)
	}
	files, err := listFiles(sys, root)
	if err != nil {
		return nil, err
	}
	var out []module.File
	for _, f := range files {
		if path.Ext(f.Path) == ".patch" {
			out = append(out, f)
		}
	}
	return out, nil
}
