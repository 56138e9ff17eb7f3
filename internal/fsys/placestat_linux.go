package fsys

import "golang.org/x/sys/unix"

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
	var after unix.Stat_t
	if look == nil && unix.Fstat(dup, &after) == nil &&
		after.Size == before.Size && after.Mtim == before.Mtim && after.Ino == before.Ino {
		*placed = Placed{Stat: rawStatData(&after), Distinct: after.Ctim.Nano() > before.Ctim.Nano()}
	}
	return nil
}
