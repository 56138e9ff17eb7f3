package fsys

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// rawStat is os.Lstat (os.Stat when follow) as a [StatData]: one fstatat
// into a Stat_t on the stack, so no FileInfo is made.
func rawStat(path string, follow bool) (StatData, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	var st unix.Stat_t
	for {
		err := fstatat(path, &st, flags)
		if err == nil {
			break
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		op := "lstat"
		if follow {
			op = "stat"
		}
		return StatData{}, &fs.PathError{Op: op, Path: path, Err: err}
	}
	return rawStatData(&st), nil
}

// rawStatData is the StatData of a stat's answer.
func rawStatData(st *unix.Stat_t) StatData {
	return StatData{Mode: modeOf(st.Mode), Size: st.Size, MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Ino: st.Ino}
}

// modeOf is the fs.FileMode of a stat's st_mode, as os.Lstat gives it.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
