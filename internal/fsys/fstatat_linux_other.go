//go:build linux && !amd64 && !arm64

package fsys

import "golang.org/x/sys/unix"

// fstatat is unix.Fstatat(AT_FDCWD, path, st, flags).
func fstatat(path string, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(unix.AT_FDCWD, path, st, flags)
}
