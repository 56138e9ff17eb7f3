package fsys

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
)

// ErrNotRegular is the cause of a read refused because the path is neither
// a regular file nor a folder: a FIFO, a socket or a device, which
// agentpack never reads (a FIFO's open would wait for a writer).
var ErrNotRegular = errors.New("not a regular file")

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
	case errors.Is(err, ErrNotRegular):
		code, hint = apperr.IOInvalidPath, "replace it with a regular file: agentpack reads and writes regular files only"
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

// missingError is [IOError] for a path that does not exist, built only when
// someone asks for it: a cold plan stats thousands of target paths that do
// not exist yet, and callers mostly just test errors.Is(err,
// fs.ErrNotExist), so the message, hint and details are not made up front.
type missingError struct {
	err  error // the OS error; errors.Is(…, fs.ErrNotExist) holds
	op   string
	path AbsPath
}

func (e *missingError) full() *apperr.Error {
	var ae *apperr.Error
	_ = errors.As(IOError(e.err, e.op, e.path), &ae)
	return ae
}

func (e *missingError) Error() string { return e.full().Error() }
func (e *missingError) Unwrap() error { return e.err }

// As lets errors.As (and apperr.CodeOf) see the full apperr.Error.
func (e *missingError) As(target any) bool {
	if t, ok := target.(**apperr.Error); ok {
		*t = e.full()
		return true
	}
	return false
}

// statError is [IOError] for a stat, lazy when the path does not exist.
func statError(err error, path AbsPath) error {
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return &missingError{err: err, op: "stat", path: path}
	}
	return IOError(err, "stat", path)
}
