// Package snapshots stores agentpack's apply history: snapshot records and the
// bytes they saved, the in-flight apply journal, and the cross-process lock.
//
// It is pure storage. It never writes target files: the engine executes
// restores through its own filesystem layer using the [Restore] values that
// [RestoreTo] and [RestoreLast] compute from [Record] values.
//
// Layout under the state directory (SPEC §2):
//
//	snapshots/<id>.json    one Record per apply or rollback
//	snapshots/<id>/<sha>   the bytes that Record saved, named by SHA-256
//	journal.json           the Journal of an apply in flight (or crashed)
//	lock, lock.holder      the flock and who holds it
package snapshots

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentpack/agentpack/internal/checksum"
)

// Kinds of [Record].
const (
	KindDeploy   = "deploy"
	KindRollback = "rollback"
)

// Operations of a [FileChange].
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Content identifies saved bytes.
type Content struct {
	SHA256 string `json:"sha256"`
	Mode   uint32 `json:"mode"`
	Size   int64  `json:"size"`
	// Delta, when set, says the snapshot saved these bytes not whole but as
	// a change against other bytes of the same path (records of
	// [RecordSchemaVersion] 2; [Contents] rebuilds them).
	Delta *DeltaRef `json:"delta,omitempty"`
}

// DeltaRef names the saved delta ([ComputeDelta]) that rebuilds a
// [Content] from its base.
type DeltaRef struct {
	// Base is the SHA-256 of the bytes the delta applies to: the other side
	// of the same change, or what the disk or another snapshot holds.
	Base string `json:"base"`
	// SHA256 names the delta blob in the snapshot's saved bytes.
	SHA256 string `json:"sha256"`
}

// Plain returns a copy of c without its delta, for a new record that saves
// the bytes itself; nil stays nil.
func (c *Content) Plain() *Content {
	if c == nil {
		return nil
	}
	p := *c
	p.Delta = nil
	return &p
}

// RecordSchemaVersion is the version of the records [Store.Save] writes.
// Version 1 (records without schema_version) saves every Before and After
// whole; version 2 may save a target manifest's as a delta ([DeltaRef]).
// Both are read.
const RecordSchemaVersion = 2

// StateTarget is the target name of agentpack's own state files (the roots
// registry) in records and journals: they are written, recovered and
// rolled back with the manifests, but belong to no client.
const StateTarget = "agentpack"

// FileChange is one path an apply touched.
type FileChange struct {
	Target string `json:"target"`
	// Root is the target root the path belongs to; absolute, OS-native.
	Root string `json:"root"`
	// Path is absolute and OS-native.
	Path string `json:"path"`
	// Op is one of create, update or delete.
	Op string `json:"op"`
	// Before is nil when the file did not exist before.
	Before *Content `json:"before"`
	// After is nil when the file does not exist after.
	After *Content `json:"after"`
	// Manifest marks a .agentpack.manifest.<target>.json file.
	Manifest bool `json:"manifest,omitempty"`
}

