package gitsource

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/fsys"
)

// call is one System call a [recordingSystem] saw.
type call struct {
	op   string
	path fsys.AbsPath
}

// recordingSystem forwards to a System and records every call. With
// crashAt > 0, the crashAt-th mutation and every later one fail, as if the
// process had died there: not even cleanup gets through.
type recordingSystem struct {
	fsys.System
	crashAt int

	mu        sync.Mutex
	calls     []call
	mutations int
}

func (r *recordingSystem) record(op string, p fsys.AbsPath) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{op, p})
}

func (r *recordingSystem) mutate(op string, p fsys.AbsPath) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{op, p})
	r.mutations++
	if r.crashAt > 0 && r.mutations >= r.crashAt {
		return fsys.IOError(syscall.EIO, op, p)
	}
	return nil
}

// paths returns the paths of the recorded calls of op.
func (r *recordingSystem) paths(op string) []fsys.AbsPath {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []fsys.AbsPath
	for _, c := range r.calls {
		if c.op == op {
			out = append(out, c.path)
		}
	}
	return out
}

func (r *recordingSystem) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

func (r *recordingSystem) ReadFile(p fsys.AbsPath) ([]byte, error) {
	r.record("ReadFile", p)
	return r.System.ReadFile(p)
}

func (r *recordingSystem) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	r.record("Lstat", p)
	return r.System.Lstat(p)
}

func (r *recordingSystem) Stat(p fsys.AbsPath) (fs.FileInfo, error) {
	r.record("Stat", p)
	return r.System.Stat(p)
}

func (r *recordingSystem) ReadDir(p fsys.AbsPath) ([]fs.DirEntry, error) {
	r.record("ReadDir", p)
	return r.System.ReadDir(p)
}

func (r *recordingSystem) Readlink(p fsys.AbsPath) (string, error) {
	r.record("Readlink", p)
	return r.System.Readlink(p)
}

func (r *recordingSystem) WriteFile(p fsys.AbsPath, data []byte, perm fs.FileMode) error {
	if err := r.mutate("WriteFile", p); err != nil {
		return err
	}
	return r.System.WriteFile(p, data, perm)
}

func (r *recordingSystem) Remove(p fsys.AbsPath) error {
	if err := r.mutate("Remove", p); err != nil {
		return err
	}
	return r.System.Remove(p)
}

func (r *recordingSystem) RemoveAll(p fsys.AbsPath) error {
	if err := r.mutate("RemoveAll", p); err != nil {
		return err
	}
	return r.System.RemoveAll(p)
}

func (r *recordingSystem) MkdirAll(p fsys.AbsPath, perm fs.FileMode) error {
	if err := r.mutate("MkdirAll", p); err != nil {
		return err
	}
	return r.System.MkdirAll(p, perm)
}

func (r *recordingSystem) Rename(oldpath, newpath fsys.AbsPath) error {
	if err := r.mutate("Rename", newpath); err != nil {
		return err
	}
	return r.System.Rename(oldpath, newpath)
}

func (r *recordingSystem) Symlink(oldname string, newname fsys.AbsPath) error {
	if err := r.mutate("Symlink", newname); err != nil {
		return err
	}
	return r.System.Symlink(oldname, newname)
}

func realSystem() fsys.System { return fsys.NewRealSystem(fsys.RealSystemOptions{}) }

