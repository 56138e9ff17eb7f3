package fsys

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestStreams: a stream is readable at its path after each Sync, an
// atomic streamed write replaces the file whole or not at all, on the disk
// and on a System that cannot stream.
func TestStreams(t *testing.T) {
	dir := AbsPath(t.TempDir())
	for name, sys := range map[string]System{"real": NewRealSystem(RealSystemOptions{Fsync: true}), "mem": NewMemSystem()} {
		t.Run(name, func(t *testing.T) {
			p := dir.JoinName(name).JoinName("pack")
			s, err := CreateStream(sys, p, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(s, "one"); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if got, err := sys.ReadFile(p); err != nil || string(got) != "one" {
				t.Fatalf("after Sync: %q, %v", got, err)
			}
			if _, err := io.WriteString(s, "two"); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := sys.ReadFile(p); err != nil || string(got) != "onetwo" {
				t.Fatalf("after Close: %q, %v", got, err)
			}
			if fi, err := sys.Lstat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v", fi.Mode(), err)
			}

			q := dir.JoinName(name).JoinName("index")
			if err := WriteStream(sys, q, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "v1"); return err }); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("boom")
			if err := WriteStream(sys, q, 0o600, func(w io.Writer) error { _, _ = io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
				t.Fatalf("a failed write gave %v", err)
			}
			if got, err := sys.ReadFile(q); err != nil || string(got) != "v1" {
				t.Fatalf("a failed write left %q, %v", got, err)
			}
			entries, _ := sys.ReadDir(q.Dir())
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), TempPrefix) {
					t.Errorf("temp file %s left behind", e.Name())
				}
			}
		})
	}
}
