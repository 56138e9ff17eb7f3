package fsys

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// OpenFolder implements [FolderOpener] where files are made unnamed and
// then linked: the folder is opened once (O_NOFOLLOW: a link there is
// refused) and each file is made and named relative to it.
func (s *RealSystem) OpenFolder(dir AbsPath) (Folder, error) {
	if anonOff.Load() {
		return nil, errors.ErrUnsupported
	}
	for {
		fd, err := unix.Open(string(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, IOError(&fs.PathError{Op: "open", Path: string(dir), Err: err}, "open", dir)
		}
		return &realFolder{s: s, at: anonFolder{fd: fd, dir: dir}}, nil
	}
}

// realFolder is a [Folder] of a [RealSystem].
type realFolder struct {
	s  *RealSystem
	at anonFolder
}

func (f *realFolder) CreateFileStat(name string, data []byte, perm fs.FileMode) (Placed, error) {
	path := f.at.dir.JoinName(name)
	var placed Placed
	done, err := createAnonAt(f.at, name, path, data, perm.Perm(), f.s.opts.Fsync, &placed)
	switch {
	case !done:
		// Not made here (the folder gone since it was opened, unnamed
		// files refused): by path, as every create goes without a Folder.
		return f.s.WriteFileStat(path, data, perm, true)
	case err != nil:
		return Placed{}, IOError(err, "create", path)
	}
	return placed, f.s.done(path, f.at.dir)
}

func (f *realFolder) Close() error { return unix.Close(f.at.fd) }
