//go:build darwin

package fsys

import (
	"io/fs"
	"syscall"
)

// statExtra is the inode change time and the inode number of fi (see the
// Linux version); Darwin names the change time Ctimespec.
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec, uint64(st.Ino)
	}
	return 0, 0
}
