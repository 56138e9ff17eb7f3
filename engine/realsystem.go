package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
)

// tempPrefix starts the names of temp files that become target files.
const tempPrefix = ".agentpack-tmp-"

// RealSystem reads and writes the real filesystem. Every write is a temp file
// in the destination directory followed by a rename, so a reader never sees a
// half-written file. Fsync is opt-in (AGENTPACK_FSYNC=1) because it costs
// seconds on large deploys and the journal already makes applies recoverable.
type RealSystem struct {
	Fsync bool
	// AfterWrite, when set, runs after each successful write or remove; tests
	// use it to inject crashes.
	AfterWrite func(path string)
}

// ReadFile implements System.
func (s *RealSystem) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Lstat implements System.
func (s *RealSystem) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

// ReadDir implements System.
func (s *RealSystem) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// WriteFile implements System.
func (s *RealSystem) WriteFile(path string, data []byte, perm fs.FileMode) error {
	if err := refuseSymlink(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ioError(err, path)
	}
	// A short temp name: base+suffix could pass the 255-byte name limit.
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return ioError(err, path)
	}
	tmp := f.Name()
	cleanup := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return ioError(err, path)
	}
	if _, err := f.Write(data); err != nil {
		return cleanup(err)
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return cleanup(err)
	}
	if s.Fsync {
		if err := f.Sync(); err != nil {
			return cleanup(err)
		}
	}
	if err := f.Close(); err != nil {
		return cleanup(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return ioError(err, path)
	}
	if s.Fsync {
		syncDir(dir)
	}
	if s.AfterWrite != nil {
		s.AfterWrite(path)
	}
	return nil
}

// Remove implements System.
func (s *RealSystem) Remove(path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioError(err, path)
	}
	if s.Fsync {
		syncDir(filepath.Dir(path))
	}
	if s.AfterWrite != nil {
		s.AfterWrite(path)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// refuseSymlink refuses to write through a symlink at path: agentpack
// replaces regular files only, never what a link points to.
func refuseSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return apperr.New(apperr.IOInvalidPath, "%s is a symlink; agentpack does not write through links", path).
			WithHint("remove the link or point the target option elsewhere").With("path", path)
	}
	if fi.IsDir() {
		return apperr.New(apperr.IOInvalidPath, "%s is a directory where a file should be", path).
			WithHint("move the directory away, then deploy again").With("path", path)
	}
	return nil
}

// ioError maps an OS error to a stable E_IO_* code.
func ioError(err error, path string) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	code := apperr.IOFailed
	hint := "check the path and try again"
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		code, hint = apperr.IOPermissionDenied, "make the directory writable or choose another target path"
	case errors.Is(err, syscall.ENAMETOOLONG):
		code, hint = apperr.IOPathTooLong, "shorten the module id or target path"
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EINVAL):
		code, hint = apperr.IOInvalidPath, "a parent of this path is a file, or the path is a directory"
	}
	// The OS's words ("no space left on device") go into the message: the
	// envelope shows the message, not the wrapped error.
	cause := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err.Error()
	}
	return apperr.Wrap(err, code, "cannot write %s: %s", path, cause).WithHint("%s", hint).
		With("path", path).With("path_posix", filepath.ToSlash(path)).With("cause", cause)
}
