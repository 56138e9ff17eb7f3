// Package pkgcache is the content-addressed cache of package archives,
// `cache/packages/<sha256>/`, keyed by the archive's checksum.
//
// An entry holds the archive itself (archive.aam), its extracted files
// (files/) and what the engine needs to know about it (meta.json). Every use
// verifies the files against the lockfile's hashes; a damaged entry is
// rebuilt from the cached archive when that still has the locked checksum,
// else fetched again. An archive whose checksum differs from the lock is
// E_CHECKSUM_MISMATCH and is never used.
package pkgcache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Artifact is one artifact of a cached package.
type Artifact struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
}

// Meta is what a cache entry records about its package.
type Meta struct {
	Name         string                `json:"name"`
	Version      string                `json:"version"`
	Description  string                `json:"description,omitempty"`
	Artifacts    map[string][]Artifact `json:"artifacts"` // skills, agents, prompts, instructions, commands, mcp
	Dependencies map[string]string     `json:"dependencies,omitempty"`
}

// File is one extracted file of an archive.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// Extracted is an archive taken apart (in memory; nothing written).
type Extracted struct {
	Meta  Meta
	Files []File
}

// Extractor takes an archive apart with every hostile-input check.
type Extractor func(archive []byte) (*Extracted, error)

// Fetcher downloads the archive of a locked package.
type Fetcher func(ctx context.Context) ([]byte, error)

// Cache is the package cache under Root, read and written through Sys.
type Cache struct {
	Sys     fsys.System
	Root    fsys.AbsPath
	Extract Extractor
}

// Entry is a verified cache entry.
type Entry struct {
	Dir   fsys.AbsPath // the extracted files
	Meta  Meta
	Files []lockfile.PackageFile
	// Refetched says the entry was rebuilt (damaged or missing).
	Refetched bool
}

// Checksum returns "sha256:<hex>" of data.
func Checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (c *Cache) entry(sum string) fsys.AbsPath {
	return c.Root.JoinName(strings.TrimPrefix(sum, "sha256:"))
}

// Put verifies archive against want (when want is not empty), extracts it
// and stores it; it returns the entry. An existing intact entry is reused.
func (c *Cache) Put(archive []byte, want string) (*Entry, error) {
	sum := Checksum(archive)
	if want != "" && sum != want {
		return nil, mismatch(want, sum)
	}
	ex, err := c.Extract(archive)
	if err != nil {
		return nil, err
	}
	files := make([]lockfile.PackageFile, 0, len(ex.Files))
	for _, f := range ex.Files {
		h := sha256.Sum256(f.Data)
		files = append(files, lockfile.PackageFile{Path: f.Path, SHA256: hex.EncodeToString(h[:])})
	}
	dir := c.entry(sum)
	if e, err := c.verify(dir, files); err == nil {
		return e, nil
	}
	tmp := c.Root.JoinName(".tmp-" + randHex())
	if err := c.write(tmp, archive, ex); err != nil {
		_ = c.Sys.RemoveAll(tmp)
		return nil, err
	}
	if err := c.Sys.RemoveAll(dir); err != nil {
		_ = c.Sys.RemoveAll(tmp)
		return nil, ioErr(err, "replace damaged cache entry %s", dir)
	}
	if err := c.Sys.Rename(tmp, dir); err != nil {
		_ = c.Sys.RemoveAll(tmp)
		return nil, ioErr(err, "store cache entry %s", dir)
	}
	return &Entry{Dir: dir.JoinName("files"), Meta: ex.Meta, Files: files}, nil
}

func (c *Cache) write(tmp fsys.AbsPath, archive []byte, ex *Extracted) error {
	if err := c.Sys.MkdirAll(tmp.JoinName("files"), 0o755); err != nil {
		return ioErr(err, "create cache entry %s", tmp)
	}
	if err := c.Sys.WriteFile(tmp.JoinName("archive.aam"), archive, 0o644); err != nil {
		return ioErr(err, "write %s", tmp)
	}
	meta, _ := json.MarshalIndent(ex.Meta, "", "  ")
	if err := c.Sys.WriteFile(tmp.JoinName("meta.json"), meta, 0o644); err != nil {
		return ioErr(err, "write %s", tmp)
	}
	for _, f := range ex.Files {
		rp, err := fsys.NewRelPath(f.Path)
		if err != nil {
			return err
		}
		p := tmp.JoinName("files").Join(rp)
		if err := c.Sys.MkdirAll(p.Dir(), 0o755); err != nil {
			return ioErr(err, "create %s", p.Dir())
		}
		mode := fs.FileMode(0o644)
		if f.Mode&0o111 != 0 {
			mode = 0o755
		}
		if err := c.Sys.WriteFile(p, f.Data, mode); err != nil {
			return ioErr(err, "write %s", p)
		}
	}
	return nil
}

