package fsys

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A new file is written as an unnamed file in its folder (O_TMPFILE) and
// given its name by a link once complete: like a temp file renamed with
// RENAME_NOREPLACE, the name appears with the whole file or not at all
// and never replaces what another program put there, but the kernel
// makes one name instead of making one, renaming it and dropping it
// (a cold deploy of 10,000 files spends most of its writing time on
// names), and a crash leaves no temp file behind.

// anonOff: an unnamed file could not be made or named once in a way
// that will not change (a kernel or file system without O_TMPFILE, no
// way to link one): every later create goes through a temp name.
var anonOff atomic.Bool

// anonByProc: linking by the descriptor itself (AT_EMPTY_PATH, allowed
// without privilege from Linux 6.10) was refused, so the link goes
// through /proc/self/fd, which older kernels allow.
var anonByProc atomic.Bool

// createAnon writes data as a new file at path (in dir) through an
// unnamed file, telling placed what it placed as [closePlaceStat] does.
// done is false when nothing was made and the caller must write through
// a temp name: unnamed files are not supported here, or the open or link
// failed in a way the temp-name path reports as it always has.
func createAnon(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, placed *Placed) (done bool, err error) {
	return createAnonAt(anonFolder{fd: unix.AT_FDCWD, dir: dir}, string(path), path, data, perm, fsync, placed)
}

// anonFolder is where an unnamed file is made and named: a folder held
// open (fd), or, with fd AT_FDCWD, the folder dir found by its path (and
// made when missing) for each file.
type anonFolder struct {
	fd  int
	dir AbsPath
}

// createAnonAt is [createAnon] in folder f, naming the file name: relative
// to f's descriptor, or the whole path with AT_FDCWD. path is the file's
// path, for errors.
func createAnonAt(f anonFolder, name string, path AbsPath, data []byte, perm fs.FileMode, fsync bool, placed *Placed) (done bool, err error) {
	if anonOff.Load() {
		return false, nil
	}
	fd, err := f.open(perm)
	if err != nil {
		if anonUnsupported(err) {
			anonOff.Store(true)
		}
		return false, nil
	}
	err = fill(fd, data, perm, fsync)
	var before unix.Stat_t
	look := unix.Fstat(fd, &before)
	if err != nil {
		_ = unix.Close(fd)
		return true, &fs.PathError{Op: "write", Path: string(path), Err: err}
	}
	if err := linkAnon(fd, f.fd, name); err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.EEXIST) {
			return true, &fs.PathError{Op: "create", Path: string(path), Err: fs.ErrExist}
		}
		return false, nil
	}
	if placed != nil && look == nil {
		*placed = placedLook(fd, &before)
	}
	if err := unix.Close(fd); err != nil {
		// The name is there already: a file whose last bytes may not have
		// been written must not stay under it.
		var now unix.Stat_t
		if look == nil && unix.Fstatat(f.fd, name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Ino == before.Ino && now.Dev == before.Dev {
			_ = unix.Unlinkat(f.fd, name, 0)
		}
		if placed != nil {
			*placed = Placed{}
		}
		return true, &fs.PathError{Op: "write", Path: string(path), Err: err}
	}
	return true, nil
}

// open opens an unnamed file in f.
func (f anonFolder) open(perm fs.FileMode) (int, error) {
	if f.fd == unix.AT_FDCWD {
		return openAnon(f.dir, perm)
	}
	for {
		fd, err := unix.Openat(f.fd, ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, uint32(perm))
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// openAnon opens an unnamed file in dir, making dir when it is missing.
func openAnon(dir AbsPath, perm fs.FileMode) (int, error) {
	open := func() (int, error) {
		for {
			fd, err := unix.Open(string(dir), unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, uint32(perm))
			if !errors.Is(err, unix.EINTR) {
				return fd, err
			}
		}
	}
	fd, err := open()
	if errors.Is(err, unix.ENOENT) {
		if err := makeMissingDir(string(dir), 0o755); err != nil {
			return -1, err
		}
		fd, err = open()
	}
	return fd, err
}

// anonUnsupported reports an open that says unnamed files cannot be made
// here: a kernel that predates them (which takes the flag for a folder
// open: EISDIR) or a file system without them.
func anonUnsupported(err error) bool {
	return isENOTSUP(err) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL)
}

// linkAnon gives the unnamed file fd the name name in the folder open
// as at (a whole path with AT_FDCWD), failing with EEXIST when something
// is there.
func linkAnon(fd, at int, name string) error {
	if !anonByProc.Load() {
		err := unix.Linkat(fd, "", at, name, unix.AT_EMPTY_PATH)
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EPERM) {
			return err
		}
		// ENOENT is also a folder removed since the open: only a link
		// through /proc that works tells the descriptor was refused.
		if perr := linkByProc(fd, at, name); perr != nil {
			return perr
		}
		anonByProc.Store(true)
		return nil
	}
	err := linkByProc(fd, at, name)
	if errors.Is(err, unix.ENOENT) {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			anonOff.Store(true) // no /proc: no way to name an unnamed file
		}
	}
	return err
}

// linkByProc links fd's file to name in at through its /proc/self/fd
// entry.
func linkByProc(fd, at int, name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), at, name, unix.AT_SYMLINK_FOLLOW)
}
