package pkgcache

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// jsonExtract is a stand-in archive format for these tests: a JSON object
// of path -> content.
func jsonExtract(archive []byte) (*Extracted, error) {
	var files map[string]string
	if err := json.Unmarshal(archive, &files); err != nil {
		return nil, apperr.New(apperr.ManifestInvalid, "bad archive")
	}
	ex := &Extracted{Meta: Meta{Name: "kit", Version: "1.0.0"}}
	for p, c := range files {
		ex.Files = append(ex.Files, File{Path: p, Data: []byte(c)})
	}
	return ex, nil
}

func newCache(t *testing.T) *Cache {
	root, err := fsys.NewAbsPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Cache{Sys: fsys.NewRealSystem(fsys.RealSystemOptions{}), Root: root, Extract: jsonExtract}
}

func TestCacheRefetchesDamagedEntryAndRefusesMismatch(t *testing.T) {
	c := newCache(t)
	archive := []byte(`{"skills/pdf/SKILL.md":"hello"}`)
	e, err := c.Put(archive, "")
	if err != nil {
		t.Fatal(err)
	}
	lock := &lockfile.Package{Name: "kit", Version: "1.0.0", Checksum: Checksum(archive), Files: e.Files}
	fetches := 0
	fetch := func(context.Context) ([]byte, error) { fetches++; return archive, nil }

	got, err := c.Get(context.Background(), lock, fetch)
	if err != nil || got.Refetched || fetches != 0 {
		t.Fatalf("intact entry: %v refetched=%v fetches=%d", err, got != nil && got.Refetched, fetches)
	}

	// A hand edit in the cache is repaired from the cached archive.
	file := got.Dir.JoinName("skills").JoinName("pdf").JoinName("SKILL.md")
	if err := c.Sys.WriteFile(file, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad, _ := c.VerifyFiles(lock); len(bad) != 1 {
		t.Fatalf("VerifyFiles missed the edit: %v", bad)
	}
	got, err = c.Get(context.Background(), lock, fetch)
	if err != nil || !got.Refetched || fetches != 0 {
		t.Fatalf("damaged file: %v fetches=%d", err, fetches)
	}
	if data, _ := c.Sys.ReadFile(file); string(data) != "hello" {
		t.Fatalf("not repaired: %q", data)
	}

	// With the archive damaged too, the entry is fetched again.
	if err := c.Sys.WriteFile(c.entry(lock.Checksum).JoinName("archive.aam"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = c.Sys.WriteFile(file, []byte("tampered"), 0o644)
	if _, err := c.Get(context.Background(), lock, fetch); err != nil || fetches != 1 {
		t.Fatalf("damaged archive: %v fetches=%d", err, fetches)
	}

	// A registry serving other bytes is E_CHECKSUM_MISMATCH, and the cache is untouched.
	_ = c.Sys.RemoveAll(c.entry(lock.Checksum))
	evil := func(context.Context) ([]byte, error) { return []byte(`{"skills/pdf/SKILL.md":"evil"}`), nil }
	_, err = c.Get(context.Background(), lock, evil)
	if apperr.CodeOf(err) != apperr.ChecksumMismatch {
		t.Fatalf("mismatch: %v", err)
	}
	if _, err := c.Sys.Stat(c.entry(lock.Checksum)); err == nil {
		t.Fatal("a mismatching archive was cached")
	}

	// Offline with nothing cached: a clear error, not a fetch.
	_, err = c.Get(context.Background(), lock, nil)
	if apperr.CodeOf(err) != apperr.CacheCorrupted {
		t.Fatalf("offline: %v", err)
	}
	_, err = c.Get(context.Background(), lock, func(context.Context) ([]byte, error) { return nil, errors.New("down") })
	if err == nil {
		t.Fatal("fetch error swallowed")
	}
}
