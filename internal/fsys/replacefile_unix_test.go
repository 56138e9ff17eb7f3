//go:build unix

package fsys

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceFileNeverWritesThroughWhatIsThere: the one rename(2) that
// places a write refuses a folder at the path (os.Rename looked first to
// refuse it) and replaces a link at the path with the file, leaving what
// the link pointed at untouched.
func TestReplaceFileNeverWritesThroughWhatIsThere(t *testing.T) {
	dir := t.TempDir()
	tmp := func() string {
		p := filepath.Join(dir, TempPrefix+"new")
		if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	folder := filepath.Join(dir, "folder")
	if err := os.MkdirAll(filepath.Join(folder, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(tmp(), folder); err == nil {
		t.Fatal("a file replaced a folder")
	}
	if fi, err := os.Stat(filepath.Join(folder, "inside")); err != nil || !fi.IsDir() {
		t.Fatalf("the folder changed: %v", err)
	}

	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(tmp(), link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the link was not replaced by the file: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "theirs" {
		t.Fatalf("the link's target became %q", got)
	}
}
