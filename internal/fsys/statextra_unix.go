//go:build linux || openbsd || dragonfly || solaris || illumos || aix

package fsys

import (
	"io/fs"
	"syscall"
)

// statExtra is the inode change time and the inode number of fi: the
// change time moves on every write and chmod, even when the modification
// time is put back (cp -p, touch -r).
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if ctime, ino, ok := compactExtra(fi); ok {
		return ctime, ino
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec), uint64(st.Ino)
	}
	return 0, 0
}
