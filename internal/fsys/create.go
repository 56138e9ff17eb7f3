package fsys

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Creator is a [System] that can write a file only where nothing is, in
// one step: a deploy creating a file that was missing when it planned
// must not replace one another program made since.
type Creator interface {
	// CreateFile is WriteFile where nothing is at path: when something
	// is (a file, a link, a folder), it is left as it is and the error
	// wraps [fs.ErrExist].
	CreateFile(path AbsPath, data []byte, perm fs.FileMode) error
}

// CreateFile is sys's [Creator.CreateFile], or, for a System that is not
// a Creator, a look at path and then WriteFile.
func CreateFile(sys System, path AbsPath, data []byte, perm fs.FileMode) error {
	if c, ok := sys.(Creator); ok {
		return c.CreateFile(path, data, perm)
	}
	if _, err := sys.Lstat(path); err == nil {
		return existsError(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return sys.WriteFile(path, data, perm)
}

// StatWriter is a [System] whose writes can give the stat data of the file
// they placed, taken from the file written (no second lookup of its path):
// a deploy records the ten thousand files it wrote in the stat cache
// without looking at each again.
type StatWriter interface {
	// WriteFileStat is WriteFile, or [Creator.CreateFile] when create is
	// set, telling what it placed; [Placed] is zero when it cannot tell.
	WriteFileStat(path AbsPath, data []byte, perm fs.FileMode, create bool) (Placed, error)
}

// Placed is what a write tells of the file it placed.
type Placed struct {
	// Stat is the file's stat data as placed, looked at after the rename
	// that placed it.
	Stat StatData
	// Distinct: the rename moved the file's change time past the one a
	// look saw right before it, microseconds earlier. Such a file system
	// stamps a change to a file whose times were just looked at with a
	// fine-grained time (Linux's multigrain timestamps, or a fine clock),
	// so any later write to the file, even within the same clock tick,
	// moves its ctime away from Stat's: Stat can be trusted at once. Where
	// it is false, a same-size write in the same tick would leave Stat as
	// it is (git's "racy clean" problem).
	Distinct bool
}

// WriteFileStat is sys's [StatWriter.WriteFileStat], or, for a System
// that is not a StatWriter, [CreateFile] or WriteFile telling nothing.
func WriteFileStat(sys System, path AbsPath, data []byte, perm fs.FileMode, create bool) (Placed, error) {
	if w, ok := sys.(StatWriter); ok {
		return w.WriteFileStat(path, data, perm, create)
	}
	if create {
		return Placed{}, CreateFile(sys, path, data, perm)
	}
	return Placed{}, sys.WriteFile(path, data, perm)
}

func existsError(path AbsPath) error {
	return IOError(&fs.PathError{Op: "create", Path: path.String(), Err: fs.ErrExist}, "create", path)
}

// placeNew moves the complete temp file tmp to path only where nothing is
// at path: renameat2's RENAME_NOREPLACE on Linux, else a hard link (which
// fails where something is, atomically, on every file system that has
// them) and the temp name's removal. A file system with neither gets a
// look and a rename.
func placeNew(tmp, path string) error {
	if err := renameNoReplace(tmp, path); err == nil || !unsupported(err) {
		return err
	}
	return placeByLink(tmp, path)
}

// placeByLink is [placeNew] without renameat2.
func placeByLink(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil {
		_ = os.Remove(tmp)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, lerr := os.Lstat(path); lerr == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return os.Rename(tmp, path)
}

// unsupported reports whether err says the file system or the platform
// cannot do what was asked, rather than that it failed.
func unsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOSYS) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EPERM) || isENOTSUP(err)
}
