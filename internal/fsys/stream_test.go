package fsys

import (
	"bytes"
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

// TestBufferStreamKeepsEveryByte: a stream of a System in memory holds
// what is written in chunks across many writes of odd sizes; each Sync
// makes exactly what was written so far readable, an empty stream's Sync
// makes an empty file, and a dry run kept bytes handed over to it.
func TestBufferStreamKeepsEveryByte(t *testing.T) {
	root := tempRoot(t)
	for name, sys := range map[string]System{"mem": NewMemSystem(), "dry-run": NewDryRunSystem(NewMemSystem())} {
		t.Run(name, func(t *testing.T) {
			empty, err := CreateStream(sys, root.JoinName("empty"), 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if err := empty.Close(); err != nil {
				t.Fatal(err)
			}
			if data, err := sys.ReadFile(root.JoinName("empty")); err != nil || len(data) != 0 {
				t.Fatalf("an empty stream: %q, %v", data, err)
			}
			path := root.JoinName("pack")
			s, err := CreateStream(sys, path, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			var want, synced []byte
			piece := make([]byte, 0, 70000)
			for i := 0; len(want) < 3<<20; i++ {
				piece = piece[:0]
				for j := 0; j < (i*7919)%70000+1; j++ {
					piece = append(piece, byte(i+j))
				}
				if _, err := s.Write(piece); err != nil {
					t.Fatal(err)
				}
				want = append(want, piece...)
				if i == 20 {
					if err := s.Sync(); err != nil {
						t.Fatal(err)
					}
					got, err := sys.ReadFile(path)
					if err != nil || !bytes.Equal(got, want) {
						t.Fatalf("after a Sync: %d bytes, %v; want the %d written", len(got), err, len(want))
					}
					// The stream goes on from the bytes it synced: later
					// writes must not reach what was read then.
					synced = got
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := sys.ReadFile(path); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("after Close: %d bytes, %v; want the %d written", len(got), err, len(want))
			}
			if !bytes.Equal(synced, want[:len(synced)]) {
				t.Fatal("the bytes read after the first Sync changed as the stream went on")
			}
		})
	}
}
