package fsys

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// readRegular describes path as lstat would and reads it when it is a
// regular file, with open, fstat, read and close: no lstat before the
// open (O_NOFOLLOW refuses a final symlink, O_NONBLOCK keeps a FIFO from
// blocking the open) and none of the poller's calls. The bytes go into
// buf when it has room. fi is nil when the
// error is about finding path, set when it is about reading it.
func readRegular(path string, buf []byte) (data []byte, fi fs.FileInfo, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		// A symlink (ELOOP), a socket (ENXIO), an unreadable file: lstat
		// says which, and only a regular file keeps the open's error.
		lfi, lerr := os.Lstat(path)
		switch {
		case lerr != nil:
			return nil, nil, lerr
		case lfi.Mode().IsRegular():
			return nil, lfi, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return nil, lfi, nil
	}
	defer syscall.Close(fd)
	info := &statInfo{name: baseName(path)}
	if err := syscall.Fstat(fd, &info.st); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if !info.Mode().IsRegular() {
		return nil, info, nil
	}
	data, err = readFd(fd, info.st.Size, path, buf)
	if err != nil {
		return nil, info, err
	}
	return data, info, nil
}

// statInfo is the [fs.FileInfo] of an fstat, as os.Lstat describes the
// same file (mode bits, times, Sys a *syscall.Stat_t).
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) Sys() any           { return &s.st }

// Mode is the os package's reading of st_mode.
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if s.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// baseName is the last element of path, as os.Lstat names it.
func baseName(path string) string {
	i := len(path) - 1
	for i > 0 && path[i] == '/' {
		i--
	}
	path = path[:i+1]
	for j := len(path) - 1; j >= 0; j-- {
		if path[j] == '/' {
			return path[j+1:]
		}
	}
	return path
}
