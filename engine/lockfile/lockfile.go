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
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// FileName is the lockfile's name inside a desired-state repo.
const FileName = "agentpack.lock.json"

// Version is the only lockfile version this package reads and writes.
const Version = 1

// diskSystem is the real disk for the string-path functions. It fsyncs:
// the lockfile is written once per command and is what a user commits.
var diskSystem fsys.System = fsys.NewRealSystem(fsys.RealSystemOptions{Fsync: true})

// absPath types a path given as a string, resolving a relative one against
// the working directory as the os calls it replaces did.
func absPath(p string) (fsys.AbsPath, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", apperr.Wrap(err, apperr.IOInvalidPath, "cannot resolve %s: %v", p, err).With("path", p)
	}
	return fsys.NewAbsPath(abs)
}

// Lockfile is the parsed content of agentpack.lock.json.
type Lockfile struct {
	Version     int      `json:"version"`
	GeneratedAt string   `json:"generated_at"`
	Modules     []Module `json:"modules"`
	// Packages are the resolved packages (direct and transitive), sorted by
	// name; omitted when none are installed, so a lockfile without packages
	// stays byte-identical to the original tool's.
	Packages []Package `json:"packages,omitempty"`
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

// Load is [LoadOn] on the real disk. A relative path is resolved against
// the working directory.
func Load(path string) (*Lockfile, error) {
	p, err := absPath(path)
	if err != nil {
		return nil, err
	}
	return LoadOn(diskSystem, p)
}

// LoadOn reads and validates the lockfile at path through sys.
//
// A missing file is E_LOCKFILE_MISSING, unparsable JSON (or a missing or
// non-numeric version) is E_LOCKFILE_INVALID, and any version other than 1 is
// E_LOCKFILE_UNSUPPORTED_VERSION. The version is checked before the rest of
// the document, so a future lockfile with a different shape is reported as
// unsupported rather than invalid.
func LoadOn(sys fsys.System, path fsys.AbsPath) (*Lockfile, error) {
	raw, err := sys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.LockfileMissing, "missing lockfile: %s", path).
			WithHint("run `agentpack update` (or `agentpack lock`) to generate %s", FileName).
			With("path", path.String()).
			With("reason_code", "lockfile_missing").
			With("next_actions", []string{"run_lock", "run_update", "retry_command"})
	}
	if err != nil {
		return nil, ioError(err, "read lockfile %s", path)
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
			With("path", path.String()).
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
	if err := l.validatePackages(); err != nil {
		return nil, invalid(path, err)
	}
	return &l, nil
}

func invalid(path fsys.AbsPath, cause error) *apperr.Error {
	return apperr.Wrap(cause, apperr.LockfileInvalid, "invalid lockfile json: %s", path).
		WithHint("regenerate %s with `agentpack lock`", FileName).
		With("path", path.String()).
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

// Save is [Lockfile.SaveOn] on the real disk, fsynced. A relative path is
// resolved against the working directory.
func (l *Lockfile) Save(path string) error {
	p, err := absPath(path)
	if err != nil {
		return err
	}
	return l.SaveOn(diskSystem, p)
}

// SaveOn writes the lockfile to path through sys, whose WriteFile is atomic,
// with modules sorted by id and files sorted by path, a two-space indent and
// a trailing newline. l itself is not reordered.
func (l *Lockfile) SaveOn(sys fsys.System, path fsys.AbsPath) error {
	out, err := l.Marshal()
	if err != nil {
		return err
	}
	if err := sys.WriteFile(path, out, 0o644); err != nil {
		return ioError(err, "write lockfile %s", path)
	}
	return nil
}

// ioError puts what the lockfile code was doing in front of err, an error
// from a [fsys.System], keeping its code (E_IO_FAILED when it has none).
func ioError(err error, format string, path fsys.AbsPath) *apperr.Error {
	code := apperr.IOFailed
	var ae *apperr.Error
	if errors.As(err, &ae) {
		code = ae.Code
	} else if errors.Is(err, fs.ErrPermission) {
		code = apperr.IOPermissionDenied
	}
	e := apperr.Wrap(err, code, format, path).With("path", path.String())
	if ae != nil && ae.Hint != "" {
		e.Hint = ae.Hint
	}
	return e
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
	c.Packages = sortedPackages(l.Packages)
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
