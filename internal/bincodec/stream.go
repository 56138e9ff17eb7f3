package bincodec

import (
	"encoding/binary"
	"hash/crc32"
	"io"
)

// streamChunk is how much a Stream buffers before writing it out.
const streamChunk = 64 << 10

// Stream is a [Writer] whose bytes go to an io.Writer as they are
// encoded, for a file too large to build whole in memory: call Flush
// between records and Close at the end, which writes the CRC-32C.
type Stream struct {
	Writer
	out io.Writer
	crc uint32
	err error
}

// NewStream starts a file with magic and version, written to out.
func NewStream(out io.Writer, magic string, version byte) *Stream {
	s := &Stream{Writer: *NewWriter(magic, version, streamChunk+streamChunk/4), out: out}
	return s
}

// Flush writes out what is buffered once it is a chunk or more; a record
// may be split anywhere, so it is only a matter of when.
func (s *Stream) Flush() {
	if len(s.B) >= streamChunk {
		s.write()
	}
}

func (s *Stream) write() {
	if s.err == nil {
		s.crc = crc32.Update(s.crc, castagnoli(), s.B)
		_, s.err = s.out.Write(s.B)
	}
	s.B = s.B[:0]
}

// Close writes what is left and the checksum, and returns the first write
// error.
func (s *Stream) Close() error {
	s.write()
	if s.err == nil {
		_, s.err = s.out.Write(binary.BigEndian.AppendUint32(nil, s.crc))
	}
	return s.err
}
