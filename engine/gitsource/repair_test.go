package gitsource

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestCheckoutIsReadOnly(t *testing.T) {
	u, _, _ := history(t)
	cache := &Cache{Root: t.TempDir()}
	_, dir, err := cache.Checkout(context.Background(), u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// test that files are read-only, executables stay executable and folders stay writable
	want := map[string]fs.FileMode{
		"README.md": 0o444, "skills/review/SKILL.md": 0o444, "run.sh": 0o555, MarkerFile: 0o444,
		"skills": fs.ModeDir | 0o755, "skills/review": fs.ModeDir | 0o755,
	}
	for rel, mode := range want {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModeDir | fs.ModePerm); got != mode {
			t.Errorf("%s: mode %v, want %v", rel, got, mode)
		}
	}

	// test that an edit made anyway is still detected
	if err := overwrite(filepath.Join(dir, "README.md"), "edited\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Dir(u.url(), filepath.Base(dir)); apperr.CodeOf(err) != apperr.CacheCorrupted {
		t.Fatalf("Dir after an edit = %v", err)
	}
}

func TestCorruptedCacheStaysWhenOffline(t *testing.T) {
	u, _, c2 := history(t)
	ctx := context.Background()
	cache := &Cache{Root: t.TempDir()}
	_, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := overwrite(filepath.Join(dir, "README.md"), "edited\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(u.dir); err != nil {
		t.Fatal(err)
	}

	// test that a failed download keeps the damaged entry and reports the download's failure
	_, _, err = cache.Checkout(ctx, u.url(), c2.String(), FetchOptions{Retries: -1})
	if err == nil || apperr.CodeOf(err) == apperr.CacheCorrupted {
		t.Fatalf("offline Checkout of a corrupted entry = %v", err)
	}
	if got := readFile(t, dir, "README.md"); got != "edited\n" {
		t.Errorf("README.md = %q", got)
	}
	if _, err := cache.Dir(u.url(), c2.String()); apperr.CodeOf(err) != apperr.CacheCorrupted {
		t.Errorf("Dir = %v", err)
	}
}

func TestConcurrentRepairs(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	_, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			_, got, err := cache.Checkout(ctx, u.url(), c2.String(), FetchOptions{})
			if err == nil && got != dir {
				err = errors.New("wrong folder " + got)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("checkout %d: %v", i, err)
		}
	}
	if _, err := cache.Dir(u.url(), c2.String()); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, filepath.Dir(dir)); slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, tmpPrefix) }) {
		t.Errorf("leftovers: %v", got)
	}
}

