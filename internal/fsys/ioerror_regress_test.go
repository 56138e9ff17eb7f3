package fsys

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// A full disk must say so: the envelope shows the message, so the OS's
// words belong in it (and in details.cause), not only in the wrapped error.
func TestIOErrorKeepsTheOSCause(t *testing.T) {
	err := IOError(&fs.PathError{Op: "write", Path: "/p/f", Err: syscall.ENOSPC}, "write", "/p/f")
	ae := apperr.As(err)
	if !strings.Contains(ae.Message, "no space left on device") || ae.Details["cause"] != "no space left on device" {
		t.Fatalf("message %q / details %v lack the OS cause", ae.Message, ae.Details)
	}
}
