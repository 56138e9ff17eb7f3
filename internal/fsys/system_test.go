package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// tempRoot returns a fresh folder with its symlinks resolved (macOS puts
// t.TempDir under the /var link), so CheckBeneath sees no link above it.
func tempRoot(t *testing.T) AbsPath {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewAbsPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// symlinkOrSkip creates a real symlink, skipping the test where the OS
// refuses (Windows without developer mode).
func symlinkOrSkip(t *testing.T, oldname string, newname AbsPath) {
	t.Helper()
	if err := os.Symlink(oldname, newname.String()); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
}

// dumpTree describes everything below root as seen through sys, one line
// per entry, for comparing trees before and after.
func dumpTree(t *testing.T, sys System, root AbsPath) string {
	t.Helper()
	var b strings.Builder
	var walk func(dir AbsPath)
	walk = func(dir AbsPath) {
		entries, err := sys.ReadDir(dir)
		if err != nil {
			t.Fatalf("ReadDir(%s): %v", dir, err)
		}
		for _, e := range entries {
			p := dir.JoinName(e.Name())
			rel, _ := root.Rel(p)
			fi, err := sys.Lstat(p)
			if err != nil {
				t.Fatalf("Lstat(%s): %v", p, err)
			}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := sys.Readlink(p)
				if err != nil {
					t.Fatalf("Readlink(%s): %v", p, err)
				}
				fmt.Fprintf(&b, "link %s -> %s\n", rel, target)
			case fi.IsDir():
				fmt.Fprintf(&b, "dir  %s\n", rel)
				walk(p)
			default:
				data, err := sys.ReadFile(p)
				if err != nil {
					t.Fatalf("ReadFile(%s): %v", p, err)
				}
				fmt.Fprintf(&b, "file %s %v %q\n", rel, fi.Mode().Perm(), data)
			}
		}
	}
	walk(root)
	return b.String()
}

// describeErr summarises err for comparing two Systems: code, whether it
// matches fs.ErrNotExist, and the message with root replaced.
func describeErr(err error, root AbsPath) string {
	if err == nil {
		return "ok"
	}
	msg := strings.ReplaceAll(apperr.As(err).Message, root.String(), "$ROOT")
	return fmt.Sprintf("%s notexist=%v %q", apperr.CodeOf(err), errors.Is(err, fs.ErrNotExist), msg)
}
