package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// dirFSTree builds the same small tree, with a symlink, in sys below root.
func dirFSTree(t *testing.T, sys System, root AbsPath) {
	t.Helper()
	for rel, data := range map[RelPath]string{"a.md": "a", "skills/s/SKILL.md": "skill", "skills/s/run.sh": "#!/bin/sh\n"} {
		if err := sys.WriteFile(root.Join(rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sys.MkdirAll(root.JoinName("empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sys.Symlink("s", root.Join("skills/link")); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
}

// walk describes fsys as fs.WalkDir, fs.Lstat and fs.ReadLink see it.
func walk(t *testing.T, fsys fs.FS) string {
	t.Helper()
	var b strings.Builder
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := fs.Lstat(fsys, p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			fmt.Fprintf(&b, "link %s -> %s %v\n", p, target, err)
		case d.IsDir():
			fmt.Fprintf(&b, "dir  %s\n", p)
		default:
			data, err := fs.ReadFile(fsys, p)
			fmt.Fprintf(&b, "file %s %q %v\n", p, data, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDirFSAnswersAsOSDirFS(t *testing.T) {
	root := tempRoot(t)
	real := NewRealSystem(RealSystemOptions{})
	dirFSTree(t, real, root)
	want := walk(t, os.DirFS(root.String()))
	mem := NewMemSystem()
	dirFSTree(t, mem, root)
	for name, sys := range map[string]System{"real": real, "mem": mem, "dry run": NewDryRunSystem(real)} {
		d := NewDirFS(sys, root)
		if got := walk(t, d); got != want {
			t.Errorf("%s: DirFS walks\n%s\nos.DirFS walks\n%s", name, got, want)
		}
		if err := fstest.TestFS(d, "a.md", "skills/s/SKILL.md", "skills/s/run.sh", "empty"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := d.Open("../x"); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("%s: Open(../x) = %v, want fs.ErrInvalid", name, err)
		}
		if _, err := fs.ReadFile(d, "missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: ReadFile(missing) = %v, want fs.ErrNotExist", name, err)
		}
	}
}
