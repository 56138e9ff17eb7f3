package fsys

import (
	"bufio"
	"io"
	"io/fs"
	"os"
)

// Stream is a file written piece by piece, for bytes too many to hold at
// once (the saved bytes of a snapshot of ten thousand files).
type Stream interface {
	io.Writer
	// Sync makes what was written so far readable at the path and, when
	// the System fsyncs, durable.
	Sync() error
	// Close syncs and ends the stream.
	Close() error
}

// Streamer is implemented by a [System] that can write a file without
// holding all of its bytes. A System that cannot is served by
// [CreateStream] and [WriteStream] through a buffer and WriteFile.
type Streamer interface {
	// CreateStream creates path (emptying a file already there) with
	// perm, creating missing parent folders, and returns a Stream writing
	// it from its start. Readers see the file as it grows: it suits a
	// file whose index says which part is complete.
	CreateStream(path AbsPath, perm fs.FileMode) (Stream, error)
	// WriteStream replaces path atomically, as WriteFile does, with what
	// write writes, holding only a buffer of it. When write fails,
	// nothing changes.
	WriteStream(path AbsPath, perm fs.FileMode, write func(io.Writer) error) error
}

// CreateStream is sys's [Streamer.CreateStream], or, for a System that
// cannot stream, a buffer that each Sync writes whole with WriteFile.
func CreateStream(sys System, path AbsPath, perm fs.FileMode) (Stream, error) {
	if s, ok := sys.(Streamer); ok {
		return s.CreateStream(path, perm)
	}
	return &bufferStream{sys: sys, path: path, perm: perm, synced: -1}, nil
}

// StreamStatWriter is a [Streamer] whose WriteStream can tell what it
// placed, as a [StatWriter]'s writes do.
type StreamStatWriter interface {
	WriteStreamStat(path AbsPath, perm fs.FileMode, write func(io.Writer) error) (Placed, error)
}

// WriteStreamStat is sys's [StreamStatWriter.WriteStreamStat], or
// [WriteStream] telling nothing.
func WriteStreamStat(sys System, path AbsPath, perm fs.FileMode, write func(io.Writer) error) (Placed, error) {
	if s, ok := sys.(StreamStatWriter); ok {
		return s.WriteStreamStat(path, perm, write)
	}
	return Placed{}, WriteStream(sys, path, perm, write)
}

// WriteStream is sys's [Streamer.WriteStream], or, for a System that
// cannot stream, one WriteFile of what write wrote to a buffer: in chunks
// joined once, not a buffer that doubles (a dry-run rollback of 10,000
// files writes its journal twice and its record, 7 MB each, and spent a
// sixth of its time clearing and copying the doubled buffers).
func WriteStream(sys System, path AbsPath, perm fs.FileMode, write func(io.Writer) error) error {
	if s, ok := sys.(Streamer); ok {
		return s.WriteStream(path, perm, write)
	}
	buf := &bufferStream{sys: sys, path: path, perm: perm, synced: -1}
	if err := write(buf); err != nil {
		return err
	}
	return buf.Sync()
}

// handedOverWriter is implemented by a System in memory that can keep the
// bytes it is given instead of a copy, for a caller that never touches
// them again (a dry run's snapshot pack: 10 MB at 10,000 files).
type handedOverWriter interface {
	writeHandedOver(path AbsPath, data []byte, perm fs.FileMode) error
}

// writeHandedOver is WriteFile of data that the caller lets go of.
func writeHandedOver(sys System, path AbsPath, data []byte, perm fs.FileMode) error {
	if h, ok := sys.(handedOverWriter); ok {
		return h.writeHandedOver(path, data, perm)
	}
	return sys.WriteFile(path, data, perm)
}

// bufferStream is the Stream of a System that cannot stream (the ones in
// memory and the recording one). It holds what was written in chunks,
// never copied as it grows, and each Sync that has something new writes
// them joined once.
type bufferStream struct {
	sys    System
	path   AbsPath
	perm   fs.FileMode
	chunks [][]byte
	n      int
	synced int // n at the last Sync, -1 before the first
}

// maxStreamChunk is the size chunks of a bufferStream grow to.
const maxStreamChunk = 1 << 20

