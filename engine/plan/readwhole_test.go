package plan

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// lstatCounter is a real System counting Lstats of one path; its
// ReadRegular (one open) is the real one.
type lstatCounter struct {
	fsys.System
	path fsys.AbsPath
	n    atomic.Int64
}

func (c *lstatCounter) Lstat(p fsys.AbsPath) (os.FileInfo, error) {
	if p == c.path {
		c.n.Add(1)
	}
	return c.System.Lstat(p)
}

func (c *lstatCounter) ReadRegular(p fsys.AbsPath, buf []byte) ([]byte, os.FileInfo, error) {
	return fsys.ReadRegular(c.System, p, buf)
}

// ReadSeen (a rollback's read of each file it removes) reads a regular
// file with one open and no Lstat of it, and still refuses a link at the
// path or above it and a folder, and finds a missing file missing.
func TestReadSeenOpensOnceAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	root := fsys.AbsPath(filepath.Join(dir, "root"))
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(root.String(), "a", "sub"), filepath.Join(outside, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root.String(), "a", "f"), "bytes\n")
	write(filepath.Join(root.String(), "c"), "a file where a folder would be\n")
	write(filepath.Join(outside, "x", "f"), "not ours\n")
	if err := os.Symlink(filepath.Join(outside, "x", "f"), filepath.Join(root.String(), "a", "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(root.String(), "b")); err != nil {
		t.Fatal(err)
	}
	file := root.Join("a/f")
	sys := &lstatCounter{System: fsys.NewRealSystem(fsys.RealSystemOptions{}), path: file}
	g := NewLinkGuard(sys)
	a, _, err := ReadSeen(sys, g, root, file)
	if err != nil || !a.Exists || string(a.Data) != "bytes\n" || a.SHA256 == "" || a.Mode != 0o644 {
		t.Fatalf("a regular file: %+v, %v", a, err)
	}
	if n := sys.n.Load(); n != 0 {
		t.Errorf("the file was lstat'ed %d times besides its open", n)
	}
	for name, want := range map[string]apperr.Code{"a/link": apperr.IOInvalidPath, "b/f": apperr.IOInvalidPath, "a/sub": apperr.IOInvalidPath} {
		if a, _, err := ReadSeen(sys, g, root, root.Join(fsys.RelPath(name))); apperr.CodeOf(err) != want || a.Exists {
			t.Errorf("%s: %+v, %v; want %s", name, a, err, want)
		}
	}
	for _, name := range []string{"a/none", "c/f", "gone/f"} {
		if a, _, err := ReadSeen(sys, g, root, root.Join(fsys.RelPath(name))); err != nil || a.Exists {
			t.Errorf("%s: %+v, %v; want missing", name, a, err)
		}
	}
}
