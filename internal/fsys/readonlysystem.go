package fsys

import (
	"io"
	"io/fs"

	"github.com/agentpack/agentpack/internal/apperr"
)

// ReadOnlySystem forwards reads to a base [System] and fails every mutation
// with E_WRITE_DISABLED, so a command that must not write cannot, whatever
// code path it takes. Paths at or below an allowed path (caches, which a
// read-only command may fill when it can but never needs) are written
// through to base.
type ReadOnlySystem struct {
	base  System
	allow []AbsPath
}

// NewReadOnlySystem returns a ReadOnlySystem reading from base and writing
// only at or below the allow paths.
func NewReadOnlySystem(base System, allow ...AbsPath) *ReadOnlySystem {
	return &ReadOnlySystem{base: base, allow: allow}
}

// Base is the System this one reads from.
func (s *ReadOnlySystem) Base() System { return s.base }

// allowed reports whether path may be written through to base.
func (s *ReadOnlySystem) allowed(path AbsPath) bool {
	for _, a := range s.allow {
		if a.Contains(path) {
			return true
		}
	}
	return false
}

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

// CreateFile implements [Creator].
func (s *ReadOnlySystem) CreateFile(path AbsPath, data []byte, perm fs.FileMode) error {
	if s.allowed(path) {
		return CreateFile(s.base, path, data, perm)
	}
	return writeDisabled(OpWrite, path)
}

// WriteFile implements [System].
func (s *ReadOnlySystem) WriteFile(path AbsPath, data []byte, perm fs.FileMode) error {
	if s.allowed(path) {
		return s.base.WriteFile(path, data, perm)
	}
	return writeDisabled(OpWrite, path)
}

// CreateStream implements [Streamer]: a stream of base's where writes
// are allowed.
func (s *ReadOnlySystem) CreateStream(path AbsPath, perm fs.FileMode) (Stream, error) {
	if s.allowed(path) {
		return CreateStream(s.base, path, perm)
	}
	return nil, writeDisabled(OpWrite, path)
}

// WriteStream implements [Streamer]: a cache file is written as it is
// encoded, not built whole first.
func (s *ReadOnlySystem) WriteStream(path AbsPath, perm fs.FileMode, write func(io.Writer) error) error {
	if s.allowed(path) {
		return WriteStream(s.base, path, perm, write)
	}
	return writeDisabled(OpWrite, path)
}

// Remove implements [System].
func (s *ReadOnlySystem) Remove(path AbsPath) error {
	if s.allowed(path) {
		return s.base.Remove(path)
	}
	return writeDisabled(OpRemove, path)
}

// RemoveAll implements [System].
func (s *ReadOnlySystem) RemoveAll(path AbsPath) error {
	if s.allowed(path) {
		return s.base.RemoveAll(path)
	}
	return writeDisabled(OpRemoveAll, path)
}

// MkdirAll implements [System].
func (s *ReadOnlySystem) MkdirAll(path AbsPath, perm fs.FileMode) error {
	if s.allowed(path) {
		return s.base.MkdirAll(path, perm)
	}
	for _, a := range s.allow {
		// The folders leading to an allowed path may be created too: a
		// fresh home has no cache folder yet.
		if path.Contains(a) {
			return s.base.MkdirAll(path, perm)
		}
	}
	return writeDisabled(OpMkdirAll, path)
}

// Rename implements [System].
func (s *ReadOnlySystem) Rename(oldpath, newpath AbsPath) error {
	if s.allowed(oldpath) && s.allowed(newpath) {
		return s.base.Rename(oldpath, newpath)
	}
	return writeDisabled(OpRename, oldpath).With("new_path", newpath.String())
}

// Symlink implements [System].
func (s *ReadOnlySystem) Symlink(oldname string, newname AbsPath) error {
	if s.allowed(newname) {
		return s.base.Symlink(oldname, newname)
	}
	return writeDisabled(OpSymlink, newname)
}

func writeDisabled(op OpKind, path AbsPath) *apperr.Error {
	return apperr.New(apperr.WriteDisabled, "refusing to %s %s: this command is read-only", op, path).
		WithHint("run a command that is allowed to change files, such as deploy").
		With("path", path.String()).With("op", string(op))
}
