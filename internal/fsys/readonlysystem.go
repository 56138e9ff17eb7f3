package fsys

import (
	"io/fs"

	"github.com/agentpack/agentpack/internal/apperr"
)

// ReadOnlySystem forwards reads to a base [System] and fails every mutation
// with E_WRITE_DISABLED, so a command that must not write cannot, whatever
// code path it takes.
type ReadOnlySystem struct {
	base System
}

// NewReadOnlySystem returns a ReadOnlySystem reading from base.
func NewReadOnlySystem(base System) *ReadOnlySystem { return &ReadOnlySystem{base: base} }

// ReadFile implements [System].
func (s *ReadOnlySystem) ReadFile(path AbsPath) ([]byte, error) { return s.base.ReadFile(path) }

// Lstat implements [System].
func (s *ReadOnlySystem) Lstat(path AbsPath) (fs.FileInfo, error) { return s.base.Lstat(path) }

// Stat implements [System].
func (s *ReadOnlySystem) Stat(path AbsPath) (fs.FileInfo, error) { return s.base.Stat(path) }

// ReadDir implements [System].
func (s *ReadOnlySystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) { return s.base.ReadDir(path) }

// Readlink implements [System].
func (s *ReadOnlySystem) Readlink(path AbsPath) (string, error) { return s.base.Readlink(path) }

// WriteFile implements [System].
func (s *ReadOnlySystem) WriteFile(path AbsPath, _ []byte, _ fs.FileMode) error {
	return writeDisabled(OpWrite, path)
}

// Remove implements [System].
func (s *ReadOnlySystem) Remove(path AbsPath) error { return writeDisabled(OpRemove, path) }

// RemoveAll implements [System].
func (s *ReadOnlySystem) RemoveAll(path AbsPath) error { return writeDisabled(OpRemoveAll, path) }

// MkdirAll implements [System].
func (s *ReadOnlySystem) MkdirAll(path AbsPath, _ fs.FileMode) error {
	return writeDisabled(OpMkdirAll, path)
}

// Rename implements [System].
func (s *ReadOnlySystem) Rename(oldpath, newpath AbsPath) error {
	return writeDisabled(OpRename, oldpath).With("new_path", newpath.String())
}

// Symlink implements [System].
func (s *ReadOnlySystem) Symlink(_ string, newname AbsPath) error {
	return writeDisabled(OpSymlink, newname)
}

func writeDisabled(op OpKind, path AbsPath) *apperr.Error {
	return apperr.New(apperr.WriteDisabled, "refusing to %s %s: this command is read-only", op, path).
		WithHint("run a command that is allowed to change files, such as deploy").
		With("path", path.String()).With("op", string(op))
}
