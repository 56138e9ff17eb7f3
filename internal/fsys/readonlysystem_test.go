package fsys

import (
	"io"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestReadOnlySystemFailsEveryMutation(t *testing.T) {
	real, root := seed(t)
	before := dumpTree(t, real, root)
	sys := NewReadOnlySystem(real)
	p := func(rel RelPath) AbsPath { return root.Join(rel) }
	_, streamErr := CreateStream(sys, p("new.md"), 0o644)
	for op, err := range map[OpKind]error{
		OpWrite:     sys.WriteFile(p("old.md"), []byte("x"), 0o644),
		"stream":    WriteStream(sys, p("old.md"), 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }),
		"create":    streamErr,
		OpRemove:    sys.Remove(p("keep.md")),
		OpRemoveAll: sys.RemoveAll(p("dir")),
		OpMkdirAll:  sys.MkdirAll(p("new"), 0o755),
		OpRename:    sys.Rename(p("old.md"), p("renamed.md")),
		OpSymlink:   sys.Symlink("old.md", p("link")),
	} {
		ae := apperr.As(err)
		if op == "stream" || op == "create" {
			op = OpWrite // a streamed write is a write
		}
		if err == nil || ae.Code != apperr.WriteDisabled || !strings.Contains(ae.Message, string(op)+" "+root.String()) ||
			ae.Details["op"] != string(op) {
			t.Errorf("%s: err = %v, want E_WRITE_DISABLED naming the operation and path", op, err)
		}
	}
	if after := dumpTree(t, sys, root); after != before {
		t.Errorf("read-only system changed the disk or reads differ\n--- before\n%s--- after\n%s", before, after)
	}
	if data, err := sys.ReadFile(p("old.md")); err != nil || string(data) != "old" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
}

// Below an allowed path (a cache), a streamed write goes through to the
// base System.
func TestReadOnlySystemStreamsWhereAllowed(t *testing.T) {
	real, root := seed(t)
	cache := root.JoinName("cache")
	sys := NewReadOnlySystem(real, cache)
	if _, ok := System(sys).(Streamer); !ok {
		t.Fatal("a ReadOnlySystem does not stream")
	}
	p := cache.JoinName("entry.bin")
	if err := WriteStream(sys, p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "cached"); return err }); err != nil {
		t.Fatal(err)
	}
	if data, err := real.ReadFile(p); err != nil || string(data) != "cached" {
		t.Fatalf("streamed cache file = %q, %v", data, err)
	}
}
