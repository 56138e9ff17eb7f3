//go:build unix

package fsys

import (
	"errors"
	"os"
	"syscall"
)

// processGone reports whether no process has id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ownFolder reports whether dir is a folder (not a link) of this user's.
func ownFolder(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
