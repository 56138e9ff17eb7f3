package fsys

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestIOError(t *testing.T) {
	path := AbsPath("/x/y")
	osErr := func(errno error) error {
		return &fs.PathError{Op: "write", Path: "/x/.agentpack-tmp-123", Err: errno}
	}
	for _, tt := range []struct {
		err  error
		code apperr.Code
		msg  string
	}{
		{osErr(syscall.ENOSPC), apperr.IOFailed, "cannot write /x/y: no space left on device"},
		{osErr(syscall.EACCES), apperr.IOPermissionDenied, "cannot write /x/y: permission denied"},
		{osErr(syscall.EROFS), apperr.IOPermissionDenied, "cannot write /x/y: read-only file system"},
		{osErr(syscall.ENAMETOOLONG), apperr.IOPathTooLong, "cannot write /x/y: file name too long"},
		{osErr(syscall.ENOTDIR), apperr.IOInvalidPath, "cannot write /x/y: not a directory"},
		{errors.New("disk on fire"), apperr.IOFailed, "cannot write /x/y: disk on fire"},
	} {
		err := IOError(tt.err, "write", path)
		ae := apperr.As(err)
		if ae.Code != tt.code || ae.Message != tt.msg || ae.Details["path"] != "/x/y" || ae.Details["path_posix"] != "/x/y" {
			t.Errorf("IOError(%v) = %s %q %v; want %s %q", tt.err, ae.Code, ae.Message, ae.Details, tt.code, tt.msg)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("IOError(%v) lost its cause for errors.Is", tt.err)
		}
	}
	if cause := apperr.As(IOError(osErr(syscall.ENOSPC), "write", path)).Details["cause"]; cause != "no space left on device" {
		t.Errorf(`details["cause"] = %q`, cause)
	}
	if !errors.Is(IOError(osErr(syscall.ENOENT), "read", path), fs.ErrNotExist) {
		t.Error("ENOENT no longer matches fs.ErrNotExist")
	}
	if IOError(nil, "read", path) != nil {
		t.Error("IOError(nil) != nil")
	}
	known := apperr.New(apperr.WriteDisabled, "no")
	if IOError(known, "write", path) != error(known) {
		t.Error("IOError rewrapped an apperr.Error")
	}
}

func TestMissingStatErrorIsTheFullIOError(t *testing.T) {
	sys := NewRealSystem(RealSystemOptions{})
	p := AbsPath(filepath.Join(t.TempDir(), "nope"))
	_, err := sys.Lstat(p)
	if !errors.Is(err, fs.ErrNotExist) || apperr.CodeOf(err) != apperr.IOFailed {
		t.Fatalf("err %v (code %s): want ErrNotExist and E_IO_FAILED", err, apperr.CodeOf(err))
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Details["path"] != p.String() || !strings.Contains(err.Error(), "cannot stat "+p.String()) {
		t.Errorf("details %v, message %q", ae, err)
	}
}
