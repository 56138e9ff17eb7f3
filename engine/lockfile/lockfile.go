// Package lockfile reads and writes agentpack.lock.json, the file that pins
// every module's resolved source and content hashes.
//
// The format is the one the original Rust agentpack writes (version 1), so a
// lockfile produced by either tool is read by the other: the same keys in the
// same order, modules sorted by id, files sorted by path, two-space indent and
// a trailing newline.
package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/google/renameio/v2/maybe"
)

// FileName is the lockfile's name inside a desired-state repo.
const FileName = "agentpack.lock.json"

// Version is the only lockfile version this package reads and writes.
const Version = 1

// Lockfile is the parsed content of agentpack.lock.json.
type Lockfile struct {
	Version     int      `json:"version"`
	GeneratedAt string   `json:"generated_at"`
	Modules     []Module `json:"modules"`
}

// Module is one locked module.
type Module struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"`
	ResolvedSource ResolvedSource `json:"resolved_source"`
	// ResolvedVersion is "local" for local_path sources, the commit SHA for
	// git sources and the exact version for package sources.
	ResolvedVersion string `json:"resolved_version"`
	// SHA256 is [ModuleHash] of FileManifest.
	SHA256       string `json:"sha256"`
	FileManifest []File `json:"file_manifest"`
}

// ResolvedSource says where a locked module's bytes came from. Exactly one
// field is set.
//
// local_path and git are always written (null when unset) because that is
// what the original tool writes, which keeps lockfiles byte-identical across
// the two tools; package is an agentpack extension and is omitted when unset.
type ResolvedSource struct {
	LocalPath *LocalPathSource `json:"local_path"`
	Git       *GitSource       `json:"git"`
	Package   *PackageSource   `json:"package,omitempty"`
}

// LocalPathSource is a module folder or file inside the desired-state repo.
type LocalPathSource struct {
	// Path is repo-relative and uses '/' separators.
	Path string `json:"path"`
}

// GitSource is a module inside a pinned git commit.
type GitSource struct {
	URL    string `json:"url"`
	Commit string `json:"commit"`
	Subdir string `json:"subdir"`
	// Ref is the ref agentpack.yaml named when the commit was pinned, so
	// `lock` can keep pins whose ref did not change (an additive field the
	// original tool ignores).
	Ref string `json:"ref,omitempty"`
}

// PackageSource is an artifact inside a pinned package version.
type PackageSource struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Artifact string `json:"artifact,omitempty"`
	Registry string `json:"registry,omitempty"`
	// ArchiveSHA256 is the archive checksum as "sha256:<hex>".
	ArchiveSHA256 string `json:"archive_sha256,omitempty"`
}

// New returns an empty version-1 lockfile stamped with the current UTC time.
func New() *Lockfile {
	return &Lockfile{
		Version:     Version,
		GeneratedAt: time.Now().UTC().Format(time.RFC3339),
		Modules:     []Module{},
	}
}

// Load reads and validates the lockfile at path.
//
// A missing file is E_LOCKFILE_MISSING, unparsable JSON (or a missing or
// non-numeric version) is E_LOCKFILE_INVALID, and any version other than 1 is
// E_LOCKFILE_UNSUPPORTED_VERSION. The version is checked before the rest of
// the document, so a future lockfile with a different shape is reported as
// unsupported rather than invalid.
func Load(path string) (*Lockfile, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.LockfileMissing, "missing lockfile: %s", path).
			WithHint("run `agentpack update` (or `agentpack lock`) to generate %s", FileName).
			With("path", path).
			With("reason_code", "lockfile_missing").
			With("next_actions", []string{"run_lock", "run_update", "retry_command"})
	}
	if err != nil {
		code := apperr.IOFailed
		if errors.Is(err, fs.ErrPermission) {
			code = apperr.IOPermissionDenied
		}
		return nil, apperr.Wrap(err, code, "read lockfile %s", path).With("path", path)
	}

	var probe struct {
		Version *json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, invalid(path, err)
	}
	if probe.Version == nil {
		return nil, invalid(path, errors.New(`missing field "version"`))
	}
	var version int
	if err := json.Unmarshal(*probe.Version, &version); err != nil {
		return nil, invalid(path, errors.New(`"version" must be an integer`))
	}
	if version != Version {
		return nil, apperr.New(apperr.LockfileUnsupported, "unsupported lockfile version: %d", version).
			WithHint("upgrade agentpack or regenerate %s with `agentpack lock`", FileName).
			With("path", path).
			With("version", version).
			With("supported", []int{Version}).
			With("reason_code", "lockfile_unsupported_version").
			With("next_actions", []string{"upgrade_agentpack", "regenerate_lockfile", "retry_command"})
	}

	var l Lockfile
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, invalid(path, err)
	}
	if err := l.validate(); err != nil {
		return nil, invalid(path, err)
	}
	if l.Modules == nil {
		l.Modules = []Module{}
	}
	return &l, nil
}