// Record is the stored history of one apply (kind deploy) or one rollback
// (kind rollback).
type Record struct {
	// SchemaVersion is [RecordSchemaVersion] (0 in version 1 records).
	SchemaVersion int       `json:"schema_version,omitempty"`
	ID            string    `json:"id"`
	Kind          string    `json:"kind"`
	CreatedAt     time.Time `json:"created_at"`
	Command       string    `json:"command,omitempty"`
	Profile       string    `json:"profile,omitempty"`
	Targets       []string  `json:"targets"`
	Machine       string    `json:"machine,omitempty"`
	// Repo and Project are the desired-state repo and the project folder a
	// deploy ran for (empty for rollbacks).
	Repo    string `json:"repo,omitempty"`
	Project string `json:"project,omitempty"`
	// RolledBackTo is set for kind rollback; nil means "the state before the
	// first snapshot".
	RolledBackTo *string      `json:"rolled_back_to,omitempty"`
	Files        []FileChange `json:"files"`
	// CreatedDirs are the folders this apply created, so rolling it back can
	// remove them again once they are empty.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// Validate reports the first structural problem of r: an invalid id, an
// unknown kind or op, a bad hash, an op that disagrees with Before/After, or
// the same (target, path) twice.
func (r *Record) Validate() error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	if r.SchemaVersion < 0 || r.SchemaVersion > RecordSchemaVersion {
		return fmt.Errorf("schema_version %d is not supported (this agentpack reads up to %d): it was written by a newer agentpack", r.SchemaVersion, RecordSchemaVersion)
	}
	if r.Kind != KindDeploy && r.Kind != KindRollback {
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	// Sorted as saved, a path listed twice is next to itself: no map of
	// every path (770 KB at 10,000 files) is made to find it.
	if err := FilesOf(r.Files).validate(); !errors.Is(err, errFilesUnsorted) {
		return err
	}
	seen := make(map[fileKey]bool, len(r.Files))
	for i := range r.Files {
		f := &r.Files[i]
		if err := f.validate(); err != nil {
			return fmt.Errorf("file %d (%s): %w", i, f.Path, err)
		}
		k := fileKey{f.Target, f.Path}
		if seen[k] {
			return fmt.Errorf("file %s of target %s is listed twice", f.Path, f.Target)
		}
		seen[k] = true
	}
	return nil
}

// Files are the files of a record or a journal made one at a time by At
// (as a deploy makes them from its writes), so 100,000 of them are checked
// and written without a list of them ([Store.SaveFiles],
// [Store.WriteJournalFiles]).
type Files struct {
	N  int
	At func(i int) FileChange
}

// FilesOf is the Files of list.
func FilesOf(list []FileChange) Files {
	return Files{N: len(list), At: func(i int) FileChange { return list[i] }}
}

// elems makes the files as jsonstream writes an array's elements: each in
// one value, written before the next is made.
func (fl Files) elems() func(i int) any {
	var f FileChange
	return func(i int) any {
		f = fl.At(i)
		return &f
	}
}

// collect is the files as a list.
func (fl Files) collect() []FileChange {
	out := make([]FileChange, fl.N)
	for i := range out {
		out[i] = fl.At(i)
	}
	return out
}

// errFilesUnsorted is [Files.validate]'s answer for files not in the
// order [Store.Save] writes them.
var errFilesUnsorted = errors.New("files are not sorted")

// validate checks each of the files and that no path is listed twice,
// in one pass: sorted, a path listed twice is next to itself. Files out
// of order are errFilesUnsorted (unless a file before that is invalid),
// for the caller to check another way.
func (fl Files) validate() error {
	var prev FileChange
	for i := range fl.N {
		f := fl.At(i)
		if err := f.validate(); err != nil {
			return fmt.Errorf("file %d (%s): %w", i, f.Path, err)
		}
		if i > 0 {
			switch c := compareFiles(prev, f); {
			case c == 0:
				return fmt.Errorf("file %s of target %s is listed twice", f.Path, f.Target)
			case c > 0:
				return errFilesUnsorted
			}
		}
		prev = f
	}
	return nil
}

// fileKey identifies a path on disk as one target sees it.
type fileKey struct{ target, path string }

func (f *FileChange) validate() error {
	if f.Target == "" || f.Path == "" {
		return fmt.Errorf("target and path are required")
	}
	if err := f.validatePaths(); err != nil {
		return err
	}
	for _, c := range []*Content{f.Before, f.After} {
		if c != nil && !isSHA256(c.SHA256) {
			return fmt.Errorf("invalid sha256 %q", c.SHA256)
		}
		if c != nil && c.Delta != nil && (!isSHA256(c.Delta.Base) || !isSHA256(c.Delta.SHA256)) {
			return fmt.Errorf("invalid delta of %s", c.SHA256)
		}
	}
	switch f.Op {
	case OpCreate:
		if f.Before != nil || f.After == nil {
			return fmt.Errorf("create needs no before and an after")
		}
	case OpUpdate:
		if f.Before == nil || f.After == nil {
			return fmt.Errorf("update needs a before and an after")
		}
	case OpDelete:
		if f.Before == nil || f.After != nil {
			return fmt.Errorf("delete needs a before and no after")
		}
	default:
		return fmt.Errorf("unknown op %q", f.Op)
	}
	return nil
}

// isSHA256 reports whether s is 64 lowercase hex digits.
func isSHA256(s string) bool { return len(s) == 64 && checksum.IsLowerHex(s) }

// validatePaths checks that Root is a clean absolute path and Path a clean
// path strictly inside it: a record (or journal) edited to name
// "/root/../home/u/.bashrc" is damaged, never followed.
func (f *FileChange) validatePaths() error {
	if filepath.Separator == '/' && cleanBelow(f.Root, f.Path) {
		return nil
	}
	return checkPaths(f.Root, f.Path)
}

// checkPaths is validatePaths the long way.
func checkPaths(root, path string) error {
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return fmt.Errorf("root %q is not a clean absolute path", root)
	}
	if filepath.Clean(path) != path {
		return fmt.Errorf("path %q is not clean", path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("path %q is not inside its root %q", path, root)
	}
	return nil
}

// cleanBelow is the common case of validatePaths without its Clean and
// Rel, which were a third of the time a record of 10,000 files took to
// save: on a system whose only separator is '/', root is "/" or "/" and
// clean elements, and path is root, '/' and clean elements. False is not
// an answer: validatePaths then checks the long way.
func cleanBelow(root, path string) bool {
	if len(root) == 0 || root[0] != '/' || len(path) <= len(root) || path[:len(root)] != root {
		return false
	}
	rest := path[len(root):]
	if root != "/" {
		if rest[0] != '/' || !cleanElements(root[1:]) {
			return false
		}
		rest = rest[1:]
	}
	return cleanElements(rest)
}

// cleanElements reports whether s is one or more '/'-separated elements,
// none empty, "." or "..".
func cleanElements(s string) bool {
	for {
		elem, more, found := strings.Cut(s, "/")
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
		if !found {
			return true
		}
		s = more
	}
}