func TestCheckoutGoesThroughSystem(t *testing.T) {
	u, _, c2 := history(t)
	rec := &recordingSystem{System: realSystem()}
	cache := &Cache{Root: filepath.Join(t.TempDir(), "git"), System: rec}
	commit, dir, err := cache.Checkout(context.Background(), u.url(), "main", FetchOptions{})
	if err != nil || commit != c2.String() {
		t.Fatalf("Checkout = %s, %v", commit, err)
	}

	// test that the upstream was read through the System
	if !slices.ContainsFunc(rec.paths("ReadFile"), func(p fsys.AbsPath) bool {
		return strings.HasPrefix(p.String(), filepath.Join(u.dir, ".git")+string(filepath.Separator))
	}) {
		t.Errorf("the local upstream was not read through the System")
	}
	// test that every entry of the checkout was written through the System,
	// into a temporary folder renamed into place
	renamed := rec.paths("Rename")
	if len(renamed) != 1 || renamed[0].String() != dir {
		t.Fatalf("renames = %v, want one to %s", renamed, dir)
	}
	written := map[string]bool{}
	for _, p := range append(rec.paths("WriteFile"), rec.paths("Symlink")...) {
		_, rel, ok := strings.Cut(filepath.ToSlash(p.String()), "/tree/")
		if !ok || !strings.Contains(p.String(), tmpPrefix) {
			t.Errorf("%s written outside a temporary tree", p)
		}
		written[rel] = true
	}
	for _, rel := range entries(t, dir) {
		if fi, err := os.Lstat(filepath.Join(dir, rel)); err == nil && !fi.IsDir() && !written[rel] {
			t.Errorf("%s is in the checkout but was not written through the System", rel)
		}
	}
	if !written[MarkerFile] {
		t.Errorf("the marker was not written through the System")
	}

	// test that verifying the checkout reads it through the System
	rec.reset()
	if got, err := cache.Dir(u.url(), commit); err != nil || got != dir {
		t.Fatalf("Dir = %s, %v", got, err)
	}
	read := rec.paths("ReadFile")
	for _, rel := range []string{MarkerFile, "README.md", "skills/review/SKILL.md", "run.sh"} {
		if !slices.Contains(read, fsys.AbsPath(filepath.Join(dir, filepath.FromSlash(rel)))) {
			t.Errorf("Dir did not read %s through the System (read %v)", rel, read)
		}
	}
	rec.reset()
	locked, err := lockfile.HashDir(filepath.Join(dir, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.VerifySubdir(dir, "skills", locked); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rec.paths("ReadFile"), fsys.AbsPath(filepath.Join(dir, "skills", "review", "SKILL.md"))) {
		t.Errorf("VerifySubdir did not read through the System")
	}
}

func TestCheckoutInMemory(t *testing.T) {
	u, _, c2 := history(t)
	mem := fsys.NewMemSystem()
	copyToMem(t, mem, u.dir)
	root := filepath.Join(t.TempDir(), "git")
	cache := &Cache{Root: root, System: mem}
	commit, dir, err := cache.Checkout(context.Background(), u.url(), "v1", FetchOptions{})
	if err != nil || commit != c2.String() {
		t.Fatalf("Checkout = %s, %v", commit, err)
	}
	got, err := mem.ReadFile(fsys.AbsPath(filepath.Join(dir, "skills", "review", "SKILL.md")))
	if err != nil || string(got) != "v2\n" {
		t.Fatalf("SKILL.md = %q, %v", got, err)
	}
	if target, err := mem.Readlink(fsys.AbsPath(filepath.Join(dir, "CLAUDE.md"))); err != nil || target != "README.md" {
		t.Errorf("CLAUDE.md link = %q, %v", target, err)
	}
	if _, err := mem.Lstat(fsys.AbsPath(filepath.Join(dir, "skills", "evil"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("escaping link kept: %v", err)
	}
	if _, err := cache.Dir(u.url(), commit); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the in-memory cache touched the disk: %v", err)
	}
}

// copyToMem copies the folder dir from the disk into mem, at the same path.
func copyToMem(t *testing.T, mem *fsys.MemSystem, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ap := fsys.AbsPath(p)
		switch {
		case d.IsDir():
			return mem.MkdirAll(ap, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return mem.Symlink(target, ap)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(ap, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInterruptedCheckoutIsNeverValid(t *testing.T) {
	u, _, c2 := history(t)
	ctx := context.Background()
	// Count the mutations of a checkout that runs to the end.
	probe := &recordingSystem{System: realSystem()}
	if _, _, err := (&Cache{Root: t.TempDir(), System: probe}).Checkout(ctx, u.url(), "main", FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for n := 1; n <= probe.mutations; n++ {
		root := t.TempDir()
		crashing := &recordingSystem{System: realSystem(), crashAt: n}
		_, dir, err := (&Cache{Root: root, System: crashing}).Checkout(ctx, u.url(), "main", FetchOptions{})
		healthy := &Cache{Root: root}
		got, derr := healthy.Dir(u.url(), c2.String())
		switch {
		case err == nil:
			// Only the cleanup after the rename was lost: the checkout is complete.
			if derr != nil || got != dir {
				t.Errorf("crash at mutation %d: Checkout succeeded but Dir = %s, %v", n, got, derr)
			}
		case !errors.Is(derr, ErrNotCached):
			t.Errorf("crash at mutation %d (%v): Dir = %s, %v; want not cached", n, err, got, derr)
		default:
			failures++
		}
		// The next fetch, on a healthy System, repairs the cache.
		if _, dir, err := healthy.Checkout(ctx, u.url(), "main", FetchOptions{}); err != nil {
			t.Errorf("crash at mutation %d: refetch: %v", n, err)
		} else if got := readFile(t, dir, "skills/review/SKILL.md"); got != "v2\n" {
			t.Errorf("crash at mutation %d: refetched SKILL.md = %q", n, got)
		}
	}
	t.Logf("%d mutations, %d crashes failed the checkout", probe.mutations, failures)
	if failures < probe.mutations/2 {
		t.Errorf("only %d of %d crashes failed the checkout", failures, probe.mutations)
	}
}

func TestHashTreeMatchesLockfile(t *testing.T) {
	mk := func(t *testing.T, files map[string]string, links map[string]string) string {
		dir := filepath.Join(t.TempDir(), "m")
		for rel, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for rel, target := range links {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	base := map[string]string{"a.md": "a", "sub/b.md": "b", ".git/config": "x", "sub/.git": "y", MarkerFile: "{}", "sub/" + MarkerFile: "kept"}
	tests := []struct {
		name  string
		links map[string]string
		fails bool
	}{
		{"plain", nil, false},
		{"file and folder links", map[string]string{"l.md": "a.md", "ld": "sub", "sub/up.md": "../a.md"}, false},
		{"chain", map[string]string{"l1": "l2", "l2": "sub/b.md"}, false},
		{"through a linked folder", map[string]string{"ld": "sub", "x.md": "ld/b.md"}, false},
		{"dangling", map[string]string{"gone": "nope"}, true},
		{"outside", map[string]string{"out": "../x"}, true},
		{"absolute", map[string]string{"abs": "/etc/hostname"}, true},
		{"loop", map[string]string{"l1": "l2", "l2": "l1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mk(t, base, tt.links)
			want, werr := lockfile.HashDir(dir)
			got, gerr := hashTree(realSystem(), fsys.AbsPath(dir))
			if (werr != nil) != tt.fails || (gerr != nil) != tt.fails {
				t.Fatalf("errors: lockfile %v, hashTree %v; want failure %v", werr, gerr, tt.fails)
			}
			if !slices.Equal(got, want) {
				t.Errorf("hashTree = %v\nHashDir  = %v", got, want)
			}
		})
	}
}
