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
	fd, err := openToRead(path)
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
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	info := newStatInfo(baseName(path), &st)
	if !info.Mode().IsRegular() {
		return nil, info, nil
	}
	data, err = readFd(fd, st.Size, path, buf)
	if err != nil {
		return nil, info, err
	}
	return data, info, nil
}

// readFit is [FitReader.ReadFit]: open, read and close, no fstat (a
// deploy of 10,000 sources makes 10,000 fewer calls). A read that leaves
// room in buf ends the file. What is not a regular file fails the open
// (a link, a socket) or the read (a folder), or reads what is waiting
// without blocking (a FIFO: nothing, or bytes its writer left; a device,
// which only root can make), which the caller's hash then refuses; empty
// is not ok.
func readFit(path string, buf []byte) ([]byte, bool) {
	if cap(buf) < 2 {
		return nil, false
	}
	fd, err := openToRead(path)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	buf = buf[:cap(buf)]
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil || n <= 0 || n == len(buf):
			return nil, false
		}
		return buf[:n], true
	}
}

// openToRead opens path to read it as readRegular and readFit do: a final
// symlink refused (O_NOFOLLOW), a FIFO not waited for (O_NONBLOCK), the
// open made again when a signal interrupts it.
func openToRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// statInfo is the [fs.FileInfo] of an fstat, as os.Lstat describes the
// same file: only what agentpack reads of it (a 10,000-file load keeps
// one per file until its fingerprint is taken). Sys builds the
// *syscall.Stat_t of those fields.
type statInfo struct {
	name               string
	size, mtime, ctime int64
	ino                uint64
	mode               fs.FileMode
}

func newStatInfo(name string, st *syscall.Stat_t) *statInfo {
	return &statInfo{name: name, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, mode: modeOf(st.Mode)}
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.size }
func (s *statInfo) IsDir() bool        { return s.mode.IsDir() }
func (s *statInfo) ModTime() time.Time { return time.Unix(0, s.mtime) }
func (s *statInfo) Mode() fs.FileMode  { return s.mode }

// Sys is the stat data this description holds.
func (s *statInfo) Sys() any {
	return &syscall.Stat_t{Size: s.size, Ino: s.ino, Mode: unixMode(s.mode),
		Mtim: syscall.NsecToTimespec(s.mtime), Ctim: syscall.NsecToTimespec(s.ctime)}
}

// compactExtra is statExtra for a statInfo, without building its Stat_t.
func compactExtra(fi fs.FileInfo) (ctime int64, ino uint64, ok bool) {
	if s, is := fi.(*statInfo); is {
		return s.ctime, s.ino, true
	}
	return 0, 0, false
}

// unixMode is st_mode for a mode modeOf read.
func unixMode(m fs.FileMode) uint32 {
	mode := uint32(m.Perm())
	switch {
	case m&fs.ModeCharDevice != 0:
		mode |= syscall.S_IFCHR
	case m&fs.ModeDevice != 0:
		mode |= syscall.S_IFBLK
	case m.IsDir():
		mode |= syscall.S_IFDIR
	case m&fs.ModeNamedPipe != 0:
		mode |= syscall.S_IFIFO
	case m&fs.ModeSymlink != 0:
		mode |= syscall.S_IFLNK
	case m&fs.ModeSocket != 0:
		mode |= syscall.S_IFSOCK
	default:
		mode |= syscall.S_IFREG
	}
	if m&fs.ModeSetgid != 0 {
		mode |= syscall.S_ISGID
	}
	if m&fs.ModeSetuid != 0 {
		mode |= syscall.S_ISUID
	}
	if m&fs.ModeSticky != 0 {
		mode |= syscall.S_ISVTX
	}
	return mode
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
