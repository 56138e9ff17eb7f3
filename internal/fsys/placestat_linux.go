package fsys

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// closePlaceStat closes the written temp file fd, runs place, and tells
// *placed the stat data of the file placed, taken through a duplicate of
// fd: no second lookup of its path, and the rename's change time included
// (whether it moved past the look before is [Placed.Distinct]). fd is
// closed before the file is placed, as without placed (a network file
// system reports a failed write at close). When the file's size or
// modification time moved between the write and the look (another
// program wrote to it once placed), *placed stays zero: nothing is known.
func closePlaceStat(fd int, placed *Placed, place func() error) error {
	var before unix.Stat_t
	look := unix.Fstat(fd, &before)
	dup, derr := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if derr != nil {
		look = derr
	} else {
		defer unix.Close(dup)
	}
	if err := unix.Close(fd); err != nil {
		return err
	}
	if err := place(); err != nil {
		return err
	}
	if look == nil {
		*placed = placedLook(dup, &before)
	}
	return nil
}

// placedLook is what the file open as fd tells of itself once placed,
// looked at as before right before: its stat data when it still has the
// bytes then (the same inode, size and modification time; else nothing is
// told), distinct when placing moved its change time.
func placedLook(fd int, before *unix.Stat_t) Placed {
	var after unix.Stat_t
	if unix.Fstat(fd, &after) != nil || after.Size != before.Size || after.Mtim != before.Mtim || after.Ino != before.Ino {
		return Placed{}
	}
	return Placed{Stat: rawStatData(&after), Distinct: after.Ctim.Nano() > before.Ctim.Nano()}
}

// placedAfter is what a write placed at path, its temp file looked at as
// before right before it was closed and renamed there: the stat data path
// has now, when it is still that file with the bytes then (the same
// inode, size and modification time; else nothing is told), distinct as
// in [closePlaceStat]. The look goes by path, so it costs a lookup the
// raw writes do not make; it serves streamed writes, a few per deploy.
func placedAfter(before fs.FileInfo, path string) Placed {
	b, ok := before.Sys().(*syscall.Stat_t)
	if !ok {
		return Placed{}
	}
	var after unix.Stat_t
	if unix.Lstat(path, &after) != nil || after.Ino != b.Ino || after.Size != b.Size || after.Mtim.Nano() != b.Mtim.Nano() {
		return Placed{}
	}
	return Placed{Stat: rawStatData(&after), Distinct: after.Ctim.Nano() > b.Ctim.Nano()}
}
