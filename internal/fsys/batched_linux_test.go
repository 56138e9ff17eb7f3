package fsys

import (
	"os"
	"testing"
)

// TestBatchedSyncsEachFilesystemOnce: a durable RealSystem's batched copy
// fsyncs no file or folder as it writes, and its barrier flushes the one
// filesystem it wrote to with one syncfs, however many files and folders
// changed (removed folders included); a barrier with nothing new does
// nothing.
func TestBatchedSyncsEachFilesystemOnce(t *testing.T) {
	calls := 0
	t.Cleanup(func() { syncfs = realSyncfs })
	syncfs = func(fd int) error { calls++; return realSyncfs(fd) }
	var hooked int
	durable := NewRealSystem(RealSystemOptions{Fsync: true, AfterWrite: func(AbsPath) { hooked++ }})
	sys, barrier := Batched(durable)
	b, ok := sys.(*RealSystem)
	if !ok || b.opts.Fsync || !durable.opts.Fsync {
		t.Fatalf("Batched(durable RealSystem) = %#v; want a copy without per-file fsync, the original unchanged", sys)
	}
	root := tempRoot(t)
	for _, p := range []string{"a/1", "a/2", "b/c/3", "gone/4"} {
		if err := sys.WriteFile(root.Join(RelPath(p)), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sys.RemoveAll(root.Join("gone")); err != nil {
		t.Fatal(err)
	}
	if err := barrier(); err != nil || calls != 1 {
		t.Fatalf("barrier: %v after %d syncfs calls; want one", err, calls)
	}
	if hooked != 5 {
		t.Errorf("the batched copy ran the AfterWrite hook %d times, want 5", hooked)
	}
	if err := barrier(); err != nil || calls != 1 {
		t.Fatalf("an empty barrier: %v, %d syncfs calls; want none more", err, calls)
	}
	if data, err := os.ReadFile(root.Join("b/c/3").String()); err != nil || string(data) != "b/c/3" {
		t.Fatalf("written through the batched copy: %q, %v", data, err)
	}
}
