package fsys

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestReadOnlySystemFailsEveryMutation(t *testing.T) {
	real, root := seed(t)
	before := dumpTree(t, real, root)
	sys := NewReadOnlySystem(real)
	p := func(rel RelPath) AbsPath { return root.Join(rel) }
	for op, err := range map[OpKind]error{
		OpWrite:     sys.WriteFile(p("old.md"), []byte("x"), 0o644),
		OpRemove:    sys.Remove(p("keep.md")),
		OpRemoveAll: sys.RemoveAll(p("dir")),
		OpMkdirAll:  sys.MkdirAll(p("new"), 0o755),
		OpRename:    sys.Rename(p("old.md"), p("renamed.md")),
		OpSymlink:   sys.Symlink("old.md", p("link")),
	} {
		ae := apperr.As(err)
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
