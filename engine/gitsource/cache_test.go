package gitsource

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// history builds main (c1 → c2), a dev branch at c1, a lightweight tag
// light at c1 and an annotated tag v1 at c2.
func history(t *testing.T) (u *upstream, c1, c2 plumbing.Hash) {
	u = newUpstream(t)
	c1 = u.commit("one", map[string]string{"README.md": "one\n", "skills/review/SKILL.md": "v1\n"})
	// An executable, an in-tree symlink, an escaping symlink and a file
	// with the marker's name.
	if err := os.WriteFile(filepath.Join(u.dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(u.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../etc/passwd", filepath.Join(u.dir, "skills", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.dir, MarkerFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"run.sh", "CLAUDE.md", "skills/evil", MarkerFile} {
		u.addRaw(p)
	}
	c2 = u.commit("two", map[string]string{"skills/review/SKILL.md": "v2\n"})
	u.branch("dev", c1)
	u.lightTag("light", c1)
	u.annotatedTag("v1", c2)
	return u, c1, c2
}

func TestCheckoutRefs(t *testing.T) {
	u, c1, c2 := history(t)
	cache := &Cache{Root: filepath.Join(t.TempDir(), "cache", "git")}
	ctx := context.Background()
	tests := []struct {
		ref  string
		want plumbing.Hash
	}{
		{"", c2},
		{"HEAD", c2},
		{"main", c2},
		{"refs/heads/main", c2},
		{"dev", c1},
		{"light", c1},
		{"v1", c2},
		{"refs/tags/v1", c2},
		{c1.String(), c1},
		{strings.ToUpper(c2.String()), c2},
		{c1.String()[:10], c1}, // not a tip: found after a full fetch
		{c2.String()[:7], c2},  // a tip: found in the listing
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			commit, dir, err := cache.Checkout(ctx, u.url(), tt.ref, FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if commit != tt.want.String() {
				t.Fatalf("commit = %s, want %s", commit, tt.want)
			}
			if want := filepath.Join(cache.Root, URLKey(u.url()), commit); dir != want {
				t.Fatalf("dir = %s, want %s", dir, want)
			}
			wantSkill := map[plumbing.Hash]string{c1: "v1\n", c2: "v2\n"}[tt.want]
			if got := readFile(t, dir, "skills/review/SKILL.md"); got != wantSkill {
				t.Errorf("SKILL.md = %q, want %q", got, wantSkill)
			}
		})
	}

	_, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, dir)
	want := []string{MarkerFile, "CLAUDE.md", "README.md", "run.sh", "skills", "skills/review", "skills/review/SKILL.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("checkout holds %v, want %v (no .git, no escaping symlink)", got, want)
	}
	if got := readFile(t, dir, "CLAUDE.md"); got != "one\n" {
		t.Errorf("CLAUDE.md (symlink) = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "CLAUDE.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("CLAUDE.md is not a symlink: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v %v", fi, err)
	}
	if got := readFile(t, dir, MarkerFile); !strings.Contains(got, `"commit": "`+c2.String()+`"`) || !strings.Contains(got, `"url": "`+u.url()+`"`) {
		t.Errorf("marker = %s", got)
	}
	// Only complete checkouts, no temporary folders.
	for _, e := range entries(t, filepath.Join(cache.Root, URLKey(u.url()))) {
		if top, _, _ := strings.Cut(e, "/"); !isFullSHA(top) {
			t.Errorf("unexpected entry %s in the URL's cache folder", e)
		}
	}
}

func TestCheckoutBareRepoAndPlainPath(t *testing.T) {
	u, _, c2 := history(t)
	bare := filepath.Join(t.TempDir(), "mirror.git")
	if _, err := git.PlainClone(bare, true, &git.CloneOptions{URL: u.dir}); err != nil {
		t.Fatal(err)
	}
	cache := &Cache{Root: t.TempDir()}
	for _, url := range []string{bare, "file://" + filepath.ToSlash(bare)} {
		commit, dir, err := cache.Checkout(context.Background(), url, "main", FetchOptions{})
		if err != nil || commit != c2.String() {
			t.Fatalf("Checkout(%s) = %s, %v", url, commit, err)
		}
		if got := readFile(t, dir, "skills/review/SKILL.md"); got != "v2\n" {
			t.Errorf("SKILL.md = %q", got)
		}
	}
}

func TestCheckoutCachedWorksOffline(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	commit, dir, err := cache.Checkout(ctx, u.url(), "v1", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(u.dir); err != nil {
		t.Fatal(err)
	}

	got, err := cache.Dir(u.url(), commit)
	if err != nil || got != dir {
		t.Fatalf("Dir = %s, %v; want %s", got, err, dir)
	}
	// A full SHA that is cached never needs the remote.
	again, dir2, err := cache.Checkout(ctx, u.url(), c2.String(), FetchOptions{})
	if err != nil || again != commit || dir2 != dir {
		t.Fatalf("cached Checkout = %s %s %v", again, dir2, err)
	}
	// A branch name does: the remote is gone.
	if _, _, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{}); apperr.CodeOf(err) != apperr.GitCloneFailed {
		t.Fatalf("Checkout of a vanished remote: %v", err)
	}
	// A commit that was never fetched is not cached.
	_, err = cache.Dir(u.url(), strings.Repeat("a", 40))
	if !errors.Is(err, ErrNotCached) || apperr.CodeOf(err) != apperr.SourceNotFound {
		t.Fatalf("Dir(unfetched) = %v", err)
	}
	if _, err := cache.Dir(u.url(), "abc123"); apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Fatalf("Dir(short sha) = %v", err)
	}
}

