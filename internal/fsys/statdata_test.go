package fsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// LstatData and StatDataFollow give what StatDataOf makes of os.Lstat and
// os.Stat, for a file, a folder and a link, through a read-only System
// too; a missing path is fs.ErrNotExist.
func TestStatDataMatchesFileInfo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("data"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	real := NewRealSystem(RealSystemOptions{})
	for _, sys := range []System{real, NewReadOnlySystem(real), NewTrackingSystem(real)} { // the last through Lstat
		for _, name := range []string{"f", "l", "."} {
			p := AbsPath(filepath.Join(dir, name))
			fi, _ := os.Lstat(string(p))
			if got, err := LstatData(sys, p); err != nil || got != StatDataOf(fi) {
				t.Errorf("LstatData(%s) = %+v, %v; want %+v", name, got, err, StatDataOf(fi))
			}
			fi, _ = os.Stat(string(p))
			if got, err := StatDataFollow(sys, p); err != nil || got != StatDataOf(fi) {
				t.Errorf("StatDataFollow(%s) = %+v, %v; want %+v", name, got, err, StatDataOf(fi))
			}
		}
		if _, err := LstatData(sys, AbsPath(filepath.Join(dir, "missing"))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing path: %v", err)
		}
	}
	// A path too long for the stack buffer, and one no stat accepts.
	long := dir
	for len(long) < 700 {
		long = filepath.Join(long, "a-rather-long-folder-name-to-pass-the-buffer")
	}
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(long)
	if got, err := LstatData(real, AbsPath(long)); err != nil || got != StatDataOf(fi) {
		t.Errorf("a %d-byte path: %+v, %v", len(long), got, err)
	}
	if _, err := LstatData(real, AbsPath(file+"\x00x")); err == nil {
		t.Error("a path holding a 0 byte was stat'ed")
	}
	if d, _ := LstatData(real, AbsPath(filepath.Join(dir, "l"))); !d.IsLink() || d.IsDir() {
		t.Errorf("a link's data: %+v", d)
	}
}
