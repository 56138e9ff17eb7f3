//go:build unix

package fsys

import "golang.org/x/sys/unix"

// CanWrite implements writeChecker with access(2), which also reports a
// read-only mount, without creating anything.
func (s *RealSystem) CanWrite(dir AbsPath) bool {
	return unix.Access(dir.String(), unix.W_OK|unix.X_OK) == nil
}
