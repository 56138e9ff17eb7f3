//go:build freebsd || netbsd

package fsys

import (
	"io/fs"
	"syscall"
)

// statExtra is the inode change time and the inode number of fi (see the
// Linux version); the BSDs name the change time Ctimespec.
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ctimespec.Sec)*1e9 + int64(st.Ctimespec.Nsec), uint64(st.Ino)
	}
	return 0, 0
}
