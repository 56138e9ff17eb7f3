package fsys

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// seed writes a small tree that the decorator tests change.
func seed(t *testing.T) (System, AbsPath) {
	t.Helper()
	root, real := tempRoot(t), NewRealSystem(RealSystemOptions{})
	for rel, data := range map[RelPath]string{"keep.md": "keep", "old.md": "old", "dir/a.md": "a", "dir/b.md": "b"} {
		if err := real.WriteFile(root.Join(rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return real, root
}

func TestDryRunSystemRecordsEverythingAndWritesNothing(t *testing.T) {
	real, root := seed(t)
	before := dumpTree(t, real, root)
	sys := NewDryRunSystem(real)
	p := func(rel RelPath) AbsPath { return root.Join(rel) }
	for _, err := range []error{
		sys.WriteFile(p("new/deep/n.md"), []byte("new"), 0o600),
		sys.WriteFile(p("old.md"), []byte("changed"), 0o644),
		sys.Remove(p("keep.md")),
		sys.MkdirAll(p("empty/sub"), 0o755),
		sys.Rename(p("dir"), p("moved")),
		sys.Symlink("old.md", p("link")),
		sys.RemoveAll(p("new/deep")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if after := dumpTree(t, real, root); after != before {
		t.Errorf("dry run changed the disk\n--- before\n%s--- after\n%s", before, after)
	}
	want := []Op{
		{Kind: OpWrite, Path: p("new/deep/n.md"), Data: []byte("new"), Perm: 0o600},
		{Kind: OpWrite, Path: p("old.md"), Data: []byte("changed"), Perm: 0o644},
		{Kind: OpRemove, Path: p("keep.md")},
		{Kind: OpMkdirAll, Path: p("empty/sub"), Perm: 0o755},
		{Kind: OpRename, Path: p("moved"), OldPath: p("dir")},
		{Kind: OpSymlink, Path: p("link"), LinkTarget: "old.md"},
		{Kind: OpRemoveAll, Path: p("new/deep")},
	}
	if got := sys.Ops(); !reflect.DeepEqual(got, want) {
		t.Errorf("Ops() =\n%+v\nwant\n%+v", got, want)
	}

	// Reads see the recorded changes, so a dry run walks as an apply would.
	wantTree := strings.Join([]string{
		"dir  empty", "dir  empty/sub", "link link -> old.md", "dir  moved",
		`file moved/a.md -rw-r--r-- "a"`, `file moved/b.md -rw-r--r-- "b"`, "dir  new",
		`file old.md -rw-r--r-- "changed"`, "",
	}, "\n")
	if got := dumpTree(t, sys, root); got != wantTree {
		t.Errorf("dry-run view:\n%s\nwant\n%s", got, wantTree)
	}
	for _, gone := range []RelPath{"keep.md", "dir/a.md", "new/deep/n.md", "new/deep"} {
		if _, err := sys.ReadFile(p(gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%s) = %v, want fs.ErrNotExist", gone, err)
		}
		if _, err := sys.Lstat(p(gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lstat(%s) = %v, want fs.ErrNotExist", gone, err)
		}
	}
	if data, err := sys.ReadFile(p("link")); err != nil || string(data) != "changed" {
		t.Errorf("ReadFile(link) = %q, %v; want the recorded write through the recorded link", data, err)
	}
	if fi, err := sys.Stat(p("empty/sub")); err != nil || !fi.IsDir() {
		t.Errorf("Stat(empty/sub) = %v, %v", fi, err)
	}
}

func TestDryRunSystemViewAfterReplacingPaths(t *testing.T) {
	root := tempRoot(t)
	sys := NewDryRunSystem(NewMemSystem())
	p := func(rel RelPath) AbsPath { return root.Join(rel) }
	steps := []error{
		sys.WriteFile(p("a/b/x"), []byte("x"), 0o644),
		sys.RemoveAll(p("a/b")),
		sys.MkdirAll(p("a/b"), 0o755), // a new, empty folder: x must not come back
		sys.WriteFile(p("f"), []byte("1"), 0o644),
		sys.Remove(p("f")),
		sys.WriteFile(p("f"), []byte("2"), 0o644),
		sys.Rename(p("f"), p("a/b/g")),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	entries, err := sys.ReadDir(p("a/b"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "g" {
		t.Errorf("ReadDir(a/b) = %v, %v; want only g", entries, err)
	}
	if data, err := sys.ReadFile(p("a/b/g")); err != nil || string(data) != "2" {
		t.Errorf("ReadFile(a/b/g) = %q, %v", data, err)
	}
	if _, err := sys.Lstat(p("f")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat(f) after rename = %v", err)
	}
}

// Remove of a folder that still holds something fails, as on a disk, and
// leaves the folder and its contents visible.
func TestDryRunRemoveRefusesNonEmptyFolder(t *testing.T) {
	base := NewMemSystem()
	s := NewDryRunSystem(base)
	dir := AbsPath(filepath.Join(string(filepath.Separator), "x", "d"))
	if err := s.WriteFile(dir.JoinName("f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(dir); err == nil {
		t.Fatal("Remove of a non-empty folder succeeded")
	}
	if _, err := s.Lstat(dir.JoinName("f")); err != nil {
		t.Fatalf("the file below the folder is gone: %v", err)
	}
	if err := s.Remove(dir.JoinName("f")); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(dir); err != nil {
		t.Fatalf("Remove of the emptied folder: %v", err)
	}
}

// A dry run refuses to write over a link or a folder, as the disk does:
// a dry run of a deploy fails where the deploy would.
func TestDryRunWriteRefusesLinksAndFolders(t *testing.T) {
	base := NewMemSystem()
	root := AbsPath(filepath.Join(string(filepath.Separator), "x"))
	for _, err := range []error{
		base.WriteFile(root.JoinName("target"), []byte("keep"), 0o644),
		base.Symlink("target", root.JoinName("link")),
		base.MkdirAll(root.JoinName("dir"), 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := NewDryRunSystem(base)
	if err := s.Symlink("target", root.JoinName("newlink")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "dir", "newlink"} {
		err := s.WriteFile(root.JoinName(name), []byte("x"), 0o644)
		if apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("WriteFile(%s) = %v, want E_IO_INVALID_PATH", name, err)
		}
	}
	if got := len(s.Ops()); got != 1 {
		t.Errorf("%d ops recorded, want only the symlink: %+v", got, s.Ops())
	}
	if data, _ := s.ReadFile(root.JoinName("target")); string(data) != "keep" {
		t.Errorf("target = %q", data)
	}
}

// TestDryRunListingsFollowRandomOps: after each of many random writes,
// removals, folder makes and renames, a dry run lists each folder as a
// scan of everything it recorded finds it (the index of each folder's
// recorded entries stays in step with the record).
func TestDryRunListingsFollowRandomOps(t *testing.T) {
	root := tempRoot(t)
	names := []RelPath{"a", "b", "a/x", "a/y", "b/x", "a/x/f", "a/y/g", "b/x/h", "c"}
	base := NewMemSystem()
	for _, n := range []RelPath{"a/x/f", "b/x/h", "c"} {
		if err := base.WriteFile(root.Join(n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dry := NewDryRunSystem(base)
	// scanned is what the listing of dir was before the index: base's
	// entries the record did not touch, and every recorded entry of dir.
	scanned := func(dir AbsPath) string {
		entries, err := dry.ReadDir(dir)
		if err != nil {
			return "error"
		}
		want := map[string]bool{}
		if n, ok := dry.lookup(dir); !ok {
			base, _ := base.ReadDir(dir)
			for _, e := range base {
				want[e.Name()] = true
			}
		} else if n == nil {
			return "error"
		}
		for q, n := range dry.over {
			if q.Dir() == dir && q != dir {
				want[q.Base()] = n != nil
			}
		}
		var got, exp []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		for name, there := range want {
			if there {
				exp = append(exp, name)
			}
		}
		slices.Sort(exp)
		if g, w := strings.Join(got, ","), strings.Join(exp, ","); g != w {
			return g + " (a scan finds " + w + ")"
		}
		return ""
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 600 {
		p, q := root.Join(names[rng.IntN(len(names))]), root.Join(names[rng.IntN(len(names))])
		switch rng.IntN(5) {
		case 0:
			_ = dry.WriteFile(p, []byte("w"), 0o644)
		case 1:
			_ = dry.Remove(p)
		case 2:
			_ = dry.RemoveAll(p)
		case 3:
			_ = dry.MkdirAll(p, 0o755)
		default:
			if !p.Contains(q) && !q.Contains(p) {
				_ = dry.Rename(p, q)
			}
		}
		for _, d := range append([]RelPath{"."}, names...) {
			if diff := scanned(root.Join(d)); diff != "" && diff != "error" {
				t.Fatalf("step %d: %s lists %s", step, d, diff)
			}
		}
	}
}
