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
)

// recordChunk is how much of a record file is read at a time.
const recordChunk = 256 << 10

// readRecord decodes the record file at path as json.Unmarshal would, but
// without holding the file's bytes (38 MB for 100,000 files): it reads
// the file a chunk at a time and decodes its files one by one, and the
// target, root and op strings they repeat are shared, not copied per
// file. each, when not nil, is given every file with the number expected,
// and says whether to keep it.
func readRecord(sys fsys.System, path fsys.AbsPath, each func(*FileChange, int) (bool, error)) (*Record, error) {
	files := 0
	if each != nil {
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

// decodeRecord decodes a record from in: the files array element by
// element, the other fields as json.Unmarshal would.
func decodeRecord(in io.Reader, nFiles int, each func(*FileChange, int) (bool, error)) (*Record, error) {
	dec := json.NewDecoder(in)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var r Record
	var rest bytes.Buffer // the other fields, decoded together at the end
	rest.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		// encoding/json matches field names case-insensitively; a key
		// given twice takes its last value.
		if strings.EqualFold(key, "files") {
			if r.Files, err = decodeFiles(dec, nFiles, each); err != nil {
				return nil, err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(raw)
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("invalid data after the record")
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

// decodeFiles decodes the value of a record's files: null or an array.
func decodeFiles(dec *json.Decoder, n int, each func(*FileChange, int) (bool, error)) ([]FileChange, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("files is %v, not an array", tok)
	}
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
	for dec.More() {
		f = FileChange{}
		if err := dec.Decode(&f); err != nil {
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
	return files, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %v, got %v", want, tok)
	}
	return nil
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

// chunkReader reads a file of a known size a chunk at a time.
type chunkReader struct {
	sys  fsys.System
	path fsys.AbsPath
	size int64
	off  int64
	buf  []byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		if c.off >= c.size {
			return 0, io.EOF
		}
		n := min(recordChunk, c.size-c.off)
		data, err := fsys.ReadRange(c.sys, c.path, c.off, n)
		if err != nil {
			return 0, errRecordRead{err}
		}
		c.buf, c.off = data, c.off+n
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}
