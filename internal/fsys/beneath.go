package fsys

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
)

// CheckBeneath refuses path, with E_IO_INVALID_PATH, unless it lies inside
// root and no element strictly below root, up to and including path, is a
// symlink. It is the defence against writing or deleting through a link a
// user (or an attacker) put inside a managed folder: the OS would silently
// follow it out of root. root itself may be a link, since users link
// ~/.claude into their dotfiles. The walk stops, successfully, at the first
// element that does not exist or at a file where a folder would be, because
// nothing below it exists yet. Each element is examined with sys.Lstat, so
// dry runs and in-memory tests check the same way a deploy does. A check is
// only as fresh as its Lstat calls; it narrows, but cannot close, the race
// with a process swapping folders concurrently.
func CheckBeneath(sys System, root, path AbsPath) error {
	if path == root {
		return nil
	}
	if !root.Contains(path) {
		return apperr.New(apperr.IOInvalidPath, "%s is outside the managed folder %s", path, root).
			WithHint("agentpack only writes inside the folders it manages").
			With("path", path.String()).With("path_posix", path.ToSlash()).
			With("root", root.String()).With("root_posix", root.ToSlash())
	}
	// Split by hand rather than through RelPath, which cannot hold a Unix
	// name with a backslash in it.
	rest := strings.TrimPrefix(strings.TrimPrefix(string(path), string(root)), string(filepath.Separator))
	parts := strings.Split(rest, string(filepath.Separator))
	cur := root
	for i, name := range parts {
		cur = cur.JoinName(name)
		fi, err := sys.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		if fi.Mode()&fs.ModeSymlink != 0 {
			return linkError(root, path, cur, last)
		}
		if !last && !fi.IsDir() {
			return nil
		}
	}
	return nil
}

// linkError explains why the symlink at link, on the way to path, is refused.
func linkError(root, path, link AbsPath, final bool) error {
	var e *apperr.Error
	if final {
		e = apperr.New(apperr.IOInvalidPath, "%s is a symlink where agentpack manages a file", path).
			WithHint("remove the link (agentpack will write a regular file), then run the command again")
	} else {
		e = apperr.New(apperr.IOInvalidPath,
			"%s is a symlink inside the managed folder %s; agentpack never reads, writes or deletes through a linked folder",
			link, root).
			WithHint("replace the link with a real folder, or make the link's target the managed folder")
	}
	return e.With("path", path.String()).With("path_posix", path.ToSlash()).
		With("link", link.String()).With("link_posix", link.ToSlash()).
		With("root", root.String()).With("root_posix", root.ToSlash())
}