func TestUpstreamMoves(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	old, oldDir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil || old != c2.String() {
		t.Fatalf("Checkout = %s, %v", old, err)
	}
	c3 := u.commit("three", map[string]string{"skills/review/SKILL.md": "v3\n", "README.md": ""})

	got, err := Resolve(ctx, u.url(), "main", FetchOptions{})
	if err != nil || got != c3.String() {
		t.Fatalf("Resolve after the move = %s, %v; want %s", got, err, c3)
	}
	dir, err := cache.Dir(u.url(), old)
	if err != nil || dir != oldDir {
		t.Fatalf("Dir(old) = %s, %v", dir, err)
	}
	if got := readFile(t, dir, "skills/review/SKILL.md"); got != "v2\n" {
		t.Errorf("old checkout changed: %q", got)
	}
	moved, newDir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil || moved != c3.String() || newDir == oldDir {
		t.Fatalf("Checkout after the move = %s %s %v", moved, newDir, err)
	}
	if got := readFile(t, newDir, "skills/review/SKILL.md"); got != "v3\n" {
		t.Errorf("new checkout: %q", got)
	}
	if _, err := os.Stat(filepath.Join(newDir, "README.md")); !os.IsNotExist(err) {
		t.Errorf("README.md was deleted upstream but is in the checkout")
	}
	// The symlink to the deleted README dangles and is left out.
	if _, err := os.Lstat(filepath.Join(newDir, "CLAUDE.md")); !os.IsNotExist(err) {
		t.Errorf("dangling CLAUDE.md symlink kept")
	}
	if got := readFile(t, oldDir, "README.md"); got != "one\n" {
		t.Errorf("old checkout lost README.md: %q", got)
	}
}

func TestResolve(t *testing.T) {
	u, c1, c2 := history(t)
	ctx := context.Background()
	for ref, want := range map[string]plumbing.Hash{"": c2, "main": c2, "dev": c1, "light": c1, "v1": c2, c1.String(): c1, c2.String()[:8]: c2} {
		got, err := Resolve(ctx, u.url(), ref, FetchOptions{})
		if err != nil || got != want.String() {
			t.Errorf("Resolve(%q) = %s, %v; want %s", ref, got, err, want)
		}
	}
	// An abbreviated SHA that is no tip cannot be resolved without a clone.
	c3 := u.commit("three", map[string]string{"x": "x"})
	u.commit("four", map[string]string{"y": "y"})
	_, err := Resolve(ctx, u.url(), c3.String()[:9], FetchOptions{})
	if apperr.CodeOf(err) != apperr.GitRefNotFound || !strings.Contains(apperr.As(err).Hint, "full 40-character") {
		t.Errorf("Resolve(short non-tip) = %v", err)
	}
}

func TestUnknownRef(t *testing.T) {
	u, _, c2 := history(t)
	for _, name := range []string{"b1", "b2", "b3", "b4"} {
		u.branch(name, c2)
	}
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	_, err := Resolve(ctx, u.url(), "nope", FetchOptions{})
	if apperr.CodeOf(err) != apperr.GitRefNotFound {
		t.Fatalf("Resolve(nope) = %v", err)
	}
	msg := err.Error()
	// Branches first, sorted, then tags; five shown.
	if !strings.Contains(msg, `ref "nope" not found`) || !strings.Contains(msg, "existing refs: b1, b2, b3, b4, dev (and 3 more)") {
		t.Errorf("message = %s", msg)
	}
	if refs := apperr.As(err).Details["available_refs"].([]string); len(refs) != 8 {
		t.Errorf("available_refs = %v", refs)
	}

	_, _, err = cache.Checkout(ctx, u.url(), "nope", FetchOptions{})
	if apperr.CodeOf(err) != apperr.GitRefNotFound || !strings.Contains(err.Error(), "existing refs:") {
		t.Fatalf("Checkout(nope) = %v", err)
	}
	// A full SHA that does not exist is found missing after the fetch.
	_, _, err = cache.Checkout(ctx, u.url(), strings.Repeat("0", 40), FetchOptions{})
	if apperr.CodeOf(err) != apperr.GitRefNotFound {
		t.Fatalf("Checkout(unknown sha) = %v", err)
	}
	if got := entries(t, cache.Root); len(got) != 0 {
		t.Errorf("cache root not empty after failures: %v", got)
	}
}

