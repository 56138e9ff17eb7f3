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
	if off < 0 || n < 0 {
		return nil, IOError(syscall.EINVAL, "read", path)
	}
	data, err := readRange(string(path), off, n)
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, syscall.EISDIR
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadRange implements [RangeReader] by asking base, so a read-only view of
// the disk reads packs as cheaply as the disk does.
func (s *ReadOnlySystem) ReadRange(path AbsPath, off, n int64) ([]byte, error) {
	return ReadRange(s.base, path, off, n)
}
