package fsys

import (
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestReadRange(t *testing.T) {
	root := tempRoot(t)
	real := NewRealSystem(RealSystemOptions{})
	for name, sys := range map[string]System{
		"real":      real,
		"read-only": NewReadOnlySystem(real),
		"mem":       NewMemSystem(),
		"dry-run":   NewDryRunSystem(NewMemSystem()),
	} {
		t.Run(name, func(t *testing.T) {
			dir := root.JoinName(name)
			path := dir.JoinName("pack")
			if _, ok := sys.(*ReadOnlySystem); ok {
				if err := real.WriteFile(path, []byte("hello world"), 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := sys.WriteFile(path, []byte("hello world"), 0o600); err != nil {
				t.Fatal(err)
			}
			open, err := OpenRange(sys, path)
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()
			for how, read := range map[string]func(off, n int64) ([]byte, error){
				"ReadRange": func(off, n int64) ([]byte, error) { return ReadRange(sys, path, off, n) },
				"OpenRange": open.ReadRange,
				"ReadRangeInto": func(off, n int64) ([]byte, error) {
					buf := make([]byte, max(n, 0)+1)[:max(n, 0)] // room past the range, left alone
					if err := ReadRangeInto(sys, path, off, buf); err != nil {
						return nil, err
					}
					if buf[:len(buf)+1][len(buf)] != 0 {
						t.Errorf("ReadRangeInto(%d, %d) wrote past its buffer", off, n)
					}
					return buf, nil
				},
			} {
				for _, c := range []struct {
					off, n int64
					want   string
				}{{0, 5, "hello"}, {6, 5, "world"}, {11, 0, ""}, {3, 0, ""}} {
					got, err := read(c.off, c.n)
					if err != nil || string(got) != c.want {
						t.Errorf("%s(%d, %d) = %q, %v; want %q", how, c.off, c.n, got, err, c.want)
					}
				}
				for _, c := range [][2]int64{{6, 6}, {11, 1}, {20, 1}} {
					_, err := read(c[0], c[1])
					if !errors.Is(err, io.ErrUnexpectedEOF) || apperr.CodeOf(err) != apperr.IOFailed {
						t.Errorf("%s(%d, %d) past the end: %v; want E_IO_FAILED, unexpected EOF", how, c[0], c[1], err)
					}
				}
				if _, err := read(-1, 1); apperr.CodeOf(err) != apperr.IOInvalidPath {
					t.Errorf("%s at a negative offset: %v", how, err)
				}
			}
			if _, err := ReadRange(sys, path, -1, 1); apperr.CodeOf(err) != apperr.IOInvalidPath {
				t.Errorf("negative offset: %v", err)
			}
			if _, err := ReadRange(sys, dir.JoinName("absent"), 0, 1); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("missing file: %v", err)
			}
			if _, err := ReadRange(sys, dir, 0, 0); err == nil {
				t.Errorf("reading a folder: no error")
			}
		})
	}
}

// wholeReads is a real System counting whole-file reads.
type wholeReads struct {
	*RealSystem
	n int
}

func (w *wholeReads) ReadFile(path AbsPath) ([]byte, error) {
	w.n++
	return w.RealSystem.ReadFile(path)
}

// A dry run reads a range of a file it has not written from its base, a
// range at a time: a dry-run rollback of 9,000 updates read their 20 MB
// pack whole for each of them, and did not end.
func TestDryRunReadsRangesFromItsBase(t *testing.T) {
	root := tempRoot(t)
	base := &wholeReads{RealSystem: NewRealSystem(RealSystemOptions{})}
	pack, written := root.JoinName("pack"), root.JoinName("written")
	if err := base.WriteFile(pack, []byte("hello world"), 0o600); err != nil {
		t.Fatal(err)
	}
	dry := NewDryRunSystem(base)
	if err := dry.WriteFile(written, []byte("dry bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path AbsPath
		want string
	}{{pack, "world"}, {written, "bytes"}} {
		off := int64(len(c.want) + 1)
		if c.path == written {
			off = 4
		}
		if got, err := ReadRange(dry, c.path, off, int64(len(c.want))); err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.path.Base(), got, err, c.want)
		}
	}
	if _, err := ReadRange(dry, pack, 6, 6); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("past the end: %v", err)
	}
	if base.n != 0 {
		t.Errorf("the base was read whole %d times", base.n)
	}
}
