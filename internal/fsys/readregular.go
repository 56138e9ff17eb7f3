package fsys

import (
	"io/fs"
	"sync"
	"syscall"
)

// RegularReader is implemented by a [System] that can describe a path and
// read it, when it is a regular file, with one open: a load of 10,000
// source files then costs no Lstat per file before its read.
type RegularReader interface {
	// ReadRegular describes path as Lstat would (a final symlink is not
	// followed) and, when it is a regular file, returns its bytes; for
	// anything else data is nil and fi says what it is. A missing path is
	// an error matching fs.ErrNotExist, like Lstat's. The bytes go into
	// buf when it has room for them (data then shares buf's memory: a
	// caller that only hashes them reuses one buffer), else into a new
	// slice; buf may be nil.
	ReadRegular(path AbsPath, buf []byte) (data []byte, fi fs.FileInfo, err error)
}

// readBufs are the buffers of [GetReadBuf].
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxReadBuf is the largest buffer [PutReadBuf] keeps: a rare large
// file's is let go of.
const maxReadBuf = 1 << 20

// GetReadBuf returns a buffer, from a pool, for reading a file whose bytes
// are let go of once used (hashed, written elsewhere, saved): pass it to
// [ReadRegular], then back to [PutReadBuf]. A plan hashing 10,000 files,
// or a deploy writing them, reads them all into a few buffers instead of
// a slice each.
func GetReadBuf() *[]byte { return readBufs.Get().(*[]byte) }

// PutReadBuf gives buf back. read, when not nil, is bytes that were read
// instead of into buf (the file did not fit) and that nothing holds any
// more: they become the buffer, when not too large.
func PutReadBuf(buf *[]byte, read []byte) {
	if cap(read) > cap(*buf) {
		*buf = read
	}
	if cap(*buf) <= maxReadBuf {
		*buf = (*buf)[:0]
		readBufs.Put(buf)
	}
}

// ReadRegular is [RegularReader.ReadRegular] through sys's own when it has
// one, else an Lstat followed, for a regular file, by a ReadFile.
func ReadRegular(sys System, path AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	if r, ok := sys.(RegularReader); ok {
		return r.ReadRegular(path, buf)
	}
	fi, err := sys.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fi, err
	}
	data, err := sys.ReadFile(path)
	return data, fi, err
}

// ReadRegular implements [RegularReader].
func (s *RealSystem) ReadRegular(path AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	data, fi, err := readRegular(string(path), buf)
	if err != nil {
		if fi == nil {
			return nil, nil, statError(err, path)
		}
		return nil, nil, IOError(err, "read", path)
	}
	return data, fi, nil
}

// ReadRegular implements [RegularReader] by asking base.
func (s *ReadOnlySystem) ReadRegular(path AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	return ReadRegular(s.base, path, buf)
}

// ReadRegular implements [RegularReader]: the path counts as lstat'ed (a
// regular file's bytes are what its stat data vouches for), and the
// description found is the one its fingerprint keeps.
func (t *TrackingSystem) ReadRegular(path AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	data, fi, err := ReadRegular(t.System, path, buf)
	// A list, not the maps: a load reads 10,000 files this way, each once.
	e := FingerprintEntry{Path: path, Missing: fi == nil}
	if fi != nil {
		e = entryOf(path, false, false, StatDataOf(fi))
	}
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return data, fi, err
	}
	if t.nregular%trackedChunk == 0 {
		t.regular = append(t.regular, make([]FingerprintEntry, trackedChunk))
	}
	t.regular[t.nregular/trackedChunk][t.nregular%trackedChunk] = e
	t.nregular++
	t.mu.Unlock()
	return data, fi, err
}

// ErrMissing is the error Lstat gives for a path that does not exist, for
// callers that know it is missing without asking (a folder above it is).
func ErrMissing(path AbsPath) error {
	return &missingError{err: syscall.ENOENT, op: "stat", path: path}
}

// ReadRegular implements [RegularReader]: a path the dry run has not
// touched is read from the base with one open, as on the disk (a dry-run
// rollback reads each of the 10,000 files it would remove); any other is
// looked at, then read, in what the dry run recorded.
func (s *DryRunSystem) ReadRegular(path AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	s.mu.Lock()
	_, touched := s.lookup(path)
	s.mu.Unlock()
	if !touched {
		return ReadRegular(s.base, path, buf)
	}
	fi, err := s.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fi, err
	}
	data, err := s.ReadFile(path)
	return data, fi, err
}

// FitReader is implemented by a [System] that can read a small file with
// one open and one read, without looking at it first.
type FitReader interface {
	// ReadFit reads path into buf with one open (a final symlink refused)
	// and one read, when it held between one byte and less than buf's
	// capacity. ok is false for anything else (missing, a link, a folder,
	// empty, too large, an error): the caller then reads path as it
	// otherwise would. A short read is taken for the whole file without a
	// look at its size, so only a caller that checks the bytes it got
	// against a hash (a deploy's source reads) may use it.
	ReadFit(path AbsPath, buf []byte) (data []byte, ok bool)
}

// ReadFit is [FitReader.ReadFit] through sys's own; ok is false when sys
// has none.
func ReadFit(sys System, path AbsPath, buf []byte) ([]byte, bool) {
	if r, is := sys.(FitReader); is {
		return r.ReadFit(path, buf)
	}
	return nil, false
}

// ReadFit implements [FitReader].
func (s *RealSystem) ReadFit(path AbsPath, buf []byte) ([]byte, bool) {
	return readFit(string(path), buf)
}

// ReadFit implements [FitReader] by asking base.
func (s *ReadOnlySystem) ReadFit(path AbsPath, buf []byte) ([]byte, bool) {
	return ReadFit(s.base, path, buf)
}
