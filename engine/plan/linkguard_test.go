package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// countingSystem counts the Lstats of each path.
type countingSystem struct {
	fsys.System
	mu     sync.Mutex
	lstats map[fsys.AbsPath]int
	total  atomic.Int64
}

func (c *countingSystem) Lstat(p fsys.AbsPath) (os.FileInfo, error) {
	c.mu.Lock()
	c.lstats[p]++
	c.mu.Unlock()
	c.total.Add(1)
	return c.System.Lstat(p)
}

// The guard stats each folder once however many workers ask about files
// in it at the same time, refuses a link below the root (and a file that
// is a link) on the fast path and on the path for unclean input alike,
// and tells the folders it found real to a later listing.
func TestLinkGuardStatsEachFolderOnce(t *testing.T) {
	root := fsys.AbsPath(t.TempDir())
	var files []fsys.AbsPath
	for i := range 20 {
		dir := filepath.Join(root.String(), fmt.Sprintf("s%02d", i), "ref")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 10 {
			p := filepath.Join(dir, fmt.Sprintf("f%d", j))
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, fsys.AbsPath(p))
		}
	}
	sys := &countingSystem{System: fsys.NewRealSystem(fsys.RealSystemOptions{}), lstats: map[fsys.AbsPath]int{}}
	g := NewLinkGuard(sys)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range files {
				if d, err := g.LstatData(root, f); err != nil || !d.Mode.IsRegular() {
					t.Errorf("LstatData(%s) = %+v, %v", f, d, err)
				}
			}
		}()
	}
	wg.Wait()
	for p, n := range sys.lstats {
		if n > 1 && filepath.Base(p.String())[0] != 'f' {
			t.Errorf("%s: %d lstats of a folder", p, n)
		}
	}
	if d, ok := g.Dir(files[0].Dir()); !ok || !d.IsDir() {
		t.Errorf("Dir(%s) = %+v, %v", files[0].Dir(), d, ok)
	}
	if _, ok := g.Dir(root.JoinName("nowhere")); ok {
		t.Error("Dir of a folder never asked about")
	}

	// A link below the root, then a link where a file is managed.
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "f0"), []byte("secret"), 0o644)
	os.MkdirAll(filepath.Join(root.String(), "evil"), 0o755)
	os.Symlink(victim, filepath.Join(root.String(), "evil", "ref"))
	os.Symlink(filepath.Join(victim, "f0"), filepath.Join(root.String(), "s00", "ref", "link"))
	for _, p := range []string{"evil/ref/f0", "evil/./ref/f0", "s00/../evil/ref/f0", "s00/ref/link", "s00//ref/link"} {
		path := fsys.AbsPath(root.String() + "/" + p)
		if _, err := NewLinkGuard(sys).LstatData(root, path); apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("LstatData(%s): %v, want E_IO_INVALID_PATH", p, err)
		}
		if err := NewLinkGuard(sys).Check(root, path); apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("Check(%s): %v, want E_IO_INVALID_PATH", p, err)
		}
		if _, err := NewLinkGuard(sys).Lstat(root, path); apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("Lstat(%s): %v, want E_IO_INVALID_PATH", p, err)
		}
	}
	for _, p := range []fsys.AbsPath{root, root + "/..", root.Dir(), root + "/s00/../../x"} {
		if err := g.Check(root, p); apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("Check(%s): %v, want outside the root", p, err)
		}
	}
	// Missing folders are no error, and are looked at again later.
	missing := root + "/s99/ref/f0"
	if _, err := g.LstatData(root, missing); err == nil || apperr.CodeOf(err) == apperr.IOInvalidPath {
		t.Errorf("a missing file: %v", err)
	}
	os.MkdirAll(filepath.Join(root.String(), "s99"), 0o755)
	os.Symlink(victim, filepath.Join(root.String(), "s99", "ref"))
	if err := g.Check(root, missing); apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Errorf("a link made after the folder was found missing: %v", err)
	}
}

// A read (ReadActual) asks once about a missing folder, or a missing root,
// for all the paths below it; Check, which decides writes, looks again and
// still refuses a link made there since.
func TestLinkGuardReadsRememberMissingFolders(t *testing.T) {
	dir := t.TempDir()
	root := fsys.AbsPath(filepath.Join(dir, "root"))
	if err := os.Mkdir(root.String(), 0o755); err != nil {
		t.Fatal(err)
	}
	sys := &countingSystem{System: fsys.NewRealSystem(fsys.RealSystemOptions{}), lstats: map[fsys.AbsPath]int{}}
	g := NewLinkGuard(sys)
	read := func(root fsys.AbsPath, name string) {
		t.Helper()
		if a, err := ReadActual(sys, g, nil, root, root.Join(fsys.RelPath(name)), ""); err != nil || a.Exists {
			t.Fatalf("%s: %+v, %v; want missing", name, a, err)
		}
	}
	read(root, "a/x/one")
	before := sys.total.Load()
	read(root, "a/x/two")
	read(root, "a/y/three")
	gone := fsys.AbsPath(filepath.Join(dir, "gone"))
	read(gone, "a/one")
	read(gone, "b/two")
	if n := sys.total.Load() - before; n != 0 {
		t.Errorf("%d lstats below folders already found missing, want none", n)
	}
	if err := os.MkdirAll(filepath.Join(dir, "elsewhere", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(root.String(), "a")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := g.Check(root, root.Join("a/x/one")); apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Errorf("Check through a link made after a read: %v, want E_IO_INVALID_PATH", err)
	}
}
