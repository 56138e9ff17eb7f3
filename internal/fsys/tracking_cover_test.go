package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// loadedFile writes dir/f with data and an hour-old mtime, and has a
// TrackingSystem lstat and read it, as a module load does.
func loadedFile(t *testing.T, data string) (sys System, tr *TrackingSystem, f, dir string, old time.Time) {
	t.Helper()
	dir = t.TempDir()
	f = filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	old = time.Now().Add(-time.Hour)
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	sys = NewRealSystem(RealSystemOptions{})
	tr = NewTrackingSystem(sys)
	if _, err := tr.Lstat(AbsPath(f)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ReadFile(AbsPath(f)); err != nil {
		t.Fatal(err)
	}
	return sys, tr, f, dir, old
}

// TestFingerprintChecksAPathOnce checks that a file both read and lstat'ed
// is stat'ed once, and that the one check still sees it turn into a link.
func TestFingerprintChecksAPathOnce(t *testing.T) {
	sys, tr, f, dir, _ := loadedFile(t, "x")
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

// TestFingerprintReusesTheLoadsLstat checks that a fingerprint taken after
// a load reuses the load's own lstat: a file changed after that lstat
// (after the read) is not recorded as unchanged.
func TestFingerprintReusesTheLoadsLstat(t *testing.T) {
	sys, tr, f, _, old := loadedFile(t, "one")
	// Changed after the load read it, with an old mtime: only the stat
	// taken during the load can tell.
	if err := os.WriteFile(f, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	// The racy rule would also refuse this fingerprint (the change is newer
	// than the load's start); move the start so only the reuse is tested.
	tr.start = time.Now().Add(time.Hour)
	fp, ok := tr.Fingerprint(sys, 0)
	if !ok || fp.Len() != 1 || fp.Entries()[0].Size != 3 {
		t.Fatalf("fingerprint ok=%v %+v: want the load's lstat (3 bytes)", ok, fp)
	}
	if fp.Unchanged(sys) {
		t.Error("a file changed after the load is recorded as unchanged")
	}
}

// TestFingerprintKeepsTheFirstLstat: a path lstat'ed again after an edit
// is described by its first answer, the one the load's read went with, so
// the fingerprint sees the edit as a change (the second answer would
// vouch for bytes the load may never have read).
func TestFingerprintKeepsTheFirstLstat(t *testing.T) {
	sys, tr, f, _, old := loadedFile(t, "x")
	if err := os.WriteFile(f, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Lstat(AbsPath(f)); err != nil {
		t.Fatal(err)
	}
	fp, ok := tr.Fingerprint(sys, 0)
	if !ok {
		t.Fatal("the first lstat, taken before the tracking began, was judged too recent")
	}
	if fp.Unchanged(sys) {
		t.Fatal("a file edited between two lstats reported unchanged")
	}
}

// A stopped tracker lets go of what it logged, logs nothing more (reads
// through it still answer) and takes no fingerprint: one taken would say
// nothing was read, and an answer kept under it would never go stale.
func TestStoppedTrackerTakesNoFingerprint(t *testing.T) {
	sys, tr, f, _, _ := loadedFile(t, "x")
	if _, ok := tr.Fingerprint(sys, 0); !ok {
		t.Fatal("no fingerprint before the stop")
	}
	tr.Stop()
	if data, err := tr.ReadFile(AbsPath(f)); err != nil || string(data) != "x" {
		t.Fatalf("a read through a stopped tracker: %q, %v", data, err)
	}
	if _, _, err := ReadRegular(tr, AbsPath(f), nil); err != nil {
		t.Fatal(err)
	}
	if fp, ok := tr.Fingerprint(sys, 0); ok {
		t.Errorf("a stopped tracker took a fingerprint of %d paths", fp.Len())
	}
	if tr.n != 0 || tr.nregular != 0 || tr.chunks != nil || tr.regular != nil {
		t.Errorf("a stopped tracker still holds %d looks and %d reads", tr.n, tr.nregular)
	}
}
