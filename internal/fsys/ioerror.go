package fsys

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
)

// IOError turns an OS error from op ("read", "write", "remove", …) on path
// into an apperr.Error with a stable E_IO_* code. The OS cause stays in the
// message and in details["cause"], because "no space left on device" is what
// tells the user what to fix. An error that already is an apperr.Error is
// returned as it is.
func IOError(err error, op string, path AbsPath) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	code, hint := apperr.IOFailed, "check the path and try again"
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		code, hint = apperr.IOPermissionDenied, "make the folder writable or choose another target path"
	case errors.Is(err, syscall.ENAMETOOLONG):
		code, hint = apperr.IOPathTooLong, "shorten the module id or target path"
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ELOOP):
		code, hint = apperr.IOInvalidPath, "a parent of this path is a file, or the path is a folder"
	case errors.Is(err, syscall.ENOSPC):
		hint = "free some disk space and try again"
	}
	cause := rootCause(err)
	return apperr.Wrap(err, code, "cannot %s %s: %s", op, path, cause).WithHint("%s", hint).
		With("path", path.String()).With("path_posix", path.ToSlash()).With("cause", cause)
}

// rootCause returns the innermost error's text: "no space left on device"
// rather than "write /x/.agentpack-tmp-123: no space left on device", whose
// temp name means nothing to a user.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
