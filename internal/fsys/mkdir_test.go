package fsys

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestMakeMissingDirEndsAsMkdirAll: for every state a folder's path can
// be in, makeMissingDir ends where os.MkdirAll ends, the same error or
// none and the same tree, though it makes the folder before it looks.
func TestMakeMissingDirEndsAsMkdirAll(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		dir   string
	}{
		{"missing with its parents", func(*testing.T, string) {}, "a/b/c"},
		{"missing, parent there", func(t *testing.T, root string) { mkTestDir(t, root, "a/b") }, "a/b/c"},
		{"there already", func(t *testing.T, root string) { mkTestDir(t, root, "a/b/c") }, "a/b/c"},
		{"a file in its place", func(t *testing.T, root string) { mkTestDir(t, root, "a/b"); mkTestFile(t, root, "a/b/c") }, "a/b/c"},
		{"a file in a parent's place", func(t *testing.T, root string) { mkTestFile(t, root, "a") }, "a/b/c"},
		{"a link to a folder in its place", func(t *testing.T, root string) {
			mkTestDir(t, root, "real")
			mkTestDir(t, root, "a/b")
			mkTestLink(t, filepath.Join(root, "real"), filepath.Join(root, "a/b/c"))
		}, "a/b/c"},
		{"a link to a folder as a parent", func(t *testing.T, root string) {
			mkTestDir(t, root, "real")
			mkTestLink(t, filepath.Join(root, "real"), filepath.Join(root, "a"))
		}, "a/b/c"},
		{"a dangling link in its place", func(t *testing.T, root string) {
			mkTestDir(t, root, "a/b")
			mkTestLink(t, filepath.Join(root, "nowhere"), filepath.Join(root, "a/b/c"))
		}, "a/b/c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, got := t.TempDir(), t.TempDir()
			c.setup(t, want)
			c.setup(t, got)
			wantErr := os.MkdirAll(filepath.Join(want, c.dir), 0o755)
			gotErr := makeMissingDir(filepath.Join(got, c.dir), 0o755)
			if (wantErr == nil) != (gotErr == nil) || !errors.Is(gotErr, errnoOf(wantErr)) {
				t.Fatalf("makeMissingDir: %v; os.MkdirAll: %v", gotErr, wantErr)
			}
			if w, g := treeOf(t, want), treeOf(t, got); w != g {
				t.Fatalf("tree after makeMissingDir:\n%s\nafter os.MkdirAll:\n%s", g, w)
			}
		})
	}
}

// TestMakeMissingDirRaces: workers making the same new folders at once
// (a deploy writes a folder's files in parallel) all succeed.
func TestMakeMissingDirRaces(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = makeMissingDir(filepath.Join(root, "a/b/c/d"), 0o755)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(root, "a/b/c/d")); err != nil || !fi.IsDir() {
		t.Fatalf("a/b/c/d: %v, %v", fi, err)
	}
}

func mkTestDir(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func mkTestFile(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, rel), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkTestLink(t *testing.T, target, at string) {
	t.Helper()
	if err := os.Symlink(target, at); err != nil {
		t.Skip("no symlinks here:", err)
	}
}

// errnoOf is the system error inside err (nil for nil), which both
// functions' errors must share; their paths may differ.
func errnoOf(err error) error {
	for err != nil {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
	return nil
}

// treeOf lists every path below root with its kind, in walk order.
func treeOf(t *testing.T, root string) string {
	t.Helper()
	out := ""
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out += rel + " " + d.Type().String() + "\n"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
