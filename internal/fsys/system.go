package fsys

import "io/fs"

// System is the only way agentpack touches files. Every implementation
// returns errors that match fs.ErrNotExist and friends with errors.Is, and
// carry an apperr code from [IOError].
type System interface {
	// ReadFile returns the bytes of path, following symlinks.
	ReadFile(path AbsPath) ([]byte, error)
	// Lstat describes path without following a final symlink.
	Lstat(path AbsPath) (fs.FileInfo, error)
	// Stat describes path after following symlinks.
	Stat(path AbsPath) (fs.FileInfo, error)
	// ReadDir lists the folder path, sorted by name.
	ReadDir(path AbsPath) ([]fs.DirEntry, error)
	// Readlink returns the target stored in the symlink path.
	Readlink(path AbsPath) (string, error)
	// WriteFile replaces path with a complete file holding data, or leaves
	// the old one, creating missing parent folders. A symlink or a folder
	// at path is refused (E_IO_INVALID_PATH), never replaced or followed.
	WriteFile(path AbsPath, data []byte, perm fs.FileMode) error
	// Remove deletes a file, a symlink or an empty folder; a missing path is
	// not an error.
	Remove(path AbsPath) error
	// RemoveAll deletes path and everything below it; a missing path is not
	// an error.
	RemoveAll(path AbsPath) error
	// MkdirAll creates path and any missing parents as folders.
	MkdirAll(path AbsPath, perm fs.FileMode) error
	// Rename moves oldpath to newpath, replacing a file at newpath.
	Rename(oldpath, newpath AbsPath) error
	// Symlink creates newname as a symlink holding oldname.
	Symlink(oldname string, newname AbsPath) error
}
