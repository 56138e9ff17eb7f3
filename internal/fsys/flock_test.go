package fsys

import (
	"testing"
)

func TestTryLockExcludesAndReleases(t *testing.T) {
	path := tempRoot(t).JoinName("lock")
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	// A second open file description in the same process is refused.
	if again, ok, err := TryLock(path); err != nil || ok || again != nil {
		t.Fatalf("TryLock while held = %v, %v; want false, nil", ok, err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatalf("second unlock: %v", err)
	}
	unlock, ok, err = TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after unlock = %v, %v", ok, err)
	}
	_ = unlock()
	if fi, err := NewRealSystem(RealSystemOptions{}).Stat(path); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the lock file should stay: %v, %v", fi, err)
	}
}

func TestTryLockMissingFolder(t *testing.T) {
	_, ok, err := TryLock(tempRoot(t).Join("absent/lock"))
	if err == nil || ok {
		t.Fatalf("TryLock in a missing folder = %v, %v; want an error", ok, err)
	}
}
