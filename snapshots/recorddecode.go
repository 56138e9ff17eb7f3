package snapshots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/internal/fsys"
	fastjson "github.com/segmentio/encoding/json"
)

// recordChunk is how much of a record file is read at a time.
const recordChunk = 256 << 10

// readRecord decodes the record file at path as json.Unmarshal would, but
// without holding the file's bytes (38 MB for 100,000 files): it reads
// the file a chunk at a time and decodes its files one by one, and the
// target, root and op strings they repeat are shared, not copied per
// file. each, when not nil, is given every file with the number expected
// (when sized; else 0, and the file is not read twice to count them), and
// says whether to keep it.
func readRecord(sys fsys.System, path fsys.AbsPath, each func(*FileChange, int) (bool, error), sized bool) (*Record, error) {
	files := 0
	if each != nil && sized {
		// Counted first, for a caller that sizes what it makes of the
		// files; a record loaded whole grows its slice as json.Unmarshal
		// does, rather than read its file twice.
		n, err := countFiles(openChunked(sys, path))
		if err != nil {
			return nil, err
		}
		files = n
	}
	in, err := openChunked(sys, path)
	if err != nil {
		return nil, err
	}
	return decodeRecord(in, files, each)
}

// fileKeyJSON starts every file of a record as Save writes it; it cannot
// occur inside a JSON string, where every quote is escaped.
const fileKeyJSON = `"target":`