func (b *bufferStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if k := len(b.chunks); k == 0 || len(b.chunks[k-1]) == cap(b.chunks[k-1]) {
			size := 4 << 10
			if k > 0 {
				size = min(2*cap(b.chunks[k-1]), maxStreamChunk)
			}
			b.chunks = append(b.chunks, make([]byte, 0, size))
		}
		last := &b.chunks[len(b.chunks)-1]
		k := min(cap(*last)-len(*last), len(p))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	b.n += n
	return n, nil
}

func (b *bufferStream) Sync() error {
	if b.n == b.synced {
		return nil
	}
	data := make([]byte, 0, b.n)
	for _, c := range b.chunks {
		data = append(data, c...)
	}
	if err := writeHandedOver(b.sys, b.path, data, b.perm); err != nil {
		return err
	}
	// The joined bytes, full to their capacity, are the chunks now: the
	// stream holds them once, not once in chunks and once joined (a dry
	// run's pack of 10,000 removed files is 10 MB).
	b.chunks = append(b.chunks[:0], data)
	b.synced = b.n
	return nil
}

func (b *bufferStream) Close() error { return b.Sync() }

// CreateStream implements [Streamer]. With Fsync, the file's folder entry
// is made durable at once and its bytes at each Sync.
func (s *RealSystem) CreateStream(path AbsPath, perm fs.FileMode) (Stream, error) {
	if fi, err := os.Lstat(string(path)); err == nil {
		if err := refuseNonFile(path, fi.Mode()); err != nil {
			return nil, err
		}
	}
	dir := path.Dir()
	if err := os.MkdirAll(string(dir), 0o755); err != nil {
		return nil, IOError(err, "create folder", dir)
	}
	f, err := os.OpenFile(string(path), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm.Perm())
	if err == nil {
		err = f.Chmod(perm.Perm()) // the umask must not widen or narrow state files
		if err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		return nil, IOError(err, "write", path)
	}
	if s.dirty != nil {
		s.dirty.add(dir)
	}
	if s.opts.Fsync {
		if err := SyncDir(dir); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return &realStream{sys: s, f: f, path: path}, nil
}

// realStream is a [Stream] on the disk.
type realStream struct {
	sys  *RealSystem
	f    *os.File
	path AbsPath
}

func (r *realStream) Write(p []byte) (int, error) {
	n, err := r.f.Write(p)
	return n, IOError(err, "write", r.path)
}

func (r *realStream) Sync() error {
	if !r.sys.opts.Fsync {
		return nil
	}
	return IOError(r.f.Sync(), "sync", r.path)
}

func (r *realStream) Close() error {
	err := r.Sync()
	if cerr := r.f.Close(); err == nil {
		err = IOError(cerr, "write", r.path)
	}
	if err == nil && r.sys.opts.AfterWrite != nil {
		r.sys.opts.AfterWrite(r.path)
	}
	return err
}

// WriteStream implements [Streamer] with the atomic write of
// [RealSystem.WriteFile] (temp file, mode, optional fsync, rename,
// optional fsync of the folder), through a 64 KiB buffer.
func (s *RealSystem) WriteStream(path AbsPath, perm fs.FileMode, write func(io.Writer) error) error {
	return s.writeStream(path, perm, write, nil)
}

// WriteStreamStat implements [StreamStatWriter].
func (s *RealSystem) WriteStreamStat(path AbsPath, perm fs.FileMode, write func(io.Writer) error) (Placed, error) {
	var placed Placed
	err := s.writeStream(path, perm, write, &placed)
	return placed, err
}

// writeStream is WriteStream, telling placed (when set) what it placed.
func (s *RealSystem) writeStream(path AbsPath, perm fs.FileMode, write func(io.Writer) error, placed *Placed) error {
	if fi, err := os.Lstat(string(path)); err == nil {
		if err := refuseNonFile(path, fi.Mode()); err != nil {
			return err
		}
	}
	dir := path.Dir()
	if err := os.MkdirAll(string(dir), 0o755); err != nil {
		return IOError(err, "create folder", dir)
	}
	err := replaceViaTemp(dir, path, perm.Perm(), s.opts.Fsync, placed, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return IOError(err, "write", path)
	}
	return s.done(path, dir)
}