func invalid(path string, cause error) *apperr.Error {
	return apperr.Wrap(cause, apperr.LockfileInvalid, "invalid lockfile json: %s", path).
		WithHint("regenerate %s with `agentpack lock`", FileName).
		With("path", path).
		With("error", cause.Error()).
		With("reason_code", "lockfile_invalid_json").
		With("next_actions", []string{"regenerate_lockfile", "retry_command"})
}

// validate checks what JSON decoding cannot: required strings and sizes.
func (l *Lockfile) validate() error {
	for i, m := range l.Modules {
		if m.ID == "" {
			return fmt.Errorf("modules[%d]: missing id", i)
		}
		for j, f := range m.FileManifest {
			if f.Path == "" || f.Bytes < 0 {
				return fmt.Errorf("modules[%d] (%s): file_manifest[%d] needs a path and bytes >= 0", i, m.ID, j)
			}
		}
	}
	return nil
}

// Save writes the lockfile to path atomically (temp file + rename), with
// modules sorted by id and files sorted by path, a two-space indent and a
// trailing newline. l itself is not reordered.
func (l *Lockfile) Save(path string) error {
	out, err := l.Marshal()
	if err != nil {
		return err
	}
	if err := maybe.WriteFile(path, out, 0o644); err != nil {
		code := apperr.IOFailed
		if errors.Is(err, fs.ErrPermission) {
			code = apperr.IOPermissionDenied
		}
		return apperr.Wrap(err, code, "write lockfile %s", path).With("path", path)
	}
	return nil
}

// Marshal returns the exact bytes [Lockfile.Save] writes.
func (l *Lockfile) Marshal() ([]byte, error) {
	c := l.sorted()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// The original tool writes '<', '>' and '&' verbatim; so do we.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "encode lockfile")
	}
	return buf.Bytes(), nil
}

// sorted returns a copy in canonical order with no nil slices (which would
// encode as null instead of []).
func (l *Lockfile) sorted() *Lockfile {
	c := *l
	c.Modules = make([]Module, len(l.Modules))
	for i, m := range l.Modules {
		m.FileManifest = SortFiles(m.FileManifest)
		c.Modules[i] = m
	}
	slices.SortStableFunc(c.Modules, func(a, b Module) int { return strings.Compare(a.ID, b.ID) })
	return &c
}

// Find returns the module with the given id, or nil.
func (l *Lockfile) Find(id string) *Module {
	for i := range l.Modules {
		if l.Modules[i].ID == id {
			return &l.Modules[i]
		}
	}
	return nil
}

// Upsert replaces the module with m's id, or appends m, and keeps modules
// sorted by id.
func (l *Lockfile) Upsert(m Module) {
	if old := l.Find(m.ID); old != nil {
		*old = m
		return
	}
	l.Modules = append(l.Modules, m)
	slices.SortStableFunc(l.Modules, func(a, b Module) int { return strings.Compare(a.ID, b.ID) })
}

// Remove deletes the module with the given id and reports whether it existed.
func (l *Lockfile) Remove(id string) bool {
	n := len(l.Modules)
	l.Modules = slices.DeleteFunc(l.Modules, func(m Module) bool { return m.ID == id })
	return len(l.Modules) != n
}
