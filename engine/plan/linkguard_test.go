package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// countingSystem counts the Lstat calls that reach the disk.
type countingSystem struct {
	fsys.System
	lstats int
}

func (c *countingSystem) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	c.lstats++
	return c.System.Lstat(p)
}

// TestLinkGuardRemembersMissingFolders checks that Lstat asks once about a
// missing folder for all the paths below it, and that Check, which decides
// writes, looks again and still refuses a link made there since.
func TestLinkGuardRemembersMissingFolders(t *testing.T) {
	dir := t.TempDir()
	root := fsys.AbsPath(filepath.Join(dir, "root"))
	if err := os.Mkdir(root.String(), 0o755); err != nil {
		t.Fatal(err)
	}
	sys := &countingSystem{System: fsys.NewRealSystem(fsys.RealSystemOptions{})}
	g := NewLinkGuard(sys)
	for _, name := range []string{"a/x/one", "a/x/two", "a/y/three"} {
		if fi, err := g.Lstat(root, root.Join(fsys.RelPath(name))); fi != nil || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: %v, %v; want missing", name, fi, err)
		}
	}
	if sys.lstats != 1 {
		t.Errorf("%d lstats for three paths below one missing folder, want 1", sys.lstats)
	}
	gone := fsys.AbsPath(filepath.Join(dir, "gone"))
	for _, name := range []string{"a/one", "b/two"} {
		if fi, err := g.Lstat(gone, gone.Join(fsys.RelPath(name))); fi != nil || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s below a missing root: %v, %v; want missing", name, fi, err)
		}
	}
	if sys.lstats != 1 {
		t.Errorf("%d lstats below a missing root, want none", sys.lstats-1)
	}
	if err := os.MkdirAll(filepath.Join(dir, "elsewhere", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(root.String(), "a")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := g.Check(root, root.Join("a/x/one")); apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Errorf("Check through a link made after a plan: %v, want E_IO_INVALID_PATH", err)
	}
	if _, err := NewLinkGuard(sys).Lstat(root, root.Join("a/x/one")); apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Errorf("a new guard's Lstat through the link: %v, want E_IO_INVALID_PATH", err)
	}
}

// TestLinkGuardLstatsAnExistingFileOnce checks that the file itself is
// described by the walk's own Lstat, and a missing file costs one Lstat.
func TestLinkGuardLstatsAnExistingFileOnce(t *testing.T) {
	root := fsys.AbsPath(t.TempDir())
	if err := os.WriteFile(root.Join("f").String(), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sys := &countingSystem{System: fsys.NewRealSystem(fsys.RealSystemOptions{})}
	g := NewLinkGuard(sys)
	if fi, err := g.Lstat(root, root.Join("f")); err != nil || fi.Size() != 1 {
		t.Fatal(fi, err)
	}
	if _, err := g.Lstat(root, root.Join("g")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if sys.lstats != 2 {
		t.Errorf("%d lstats, want 2", sys.lstats)
	}
}
