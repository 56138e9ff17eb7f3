package fsys

import (
	"errors"

	"golang.org/x/sys/unix"
)

// haveSyncfs: Linux flushes a whole filesystem with one syncfs(2).
const haveSyncfs = true

// syncfs is unix.Syncfs (realSyncfs); tests count the calls.
var syncfs = realSyncfs

var realSyncfs = unix.Syncfs

// syncFilesystems flushes every filesystem that holds one of dirs, once
// each: file data, new names, renames and removals alike. A folder that
// no longer exists is represented by its nearest existing parent.
func syncFilesystems(dirs []AbsPath) error {
	done := map[uint64]bool{}
	for _, dir := range dirs {
		fd, dev, err := openExisting(dir)
		if err != nil {
			return err
		}
		if !done[dev] {
			done[dev] = true
			for {
				err = syncfs(fd)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
		unix.Close(fd)
		if err != nil {
			return IOError(err, "sync", dir)
		}
	}
	return nil
}

// openExisting opens dir, or its nearest existing parent, and returns the
// descriptor and the device it lives on.
func openExisting(dir AbsPath) (int, uint64, error) {
	for {
		fd, err := unix.Open(dir.String(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				return -1, 0, IOError(err, "sync", dir)
			}
			return fd, uint64(st.Dev), nil
		}
		if !errors.Is(err, unix.ENOENT) || dir.Dir() == dir {
			return -1, 0, IOError(err, "sync", dir)
		}
		dir = dir.Dir()
	}
}
