package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFingerprintChecksAPathOnce checks that a file both read and lstat'ed
// is stat'ed once, and that the one check still sees it turn into a link.
func TestFingerprintChecksAPathOnce(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	sys := NewRealSystem(RealSystemOptions{})
	tr := NewTrackingSystem(sys)
	if _, err := tr.Lstat(AbsPath(f)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ReadFile(AbsPath(f)); err != nil {
		t.Fatal(err)
	}
	fp, ok := tr.Fingerprint(sys, 0)
	if !ok || fp.Len() != 1 {
		t.Fatalf("fingerprint of a file read and lstat'ed: ok=%v, %d entries, want 1", ok, fp.Len())
	}
	if !fp.Unchanged(sys) {
		t.Fatal("unchanged file reported changed")
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, f); err != nil {
		t.Skip("no symlinks")
	}
	if fp.Unchanged(sys) {
		t.Error("a file replaced by a link to the same bytes counts as unchanged")
	}
}