func TestEmptyRemote(t *testing.T) {
	u := newUpstream(t)
	_, err := Resolve(context.Background(), u.url(), "main", FetchOptions{})
	if apperr.CodeOf(err) != apperr.GitRefNotFound || !strings.Contains(err.Error(), "no branches or tags") {
		t.Fatalf("Resolve on an empty repo = %v", err)
	}
}

func TestUnreachableRemote(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "does-not-exist")
	cache := &Cache{Root: filepath.Join(t.TempDir(), "git")}
	ctx := context.Background()
	var progress bytes.Buffer
	for _, url := range []string{missing, "file://" + filepath.ToSlash(missing)} {
		for _, ref := range []string{"main", strings.Repeat("a", 40)} {
			_, _, err := cache.Checkout(ctx, url, ref, FetchOptions{Progress: &progress})
			if apperr.CodeOf(err) != apperr.GitCloneFailed {
				t.Fatalf("Checkout(%s, %s) = %v, want E_GIT_CLONE_FAILED", url, ref, err)
			}
			if apperr.As(err).Hint == "" {
				t.Errorf("no hint: %v", err)
			}
		}
		if _, err := Resolve(ctx, url, "main", FetchOptions{}); apperr.CodeOf(err) != apperr.GitFetchFailed {
			t.Fatalf("Resolve(%s) = %v, want E_GIT_FETCH_FAILED", url, err)
		}
	}
	if got := entries(t, cache.Root); len(got) != 0 {
		t.Errorf("leftovers under the cache root: %v", got)
	}
	if strings.Contains(progress.String(), "retrying") {
		t.Errorf("a missing repository was retried: %s", progress.String())
	}
}

func TestInvalidInputs(t *testing.T) {
	ctx := context.Background()
	if _, _, err := (&Cache{Root: t.TempDir()}).Checkout(ctx, "http://example.com/r.git", "main", FetchOptions{}); apperr.CodeOf(err) != apperr.SourceURLInvalid {
		t.Errorf("Checkout(http) = %v", err)
	}
	if _, err := Resolve(ctx, "ftp://example.com/r.git", "main", FetchOptions{}); apperr.CodeOf(err) != apperr.SourceURLInvalid {
		t.Errorf("Resolve(ftp) = %v", err)
	}
	if _, _, err := (&Cache{}).Checkout(ctx, "https://example.com/r.git", "main", FetchOptions{}); apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Errorf("Checkout without a root = %v", err)
	}
}

// corruptions are the ways a complete checkout can be damaged on disk.
var corruptions = map[string]func(dir string) error{
	"edited file": func(dir string) error {
		return overwrite(filepath.Join(dir, "skills/review/SKILL.md"), "tampered\n")
	},
	"deleted file": func(dir string) error { return os.Remove(filepath.Join(dir, "README.md")) },
	"added file":   func(dir string) error { return os.WriteFile(filepath.Join(dir, "extra.md"), []byte("x"), 0o644) },
	"bad marker":   func(dir string) error { return overwrite(filepath.Join(dir, MarkerFile), "{") },
}

// overwrite replaces the content of a read-only cached file, as a user
// forcing an edit would.
func overwrite(p, data string) error {
	if err := os.Chmod(p, 0o644); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(data), 0o644)
}

