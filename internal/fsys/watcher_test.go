package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatcherCountsOnlyWhatFingerprintsCover: once a fingerprint is
// covered, writing, listing-changing and creating what it looked at (a
// file read, an entry of a folder listed, the first missing name on the
// way to a path looked for) moves the generation; activity beside them
// in the same watched folders (another test's folder in /tmp, a shell's
// history file in a home folder) does not.
func TestWatcherCountsOnlyWhatFingerprintsCover(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"repo/mods", "home"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "repo", "agentpack.yaml")
	if err := os.WriteFile(file, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sys := NewRealSystem(RealSystemOptions{})
	tr := NewTrackingSystem(sys)
	abs := func(rel string) AbsPath { return AbsPath(filepath.Join(root, filepath.FromSlash(rel))) }
	if _, err := tr.Lstat(abs("repo")); err != nil { // a folder above the repo, looked at
		t.Fatal(err)
	}
	if _, err := tr.ReadFile(abs("repo/agentpack.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ReadDir(abs("repo/mods")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Lstat(abs("home/.codex/config.toml")); err == nil {
		t.Fatal("config.toml exists")
	}
	fp, ok := tr.Fingerprint(sys, 0)
	if !ok {
		t.Fatal("no fingerprint")
	}
	w, err := NewWatcher()
	if err != nil {
		t.Skipf("no watcher here: %v", err)
	}
	defer w.Close()
	if !w.Cover(fp) {
		t.Fatal("Cover failed")
	}
	write := func(rel string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Beside what is covered: heard, not counted.
	gen := w.Generation()
	write("other.txt")
	write("repo/notes.txt")
	write("home/.bash_history")
	if err := os.Mkdir(filepath.Join(root, "another-test"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if g := w.Generation(); g != gen {
		t.Fatalf("activity beside the covered paths moved the generation %d -> %d", gen, g)
	}
	for _, rel := range []string{"repo/agentpack.yaml", "repo/mods/new.md", "home/.codex"} {
		gen := w.Generation()
		if rel == "home/.codex" {
			if err := os.Mkdir(filepath.Join(root, "home", ".codex"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			write(rel)
		}
		deadline := time.Now().Add(5 * time.Second)
		for w.Generation() == gen && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if w.Generation() == gen {
			t.Fatalf("writing %s, which the fingerprint covers, did not move the generation", rel)
		}
	}
}

// coveredFile is a watcher covering a fingerprint that read dir/file, a
// file made for the test.
func coveredFile(t *testing.T) (w *Watcher, dir, file string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "skill")
	file = filepath.Join(dir, "SKILL.md")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher()
	if err != nil {
		t.Skipf("no watcher here: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	cover(t, w, file)
	return w, dir, file
}

// cover has w cover a fingerprint that read file.
func cover(t *testing.T, w *Watcher, file string) {
	t.Helper()
	sys := NewRealSystem(RealSystemOptions{})
	tr := NewTrackingSystem(sys)
	if _, err := tr.ReadFile(AbsPath(file)); err != nil {
		t.Fatal(err)
	}
	fp, ok := tr.Fingerprint(sys, 0)
	if !ok || !w.Cover(fp) {
		t.Fatal("cannot cover the fingerprint")
	}
}

// TestWatcherSyncHearsWhatCameBefore: an event reaches the watcher some
// time after the change that made it, so a check made right after a
// change could miss it; once Sync returns, every change made before it
// has moved the generation.
func TestWatcherSyncHearsWhatCameBefore(t *testing.T) {
	w, _, file := coveredFile(t)
	if !w.Sync() {
		t.Skip("this watcher cannot sync (no marker folder)")
	}
	for i := range 200 {
		gen := w.Generation()
		if err := os.WriteFile(file, []byte{byte('a' + i%26), '\n'}, 0o644); err != nil {
			t.Fatal(err)
		}
		if !w.Sync() {
			t.Fatalf("write %d: Sync could not tell", i)
		}
		if w.Generation() == gen {
			t.Fatalf("write %d: the generation had not moved when Sync returned", i)
		}
	}
}

// TestWatcherWatchesAFolderMadeAgain: a watch is on a folder, not on its
// path, so once a covered folder is removed and made again (a rollback
// removes a skill's folder, the next deploy makes it), covering the new
// folder watches it: changes in it move the generation.
func TestWatcherWatchesAFolderMadeAgain(t *testing.T) {
	w, dir, file := coveredFile(t)
	if !w.Sync() {
		t.Skip("this watcher cannot sync (no marker folder)")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Sync()
	cover(t, w, file) // what a cache does with the answer it computes then
	gen := w.Generation()
	if err := os.WriteFile(file, []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !w.Sync() {
		t.Fatal("Sync could not tell")
	}
	if w.Generation() == gen {
		t.Fatal("a write in the folder made again did not move the generation")
	}
}
