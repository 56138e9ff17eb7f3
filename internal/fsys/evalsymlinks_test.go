package fsys

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// linkTree builds, through sys, a tree whose links exercise relative,
// absolute, chained and ".." targets below root.
func linkTree(t *testing.T, sys System, root AbsPath) {
	t.Helper()
	if err := sys.WriteFile(root.Join("real/dir/file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"rel":      "real/dir",
		"abs":      root.Join("real/dir/file").String(),
		"chain":    "rel",
		"up":       "real/dir/../dir/file",
		"real/out": "../rel/file",
		"dangling": "nowhere",
		"loop":     "loop",
	} {
		if err := sys.Symlink(target, root.Join(RelPath(name))); err != nil {
			t.Skipf("cannot create symlinks here: %v", err)
		}
	}
}

func TestEvalSymlinksMatchesTheOS(t *testing.T) {
	root := tempRoot(t)
	real := NewRealSystem(RealSystemOptions{})
	linkTree(t, real, root)
	mem := NewMemSystem()
	linkTree(t, mem, root)
	for _, rel := range []string{"real", "rel", "rel/file", "abs", "chain/file", "up", "real/out", "rel/../rel/file"} {
		path := AbsPath(filepath.Join(root.String(), filepath.FromSlash(rel)))
		want, err := filepath.EvalSymlinks(path.String())
		if err != nil {
			t.Fatalf("filepath.EvalSymlinks(%s): %v", rel, err)
		}
		for name, sys := range map[string]System{"real": real, "mem": mem} {
			if got, err := EvalSymlinks(sys, path); err != nil || got.String() != want {
				t.Errorf("%s: EvalSymlinks(%s) = %s, %v; want %s", name, rel, got, err, want)
			}
		}
	}
	for name, sys := range map[string]System{"real": real, "mem": mem} {
		if _, err := EvalSymlinks(sys, root.JoinName("dangling")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: dangling link: %v", name, err)
		}
		if _, err := EvalSymlinks(sys, root.JoinName("loop")); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("%s: link loop: %v", name, err)
		}
		if _, err := EvalSymlinks(sys, root.Join("real/dir/file/below")); err == nil {
			t.Errorf("%s: a path below a file resolved", name)
		}
	}
}