func TestRepairReplacesAForgedCheckout(t *testing.T) {
	u, _, c2 := history(t)
	cache := &Cache{Root: t.TempDir()}
	ctx := context.Background()
	_, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	locked, err := lockfile.HashDir(filepath.Join(dir, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	// An edit with a marker rewritten to match: Dir cannot tell.
	if err := overwrite(filepath.Join(dir, "skills/review/SKILL.md"), "forged\n"); err != nil {
		t.Fatal(err)
	}
	files, err := hashTree(realSystem(), fsys.AbsPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(marker{URL: u.url(), Commit: c2.String(), TreeSHA256: lockfile.ModuleHash(files)})
	if err := overwrite(filepath.Join(dir, MarkerFile), string(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Dir(u.url(), c2.String()); err != nil {
		t.Fatalf("Dir of a forged checkout = %v", err)
	}
	if err := cache.VerifySubdir(dir, "skills", locked); apperr.CodeOf(err) != apperr.ChecksumMismatch {
		t.Fatalf("VerifySubdir of a forged checkout = %v", err)
	} else if hint := apperr.As(err).Hint; strings.Contains(hint, "rm -rf") {
		t.Errorf("VerifySubdir hint = %q", hint)
	}

	// test that Repair downloads it again and reports the replaced copy
	var repaired []string
	got, err := cache.Repair(ctx, u.url(), strings.ToUpper(c2.String()), FetchOptions{OnRepair: func(p string, cause error) {
		if cause != nil {
			t.Errorf("OnRepair cause = %v, want nil for a checkout that verified", cause)
		}
		repaired = append(repaired, p)
	}})
	if err != nil || got != dir {
		t.Fatalf("Repair = %s, %v", got, err)
	}
	if len(repaired) != 1 || repaired[0] != dir {
		t.Errorf("OnRepair saw %v", repaired)
	}
	if err := cache.VerifySubdir(dir, "skills", locked); err != nil {
		t.Fatalf("VerifySubdir after Repair = %v", err)
	}

	// test that Repair of an absent checkout downloads it
	if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	if got, err := cache.Repair(ctx, u.url(), c2.String(), FetchOptions{}); err != nil || got != dir {
		t.Fatalf("Repair of an absent checkout = %s, %v", got, err)
	}

	// test that Repair wants a full commit
	if _, err := cache.Repair(ctx, u.url(), "main", FetchOptions{}); apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Errorf("Repair(main) = %v", err)
	}
}

func TestEvict(t *testing.T) {
	u, _, c2 := history(t)
	ctx := context.Background()
	mem := fsys.NewMemSystem()
	copyToMem(t, mem, u.dir)
	rec := &recordingSystem{System: mem}
	cache := &Cache{Root: filepath.Join(t.TempDir(), "git"), System: rec}
	_, dir, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// test that Evict moves the checkout aside, then deletes it, through the System
	rec.reset()
	if err := cache.Evict(u.url(), c2.String()); err != nil {
		t.Fatal(err)
	}
	renamed, removed := rec.paths("Rename"), rec.paths("RemoveAll")
	if len(renamed) != 1 || !strings.HasPrefix(renamed[0].Base(), tmpPrefix) || len(removed) != 1 || removed[0] != renamed[0] {
		t.Errorf("renamed %v, removed %v", renamed, removed)
	}
	if _, err := mem.Lstat(fsys.AbsPath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checkout still there: %v", err)
	}
	if _, err := cache.Dir(u.url(), c2.String()); !errors.Is(err, ErrNotCached) {
		t.Errorf("Dir after Evict = %v", err)
	}

	// test that evicting an absent checkout is not an error
	if err := cache.Evict(u.url(), c2.String()); err != nil {
		t.Errorf("second Evict = %v", err)
	}

	// test that an in-memory cache is repaired like a real one
	if _, _, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(fsys.AbsPath(filepath.Join(dir, "README.md")), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, got, err := cache.Checkout(ctx, u.url(), "main", FetchOptions{}); err != nil || got != dir {
		t.Fatalf("in-memory repair = %s, %v", got, err)
	}
	if data, _ := mem.ReadFile(fsys.AbsPath(filepath.Join(dir, "README.md"))); string(data) != "one\n" {
		t.Errorf("README.md after the in-memory repair = %q", data)
	}
}

func TestLinksLeftOutAreRecorded(t *testing.T) {
	u, _, _ := history(t)
	for _, rel := range []string{"skills/up", "skills/abs", "skills/gone", "skills/chain"} {
		target := map[string]string{
			"skills/up":    "../..",
			"skills/abs":   "/etc/passwd",
			"skills/gone":  "missing.md",
			"skills/chain": "evil",
		}[rel]
		if err := os.Symlink(target, filepath.Join(u.dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
		u.addRaw(rel)
	}
	c3 := u.commit("links", nil)
	cache := &Cache{Root: t.TempDir()}
	_, dir, err := cache.Checkout(context.Background(), u.url(), c3.String(), FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// test that every link left out of the checkout is in the marker, and only those
	want := []Link{
		{Path: "skills/abs", Target: "/etc/passwd"},
		{Path: "skills/chain", Target: "evil"},
		{Path: "skills/evil", Target: "../../../etc/passwd"},
		{Path: "skills/gone", Target: "missing.md"},
		{Path: "skills/up", Target: "../.."},
	}
	for _, sub := range []string{"", "skills", "skills/review/SKILL.md"} {
		info, err := FindCheckout(filepath.Join(dir, filepath.FromSlash(sub)))
		if err != nil || info == nil || info.Dir != dir {
			t.Fatalf("FindCheckout(%q) = %+v, %v", sub, info, err)
		}
		got := slices.Clone(info.LinksLeftOut)
		// go-git stores an absolute target as it likes ("/../../etc/passwd").
		if len(got) > 0 && strings.HasPrefix(got[0].Target, "/") && strings.HasSuffix(got[0].Target, "/etc/passwd") {
			got[0].Target = "/etc/passwd"
		}
		if !slices.Equal(got, want) {
			t.Errorf("LinksLeftOut = %+v\nwant %+v", info.LinksLeftOut, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "CLAUDE.md")); err != nil || target != "README.md" {
		t.Errorf("in-tree link = %q, %v", target, err)
	}

	// test that paths outside a checkout are recognised as such
	for _, p := range []string{u.dir, filepath.Dir(dir), cache.Root, string(filepath.Separator)} {
		if info, err := FindCheckout(p); info != nil || err != nil {
			t.Errorf("FindCheckout(%s) = %+v, %v", p, info, err)
		}
	}
	if err := overwrite(filepath.Join(dir, MarkerFile), "{"); err != nil {
		t.Fatal(err)
	}
	if _, err := FindCheckout(dir); apperr.CodeOf(err) != apperr.CacheCorrupted {
		t.Errorf("FindCheckout with a bad marker = %v", err)
	}
}