func TestCorruptedCache(t *testing.T) {
	u, _, c2 := history(t)
	ctx := context.Background()
	for name, edit := range corruptions {
		for _, ref := range []string{c2.String(), "main"} {
			t.Run(name+" "+ref[:4], func(t *testing.T) {
				cache := &Cache{Root: t.TempDir()}
				commit, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := edit(dir); err != nil {
					t.Fatal(err)
				}

				// test that reading refuses the entry with a hint naming fetch, not rm -rf
				_, err = cache.Dir(u.url(), commit)
				if apperr.CodeOf(err) != apperr.CacheCorrupted {
					t.Fatalf("Dir after %s = %v", name, err)
				}
				if hint := apperr.As(err).Hint; strings.Contains(hint, "rm -rf") || !strings.Contains(hint, "agentpack fetch") {
					t.Errorf("hint = %q", hint)
				}

				// test that Checkout evicts the damaged entry, downloads it again and reports it
				var repaired []string
				opt := FetchOptions{OnRepair: func(p string, cause error) {
					if apperr.CodeOf(cause) != apperr.CacheCorrupted {
						t.Errorf("OnRepair cause = %v", cause)
					}
					repaired = append(repaired, p)
				}}
				got, gotDir, err := cache.Checkout(ctx, u.url(), ref, opt)
				if err != nil || got != commit || gotDir != dir {
					t.Fatalf("Checkout of a corrupted entry = %s %s %v", got, gotDir, err)
				}
				if len(repaired) != 1 || repaired[0] != dir {
					t.Errorf("OnRepair saw %v, want [%s]", repaired, dir)
				}
				if _, err := cache.Dir(u.url(), commit); err != nil {
					t.Fatalf("Dir after the repair = %v", err)
				}
				if got := readFile(t, dir, "skills/review/SKILL.md"); got != "v2\n" {
					t.Errorf("SKILL.md after the repair = %q", got)
				}
				if _, err := os.Stat(filepath.Join(dir, "extra.md")); !os.IsNotExist(err) {
					t.Errorf("extra.md survived the repair: %v", err)
				}
				if got := entries(t, filepath.Dir(dir)); slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, tmpPrefix) }) {
					t.Errorf("leftovers after the repair: %v", got)
				}
			})
		}
	}
}

func TestIncompleteCheckoutIsRefetched(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	final, err := cache.Path(u.url(), c2.String())
	if err != nil {
		t.Fatal(err)
	}
	// A half-written checkout, or one made by the original tool (with .git
	// and no marker).
	if err := os.MkdirAll(filepath.Join(final, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(final, "README.md"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Dir(u.url(), c2.String()); !errors.Is(err, ErrNotCached) {
		t.Fatalf("Dir(incomplete) = %v", err)
	}
	// A temporary folder left by a fetch that died a day ago, and one of a
	// fetch that may still be running.
	stale := filepath.Join(filepath.Dir(final), tmpPrefix+"dead")
	fresh := filepath.Join(filepath.Dir(final), tmpPrefix+"running")
	for _, p := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(p, "tree"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	commit, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil || commit != c2.String() || dir != final {
		t.Fatalf("Checkout = %s %s %v", commit, dir, err)
	}
	if got := readFile(t, dir, "README.md"); got != "one\n" {
		t.Errorf("README.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
		t.Errorf(".git survived the refetch")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary folder kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent temporary folder was removed: %v", err)
	}
}

func TestConcurrentCheckouts(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	dirs := make([]string, 6)
	for i := range errs {
		wg.Go(func() {
			var commit string
			commit, dirs[i], errs[i] = cache.Checkout(context.Background(), u.url(), "v1", FetchOptions{})
			if errs[i] == nil && commit != c2.String() {
				errs[i] = errors.New("wrong commit " + commit)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || dirs[i] != dirs[0] {
			t.Fatalf("checkout %d: %s %v", i, dirs[i], err)
		}
	}
	if _, err := cache.Dir(u.url(), c2.String()); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, filepath.Join(cache.Root, URLKey(u.url()))); !slices.Contains(got, c2.String()) || slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, tmpPrefix) }) {
		t.Errorf("cache folder = %v", got)
	}
}

func TestCanceledContext(t *testing.T) {
	u, _, _ := history(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cache := &Cache{Root: t.TempDir()}
	if _, _, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{}); err == nil {
		t.Fatal("Checkout with a canceled context succeeded")
	}
	if got := entries(t, cache.Root); len(got) != 0 {
		t.Errorf("leftovers: %v", got)
	}
}

func TestTreeHashMatchesLockfile(t *testing.T) {
	u, _, _ := history(t)
	cache := &Cache{Root: t.TempDir()}
	_, dir, err := cache.Checkout(context.Background(), u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := lockfile.HashDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(files, func(f lockfile.File) bool { return f.Path == MarkerFile }) {
		t.Errorf("the marker is part of the module hash: %v", files)
	}
	if !strings.Contains(readFile(t, dir, MarkerFile), lockfile.ModuleHash(files)) {
		t.Errorf("marker tree_sha256 is not ModuleHash(HashDir(dir))")
	}
}
