package system

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
)

// IOError maps an OS error to a stable E_IO_* code.
func IOError(err error, path string) error {
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

// IsNotDir reports ENOTDIR: a parent of the path is a file, so the path
// cannot exist.
func IsNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