// Get returns the verified entry of the locked package p: the cached files
// when they match the lock, else the entry rebuilt from the cached archive,
// else from fetch. The archive must have p's checksum (E_CHECKSUM_MISMATCH
// otherwise, and nothing is used).
func (c *Cache) Get(ctx context.Context, p *lockfile.Package, fetch Fetcher) (*Entry, error) {
	dir := c.entry(p.Checksum)
	if e, err := c.verify(dir, p.Files); err == nil && e.Meta.Name == p.Name && e.Meta.Version == p.Version {
		return e, nil
	}
	if archive, err := c.Sys.ReadFile(dir.JoinName("archive.aam")); err == nil && Checksum(archive) == p.Checksum {
		if e, err := c.Put(archive, p.Checksum); err == nil {
			if err := sameFiles(p, e); err != nil {
				return nil, err
			}
			e.Refetched = true
			return e, nil
		}
	}
	if fetch == nil {
		return nil, apperr.New(apperr.CacheCorrupted, "package %s@%s is not in the cache and cannot be fetched offline", p.Name, p.Version).
			WithHint("run `agentpack install` with the registry reachable").With("package", p.Name)
	}
	archive, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	e, err := c.Put(archive, p.Checksum)
	if err != nil {
		if ae := apperr.As(err); ae.Code == apperr.ChecksumMismatch {
			ae.Message = p.Name + "@" + p.Version + ": " + ae.Message
			ae.With("package", p.Name)
		}
		return nil, err
	}
	if err := sameFiles(p, e); err != nil {
		return nil, err
	}
	e.Refetched = true
	return e, nil
}

// sameFiles checks that a freshly extracted entry has exactly the locked
// file hashes (an archive with the locked checksum always does, unless the
// lock itself was edited).
func sameFiles(p *lockfile.Package, e *Entry) error {
	if len(p.Files) == 0 {
		return nil
	}
	want := map[string]string{}
	for _, f := range p.Files {
		want[f.Path] = f.SHA256
	}
	for _, f := range e.Files {
		if want[f.Path] != f.SHA256 {
			return apperr.New(apperr.ChecksumMismatch, "%s@%s: file %s does not match the lockfile", p.Name, p.Version, f.Path).
				WithHint("the lockfile was edited by hand; reinstall the package with `agentpack install --force %s`", p.Name).
				With("package", p.Name).With("path", f.Path)
		}
		delete(want, f.Path)
	}
	for f := range want {
		return apperr.New(apperr.ChecksumMismatch, "%s@%s: file %s is in the lockfile but not in the archive", p.Name, p.Version, f).
			WithHint("reinstall the package with `agentpack install --force %s`", p.Name).With("package", p.Name).With("path", f)
	}
	return nil
}

// verify reads an entry and checks its files against files.
func (c *Cache) verify(dir fsys.AbsPath, files []lockfile.PackageFile) (*Entry, error) {
	raw, err := c.Sys.ReadFile(dir.JoinName("meta.json"))
	if err != nil {
		return nil, err
	}
	var meta Meta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	for _, f := range files {
		rp, err := fsys.NewRelPath(f.Path)
		if err != nil {
			return nil, err
		}
		data, err := c.Sys.ReadFile(dir.JoinName("files").Join(rp))
		if err != nil {
			return nil, err
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != f.SHA256 {
			return nil, apperr.New(apperr.CacheCorrupted, "cached %s differs from the lockfile", f.Path)
		}
	}
	return &Entry{Dir: dir.JoinName("files"), Meta: meta, Files: files}, nil
}

// VerifyFiles reports the locked files whose cached bytes are missing or
// differ, as paths; an empty list means the entry is intact.
func (c *Cache) VerifyFiles(p *lockfile.Package) (bad []string, present bool) {
	dir := c.entry(p.Checksum).JoinName("files")
	if _, err := c.Sys.Stat(dir); err != nil {
		return nil, false
	}
	for _, f := range p.Files {
		rp, err := fsys.NewRelPath(f.Path)
		var data []byte
		if err == nil {
			data, err = c.Sys.ReadFile(dir.Join(rp))
		}
		h := sha256.Sum256(data)
		if err != nil || hex.EncodeToString(h[:]) != f.SHA256 {
			bad = append(bad, f.Path)
		}
	}
	return bad, true
}

func mismatch(want, got string) *apperr.Error {
	return apperr.New(apperr.ChecksumMismatch, "archive checksum %s does not match the expected %s", got, want).
		WithHint("the archive changed since it was locked; nothing was deployed. Check the registry, or reinstall with --force to accept the new archive").
		With("expected", want).With("actual", got)
}

func ioErr(err error, format string, p fsys.AbsPath) error {
	if ae, ok := err.(*apperr.Error); ok {
		return ae
	}
	return apperr.Wrap(err, apperr.IOFailed, format, p).With("path", p.String())
}

func randHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
