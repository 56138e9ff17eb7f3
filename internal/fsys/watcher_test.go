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
