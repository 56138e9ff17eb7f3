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
			for _, c := range []struct {
				off, n int64
				want   string
			}{{0, 5, "hello"}, {6, 5, "world"}, {11, 0, ""}, {3, 0, ""}} {
				got, err := ReadRange(sys, path, c.off, c.n)
				if err != nil || string(got) != c.want {
					t.Errorf("ReadRange(%d, %d) = %q, %v; want %q", c.off, c.n, got, err, c.want)
				}
			}
			for _, c := range [][2]int64{{6, 6}, {11, 1}, {20, 1}} {
				_, err := ReadRange(sys, path, c[0], c[1])
				if !errors.Is(err, io.ErrUnexpectedEOF) || apperr.CodeOf(err) != apperr.IOFailed {
					t.Errorf("ReadRange(%d, %d) past the end: %v; want E_IO_FAILED, unexpected EOF", c[0], c[1], err)
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