// countFiles counts the files of a record as Save writes it (a hint: a
// record written otherwise may hold more or fewer).
func countFiles(in io.Reader, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n := 0
	buf := make([]byte, 0, recordChunk+len(fileKeyJSON))
	for {
		m, err := in.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		n += bytes.Count(buf, []byte(fileKeyJSON))
		// Keep the tail that could start a key cut by the chunk's end.
		tail := min(len(buf), len(fileKeyJSON)-1)
		buf = buf[:copy(buf, buf[len(buf)-tail:])]
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// errRecordRead marks an error reading a record file, as opposed to one
// decoding it.
type errRecordRead struct{ err error }

func (e errRecordRead) Error() string { return e.err.Error() }
func (e errRecordRead) Unwrap() error { return e.err }

// decodeRecord decodes a record from in as json.Unmarshal would: the files
// array element by element, the other fields together at the end. The
// record's structure (its object, its keys, its files array) is walked
// here and each value is handed whole to a JSON decoder that checks it:
// encoding/json's Decoder, token by token, spent four fifths of a 10,000
// file rollback's 42 ms of decoding scanning each file twice.
func decodeRecord(in io.Reader, nFiles int, each func(*FileChange, int) (bool, error)) (*Record, error) {
	s := &spans{r: in}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	var r Record
	var rest bytes.Buffer // the other fields, decoded together at the end
	rest.WriteByte('{')
	for first := true; ; first = false {
		raw, done, err := s.itemValue('}', first)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		var key string
		if len(raw) == 0 || raw[0] != '"' {
			return nil, fmt.Errorf("want a key in the record, got %.20q", raw)
		}
		if err := json.Unmarshal(raw, &key); err != nil {
			return nil, err
		}
		// What value cut out is s's until the next read: kept apart.
		raw = bytes.Clone(raw)
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		// encoding/json matches field names case-insensitively; a key
		// given twice takes its last value.
		if strings.EqualFold(key, "files") {
			if r.Files, err = decodeFiles(s, nFiles, each); err != nil {
				return nil, err
			}
			continue
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		rest.Write(raw)
		rest.WriteByte(':')
		if raw, err = s.value(); err != nil {
			return nil, err
		}
		rest.Write(raw)
	}
	if c, err := s.next(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = fmt.Errorf("invalid data after the record: %q", c)
		}
		return nil, err
	}
	rest.WriteByte('}')
	files := r.Files
	if err := json.Unmarshal(rest.Bytes(), &r); err != nil {
		return nil, err
	}
	r.Files = files
	return &r, nil
}

// decodeFiles decodes the value of a record's files: null or an array,
// each file unmarshalled on its own.
func decodeFiles(s *spans, n int, each func(*FileChange, int) (bool, error)) ([]FileChange, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '[' {
		raw, err := s.value()
		if err == nil && string(raw) == "null" {
			return nil, nil
		}
		if err == nil {
			err = fmt.Errorf("files is %.20q, not an array", raw)
		}
		return nil, err
	}
	s.pos++
	var files []FileChange
	if each == nil {
		files = make([]FileChange, 0, n)
	}
	shared := map[string]string{}
	share := func(s *string) {
		if v, ok := shared[*s]; ok {
			*s = v
		} else {
			shared[*s] = *s
		}
	}
	var f FileChange // decoded into, then copied: one allocation, not one a file
	for first := true; ; first = false {
		raw, done, err := s.itemValue(']', first)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		f = FileChange{}
		if err := fastjson.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
		share(&f.Target)
		share(&f.Root)
		share(&f.Op)
		if each != nil {
			if keep, err := each(&f, n); !keep || err != nil {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		files = append(files, f)
	}
	if files == nil {
		files = []FileChange{}
	}
	return files, nil
}

// spans walks the JSON text r gives, a chunk at a time, and cuts out
// whole values: the bytes of the value last cut are held until the next
// is asked for. It checks only what it walks (brackets, strings, the
// separators the caller expects); each value it cuts is checked by the
// decoder it is handed to.
type spans struct {
	r   io.Reader
	buf []byte
	pos int
	eof bool
}

// more reads the next chunk, dropping the bytes before keep.
func (s *spans) more(keep int) error {
	if s.eof {
		return io.ErrUnexpectedEOF
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.pos -= keep
	}
	if cap(s.buf)-len(s.buf) < recordChunk/2 {
		s.buf = append(make([]byte, 0, 2*cap(s.buf)+recordChunk), s.buf...)
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if errors.Is(err, io.EOF) {
		s.eof = true
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	return err
}

// next skips white space and returns the byte after it, not consumed;
// io.EOF when the text ends there.
func (s *spans) next() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if err := s.more(s.pos); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && s.eof {
				return 0, io.EOF
			}
			return 0, err
		}
	}
}

// peek is next where the text must go on: its end is
// io.ErrUnexpectedEOF.
func (s *spans) peek() (byte, error) {
	c, err := s.next()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return c, err
}

// expect consumes c, after white space.
func (s *spans) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("want %q in the record, got %q", c, got)
	}
	s.pos++
	return nil
}

// item steps to the next item of the object or array that end closes:
// past the comma before every item but the first, or past end (done)
// when there are no more.
func (s *spans) item(end byte, first bool) (done bool, err error) {
	c, err := s.peek()
	switch {
	case err != nil:
		return false, err
	case c == end:
		s.pos++
		return true, nil
	case first:
		return false, nil
	case c != ',':
		return false, fmt.Errorf("want , or %c in the record, got %q", end, c)
	}
	s.pos++
	return false, nil
}

// itemValue is [spans.item] and, when an item follows, its [spans.value].
func (s *spans) itemValue(end byte, first bool) (raw []byte, done bool, err error) {
	if done, err = s.item(end, first); done || err != nil {
		return nil, done, err
	}
	raw, err = s.value()
	return raw, false, err
}

// value cuts out the next value, after white space: an object or array to
// its matching bracket, a string to its closing quote, anything else to
// the next separator.
func (s *spans) value() ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, err
	}
	start, i := s.pos, s.pos
	depth, inString, escaped := 0, false, false
	for {
		for ; i < len(s.buf); i++ {
			c := s.buf[i]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if depth == 0 {
						s.pos = i + 1
						return s.buf[start:s.pos], nil
					}
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				if depth == 0 {
					s.pos = i
					return s.buf[start:i], nil // a scalar ends where its container does
				}
				depth--
				if depth == 0 {
					s.pos = i + 1
					return s.buf[start:s.pos], nil
				}
			case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
				s.pos = i
				return s.buf[start:i], nil
			}
		}
		if s.eof && depth == 0 && !inString && i > start {
			s.pos = i
			return s.buf[start:i], nil // a scalar at the end of the text
		}
		// The value so far moves to the buffer's start.
		if err := s.more(start); err != nil {
			return nil, err
		}
		i, start = i-start, 0
	}
}

// openChunked returns a reader of path that reads it [recordChunk] at a
// time when sys can read part of a file, else all at once.
func openChunked(sys fsys.System, path fsys.AbsPath) (io.Reader, error) {
	if _, ok := sys.(fsys.RangeReader); !ok {
		data, err := sys.ReadFile(path)
		if err != nil {
			return nil, errRecordRead{err}
		}
		return bytes.NewReader(data), nil
	}
	fi, err := sys.Stat(path)
	if err == nil && fi.IsDir() {
		err = fsys.IOError(syscall.EISDIR, "read", path)
	}
	if err != nil {
		return nil, errRecordRead{err}
	}
	return &chunkReader{sys: sys, path: path, size: fi.Size()}, nil
}

// chunkReader reads a file of a known size up to a chunk at a time,
// straight into the caller's buffer: no buffer of its own is made for each
// chunk (a rollback read its 3.5 MB record twice in fresh 256 KB chunks,
// and the pages they took cost more than the reads).
type chunkReader struct {
	sys  fsys.System
	path fsys.AbsPath
	size int64
	off  int64
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.off >= c.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), recordChunk, c.size-c.off)
	if err := fsys.ReadRangeInto(c.sys, c.path, c.off, p[:n]); err != nil {
		return 0, errRecordRead{err}
	}
	c.off += n
	return int(n), nil
}
