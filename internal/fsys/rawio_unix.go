//go:build unix

package fsys

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// writeAtomic writes data to path through a temp file in dir renamed over
// it, with raw system calls: open, write, close and rename for a new file in
// an existing folder (Go's os.File adds the poller's fcntl and epoll calls
// to each file, which matters at ten thousand files). The mode is set with
// fchmod only when the umask would change it; missing folders are created
// only when the open says they are missing. place moves the complete temp
// file to path ([replaceFile], or [placeNew]). When placed is set, it is
// told what was placed, from the file itself ([closePlaceStat]).
func writeAtomic(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, place func(tmp, path string) error, placed *Placed) error {
	var (
		fd   int
		tmp  string
		err  error
		made bool
	)
	for range 100 {
		tmp = tempName(dir, rand.Uint64())
		fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm))
		switch {
		case err == nil:
		case errors.Is(err, unix.EEXIST):
			continue
		case errors.Is(err, unix.ENOENT) && !made:
			made = true
			if err := makeMissingDir(string(dir), 0o755); err != nil {
				return err
			}
			continue
		default:
			return &fs.PathError{Op: "open", Path: tmp, Err: err}
		}
		break
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: tmp, Err: err}
	}
	err = fill(fd, data, perm, fsync)
	if placed != nil && err == nil {
		err = closePlaceStat(fd, placed, func() error { return place(tmp, string(path)) })
	} else {
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
		if err == nil {
			err = place(tmp, string(path))
		}
	}
	if err != nil {
		_ = unix.Unlink(tmp)
		return &fs.PathError{Op: "write", Path: string(path), Err: err}
	}
	return nil
}

// readFile returns the bytes of path with open, fstat, read and close,
// without the poller calls of os.ReadFile. Only a regular file is read:
// the open does not wait (O_NONBLOCK), so a FIFO where agentpack expects
// a file (a manifest, a module's file, planted in a project or swapped in
// since the plan) is refused instead of hanging the command until some
// program writes to it, and a device is refused instead of read.
func readFile(path string) ([]byte, error) {
	fd, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return readFd(fd, size, path, nil)
}

// openRegular opens path for reading when it is a regular file, without
// waiting (O_NONBLOCK) and with its size by fstat; a folder is EISDIR and
// anything else [ErrNotRegular].
func openRegular(path string) (fd int, size int64, err error) {
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return fd, st.Size, nil
	case unix.S_IFDIR:
		err = unix.EISDIR
	default:
		err = ErrNotRegular
	}
	unix.Close(fd)
	return -1, 0, &fs.PathError{Op: "read", Path: path, Err: err}
}

// readRange returns the n bytes of the regular file path from offset off
// with open, fstat, positioned reads and close: a rollback reads 9,000
// saved files from one pack, each without the poller's calls of an
// os.File, and, like readFile, never waits on a FIFO planted where a pack
// should be. Bytes missing at the end are io.EOF.
func readRange(path string, off, n int64) ([]byte, error) {
	data := make([]byte, n)
	return data, readRangeInto(path, off, data)
}

// readRangeInto reads len(buf) bytes of path at off into buf, as
// readRange reads them.
func readRangeInto(path string, off int64, buf []byte) error {
	fd, _, err := openRegular(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return preadInto(fd, path, off, buf)
}

// preadAll reads the n bytes at off of the open file fd; bytes missing at
// the end are io.EOF.
func preadAll(fd int, path string, off, n int64) ([]byte, error) {
	data := make([]byte, n)
	if err := preadInto(fd, path, off, data); err != nil {
		return nil, err
	}
	return data, nil
}

// preadInto fills buf with the bytes at off of the open file fd; bytes
// missing at the end are io.EOF.
func preadInto(fd int, path string, off int64, buf []byte) error {
	for got := 0; got < len(buf); {
		k, err := unix.Pread(fd, buf[got:], off+int64(got))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return &fs.PathError{Op: "read", Path: path, Err: err}
		case k == 0:
			return io.EOF
		}
		got += k
	}
	return nil
}

// OpenRange implements [RangeOpener]: one open for every range read, each
// a pread on it (safe from many goroutines at once). Only where a file
// held open can still be removed or renamed by others (not on Windows).
func (s *RealSystem) OpenRange(path AbsPath) (RangeFile, error) {
	fd, _, err := openRegular(string(path))
	if err != nil {
		return nil, IOError(err, "read", path)
	}
	return &openRange{fd: fd, path: path}, nil
}

// openRange is a [RangeFile] on an open file.
type openRange struct {
	fd   int
	path AbsPath
}

func (r *openRange) ReadRange(off, n int64) ([]byte, error) {
	return rangeOf(r.path, off, n, func(path string, off, n int64) ([]byte, error) { return preadAll(r.fd, path, off, n) })
}

func (r *openRange) Close() error { return unix.Close(r.fd) }

// readFd reads the regular file fd, size bytes long by its fstat, to its
// end. A read that stops short of what was asked, having given exactly
// size bytes, has reached the end (a regular file gives what it has), so
// a file of the size fstat said costs one read, not a second one to see
// the end. Files whose size says nothing (/proc's, size 0) are read until
// a read returns nothing. The bytes go into buf when it has room for one
// more byte than size.
func readFd(fd int, size int64, path string, buf []byte) ([]byte, error) {
	// One more byte than the size, so a file that grew is seen at once.
	data := buf[:0]
	if int64(cap(buf)) <= size {
		data = make([]byte, 0, int(size)+1)
	}
	for {
		want := cap(data) - len(data)
		n, err := unix.Read(fd, data[len(data):cap(data)])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return data, nil
		}
		data = data[:len(data)+n]
		if n < want && size > 0 && int64(len(data)) == size {
			return data, nil
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// writeAll writes data to fd, retrying short writes and interruptions.
// fill writes data to the new file fd, gives it perm with fchmod only
// when the umask would have changed it, and fsyncs it when asked.
func fill(fd int, data []byte, perm fs.FileMode, fsync bool) error {
	err := writeAll(fd, data)
	if err == nil && perm&umask() != 0 {
		err = unix.Fchmod(fd, uint32(perm))
	}
	if err == nil && fsync {
		err = unix.Fsync(fd)
	}
	return err
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

var (
	umaskOnce  sync.Once
	umaskValue fs.FileMode
)

// umask is the process's file mode creation mask, read once from
// /proc/self/status (setting it to read it back would race with other
// goroutines creating files). Where it cannot be read it is taken as 0o777,
// so every write sets its mode explicitly.
func umask() fs.FileMode {
	umaskOnce.Do(func() {
		umaskValue = 0o777
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					umaskValue = fs.FileMode(m)
				}
			}
		}
	})
	return umaskValue
}

// replaceFile renames the complete temp file tmp over path with one
// rename(2). os.Rename looks at path first, to refuse a folder there the
// same way on every platform: rename(2) refuses one itself (EISDIR), and
// the writes that replace a file have looked at it already, so the look
// was a second lstat for each file a deploy of updates writes.
func replaceFile(tmp, path string) error {
	for {
		err := unix.Rename(tmp, path)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
		}
		return nil
	}
}
