package fsys

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// RangeReader is implemented by a [System] that can read part of a file
// without reading all of it, for files that pack many records together.
type RangeReader interface {
	// ReadRange returns the n bytes of path starting at offset off.
	ReadRange(path AbsPath, off, n int64) ([]byte, error)
}

// ReadRange returns the n bytes of path starting at offset off, following
// symlinks, through sys's own ReadRange when it is a [RangeReader] and by
// slicing ReadFile otherwise. A file too short to hold them is E_IO_FAILED
// matching io.ErrUnexpectedEOF; a negative off or n is E_IO_INVALID_PATH.
func ReadRange(sys System, path AbsPath, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, IOError(syscall.EINVAL, "read", path)
	}
	if r, ok := sys.(RangeReader); ok {
		return r.ReadRange(path, off, n)
	}
	data, err := sys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return sliceRange(data, path, off, n)
}

// sliceRange is the n bytes of path's data at off, as [ReadRange] gives
// them.
func sliceRange(data []byte, path AbsPath, off, n int64) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	if off >= int64(len(data)) || n > int64(len(data))-off {
		return nil, IOError(io.ErrUnexpectedEOF, "read", path)
	}
	return data[off : off+n : off+n], nil
}

// ReadRange implements [RangeReader] with one positioned read.
func (s *RealSystem) ReadRange(path AbsPath, off, n int64) ([]byte, error) {
	return rangeOf(path, off, n, readRange)
}

// rangeOf is the n bytes of path at off as read reads them, with the
// errors every range read gives: a negative off or n is refused unread,
// and a file too short to hold them is io.ErrUnexpectedEOF.
func rangeOf(path AbsPath, off, n int64, read func(path string, off, n int64) ([]byte, error)) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, IOError(syscall.EINVAL, "read", path)
	}
	data, err := read(string(path), off, n)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, IOError(err, "read", path)
	}
	return data, nil
}

// readRangePortable is readRange through an [os.File].
func readRangePortable(path string, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	if err := readRangeIntoPortable(path, off, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// readRangeIntoPortable is readRangeInto through an [os.File].
func readRangeIntoPortable(path string, off int64, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return syscall.EISDIR
	}
	_, err = f.ReadAt(buf, off)
	return err
}

// RangeIntoReader is implemented by a [System] that can read a range of a
// file into the caller's buffer: a reader of a large file a chunk at a
// time reuses one buffer instead of making a new one for each chunk (a
// rollback read its 3.5 MB record twice in fresh 256 KB chunks, and the
// pages they took cost more than the reads).
type RangeIntoReader interface {
	// ReadRangeInto reads len(buf) bytes of path at off into buf.
	ReadRangeInto(path AbsPath, off int64, buf []byte) error
}

// ReadRangeInto reads len(buf) bytes of path at off into buf, with the
// errors of [ReadRange], through sys's own ReadRangeInto when it is a
// [RangeIntoReader] and by copying a [ReadRange] otherwise.
func ReadRangeInto(sys System, path AbsPath, off int64, buf []byte) error {
	if r, ok := sys.(RangeIntoReader); ok {
		return r.ReadRangeInto(path, off, buf)
	}
	data, err := ReadRange(sys, path, off, int64(len(buf)))
	copy(buf, data)
	return err
}

// ReadRangeInto implements [RangeIntoReader] with positioned reads.
func (s *RealSystem) ReadRangeInto(path AbsPath, off int64, buf []byte) error {
	_, err := rangeOf(path, off, int64(len(buf)), func(path string, off, _ int64) ([]byte, error) {
		return nil, readRangeInto(path, off, buf)
	})
	return err
}

// ReadRangeInto implements [RangeIntoReader] by asking base.
func (s *ReadOnlySystem) ReadRangeInto(path AbsPath, off int64, buf []byte) error {
	return ReadRangeInto(s.base, path, off, buf)
}

// ReadRange implements [RangeReader] by asking base, so a read-only view of
// the disk reads packs as cheaply as the disk does.
func (s *ReadOnlySystem) ReadRange(path AbsPath, off, n int64) ([]byte, error) {
	return ReadRange(s.base, path, off, n)
}

// RangeFile reads ranges of one file held open ([OpenRange]).
type RangeFile interface {
	// ReadRange returns the n bytes at offset off, as [ReadRange] does.
	ReadRange(off, n int64) ([]byte, error)
	Close() error
}

// RangeOpener is implemented by a [System] that can hold a file open for
// many range reads: a rollback reads thousands of saved files from one
// pack with one open.
type RangeOpener interface {
	OpenRange(path AbsPath) (RangeFile, error)
}

// OpenRange opens path for range reads through sys's own OpenRange when it
// is a [RangeOpener]; otherwise each read is a [ReadRange] of its own and
// nothing is held open (Close does nothing).
func OpenRange(sys System, path AbsPath) (RangeFile, error) {
	if o, ok := sys.(RangeOpener); ok {
		return o.OpenRange(path)
	}
	return rangeEach{sys, path}, nil
}

// rangeEach is a [RangeFile] reading each range on its own.
type rangeEach struct {
	sys  System
	path AbsPath
}

func (r rangeEach) ReadRange(off, n int64) ([]byte, error) { return ReadRange(r.sys, r.path, off, n) }
func (r rangeEach) Close() error                           { return nil }

// OpenRange implements [RangeOpener] by asking base.
func (s *ReadOnlySystem) OpenRange(path AbsPath) (RangeFile, error) {
	return OpenRange(s.base, path)
}

// ReadRange implements [RangeReader]: a file the dry run has not written
// is read from the base a range at a time, not whole for each range (a
// dry-run rollback of 9,000 updates reads them from one 20 MB pack).
func (s *DryRunSystem) ReadRange(path AbsPath, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, IOError(syscall.EINVAL, "read", path)
	}
	s.mu.Lock()
	p, _, written, err := s.follow("read", path)
	var data []byte
	if err == nil && written {
		data, err = s.readFile(path)
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case !written:
		return ReadRange(s.base, p, off, n)
	}
	return sliceRange(data, path, off, n)
}
