//go:build unix

package snapshots

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// opens counts the packs a real System opens for range reads, and the
// range reads made without one.
type opens struct {
	*fsys.RealSystem
	opened, each atomic.Int64
}

func (o *opens) OpenRange(path fsys.AbsPath) (fsys.RangeFile, error) {
	o.opened.Add(1)
	return o.RealSystem.OpenRange(path)
}

func (o *opens) ReadRange(path fsys.AbsPath, off, n int64) ([]byte, error) {
	o.each.Add(1)
	return o.RealSystem.ReadRange(path, off, n)
}

// TestContentsOpensEachPackOnce: the saved bytes of many files of one
// snapshot are read through one open of its pack, held until Close; a
// read after Close opens it again.
func TestContentsOpensEachPackOnce(t *testing.T) {
	sys := &opens{RealSystem: fsys.NewRealSystem(fsys.RealSystemOptions{})}
	s := NewStoreOn(sys, fsys.AbsPath(t.TempDir()))
	blobs := [][]byte{[]byte("one\n"), []byte("two\n"), []byte("three\n")}
	if _, err := s.SavePack("R1", blobs); err != nil {
		t.Fatal(err)
	}
	cs := s.Contents(nil)
	read := func(b []byte) {
		t.Helper()
		got, err := cs.Read("codex", "/p", "R1", &Content{SHA256: checksum.SHA256Hex(b), Size: int64(len(b))}, nil)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("read %q: %q, %v", b, got, err)
		}
	}
	for _, b := range blobs {
		read(b)
	}
	if o, e := sys.opened.Load(), sys.each.Load(); o != 1 || e != 0 {
		t.Fatalf("3 reads from one pack: %d opens, %d reads of their own; want 1 and 0", o, e)
	}
	cs.Close()
	read(blobs[0])
	if o := sys.opened.Load(); o != 2 {
		t.Fatalf("a read after Close: %d opens in all, want 2", o)
	}
	cs.Close()
}
