package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/system"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/workers"
)

// Change ops, update kinds and reasons (SPEC §6).
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"

	UpdateManaged = "managed_update"
	UpdateAdopt   = "adopt_update"
	UpdateDrifted = "drifted_update"

	ReasonMissing   = "file missing"
	ReasonDiffers   = "content differs"
	ReasonUnmanaged = "would overwrite unmanaged existing file"
	ReasonNoLonger  = "no longer managed"
	ReasonEdited    = "edited since last deploy"
)

// Change is one file operation of a plan.
type Change struct {
	Target       string   `json:"target"`
	Op           string   `json:"op"`
	Path         string   `json:"path"`
	PathPosix    string   `json:"path_posix"`
	BeforeSHA256 *string  `json:"before_sha256"`
	AfterSHA256  *string  `json:"after_sha256"`
	UpdateKind   string   `json:"update_kind,omitempty"`
	Reason       string   `json:"reason"`
	ModuleIDs    []string `json:"module_ids"`

	// Root is the managed root holding Path.
	Root string `json:"-"`
	// Before is the current bytes (nil when the file does not exist).
	Before []byte `json:"-"`
	// After is the desired bytes for create/update.
	After []byte      `json:"-"`
	Mode  fs.FileMode `json:"-"`
}

// Summary counts changes by op.
type Summary struct {
	Create int `json:"create"`
	Update int `json:"update"`
	Delete int `json:"delete"`
}

// Plan is the pure-data result of comparing desired state with the disk.
type Plan struct {
	Profile string   `json:"profile"`
	Targets []string `json:"targets"`
	Changes []Change `json:"changes"`
	Summary Summary  `json:"summary"`

	// Manifests are the last-applied manifests per root (nil when absent).
	Manifests map[desired.Root]*TargetManifest `json:"-"`
	// Managed maps each last-applied absolute path to its manifest entry.
	Managed map[string]ManagedManifestFile `json:"-"`
	// Actual maps each path plan looked at and found to its sha256.
	Actual map[string]string `json:"-"`
}

// Hash identifies the plan's content; a confirm token binds to it.
func (p *Plan) Hash() string {
	h := sha256.New()
	modes := make([]fs.FileMode, len(p.Changes)) // not in the JSON, but part of what is confirmed
	for i, c := range p.Changes {
		modes[i] = c.Mode
	}
	b, _ := json.Marshal(struct {
		Profile string
		Targets []string
		Changes []Change
		Modes   []fs.FileMode
	}{p.Profile, p.Targets, p.Changes, modes})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// actual is what is on disk at a path. data is nil when the stat cache
// proved the file unchanged (then sha is set and equals the desired hash).
type actual struct {
	exists bool
	data   []byte
	sha    string
	mode   fs.FileMode
	err    error
}

// readActual reads path, refusing one reached through a link below root;
// when the stat cache vouches that the file still has hash want, it skips
// reading it.
func readActual(sys system.System, guard *linkGuard, cache *StatCache, root, path, want string) actual {
	if err := guard.check(root, path); err != nil {
		return actual{err: err}
	}
	fi, err := sys.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || system.IsNotDir(err) {
			return actual{}
		}
		return actual{err: system.IOError(err, path)}
	}
	if fi.IsDir() {
		return actual{err: apperr.New(apperr.IOInvalidPath, "%s is a directory where agentpack manages a file", path).
			WithHint("move the directory away").With("path", path)}
	}
	if sha, ok := cache.lookup(path, fi); ok && want != "" && sha == want {
		return actual{exists: true, sha: sha, mode: fi.Mode().Perm()}
	}
	data, err := sys.ReadFile(path)
	if err != nil {
		return actual{err: system.IOError(err, path)}
	}
	sha := checksum.SHA256Hex(data)
	cache.record(path, fi, sha)
	return actual{exists: true, data: data, sha: sha, mode: fi.Mode().Perm()}
}

// ComputePlan compares st's desired state with what sys shows. cache may be
// nil.
func ComputePlan(st *State, sys system.System, cache *StatCache) (*Plan, error) {
	d := st.Desired
	p := &Plan{Profile: st.Profile, Targets: append([]string{}, d.Targets...), Changes: []Change{}, Manifests: map[desired.Root]*TargetManifest{}, Actual: map[string]string{}}
	managed := map[string]ManagedManifestFile{} // abs path → last applied
	p.Managed = managed
	managedTarget := map[string]desired.Root{}
	tracked := newGitTracked(sys, st.Project)
	for _, r := range append(append([]desired.Root{}, d.Roots...), d.Stale...) {
		m := readTargetManifest(sys, tracked, r.Path, r.Target, func(w string) { st.Warn("%s", w) })
		p.Manifests[r] = m
		if m == nil {
			continue
		}
		for _, f := range m.ManagedFiles {
			abs := filepath.Join(r.Path, filepath.FromSlash(f.Path))
			// The deepest root wins when roots nest (a project root holding .agents/skills).
			if prev, ok := managedTarget[abs]; ok && len(prev.Path) > len(r.Path) {
				continue
			}
			managed[abs] = f
			managedTarget[abs] = r
		}
	}

	var err error
	actuals := make([]actual, len(d.Files))
	guard := newLinkGuard(sys)
	workers.Parallel(len(d.Files), func(i int) {
		f := d.Files[i]
		actuals[i] = readActual(sys, guard, cache, f.Root, f.Path, f.SHA256)
	})
	for i, f := range d.Files {
		a := actuals[i]
		if a.err != nil {
			return nil, a.err
		}
		after := f.SHA256
		c := Change{Target: f.Target, Path: f.Path, PathPosix: filepath.ToSlash(f.Path), AfterSHA256: &after,
			ModuleIDs: f.ModuleIDs, Root: f.Root, After: f.Data, Mode: f.Mode}
		if !a.exists {
			c.Op, c.Reason = OpCreate, ReasonMissing
			p.Changes = append(p.Changes, c)
			continue
		}
		p.Actual[f.Path] = a.sha
		if a.sha == f.SHA256 && (a.mode&0o111 == f.Mode&0o111) {
			continue
		}
		before := a.sha
		if a.data == nil { // the stat cache skipped the read; diffs need the bytes
			if a.data, err = sys.ReadFile(f.Path); err != nil {
				return nil, system.IOError(err, f.Path)
			}
		}
		c.Op, c.BeforeSHA256, c.Before, c.Reason = OpUpdate, &before, a.data, ReasonDiffers
		last, isManaged := managed[f.Path]
		switch {
		case !isManaged:
			c.UpdateKind, c.Reason = UpdateAdopt, ReasonUnmanaged
		case last.SHA256 == before:
			c.UpdateKind = UpdateManaged
		default:
			// SPEC §6: the update kind says "edited by hand"; the reason stays
			// one of the update reasons.
			c.UpdateKind = UpdateDrifted
		}
		p.Changes = append(p.Changes, c)
	}

	var stale []string
	staleRoot := map[desired.Root]bool{}
	for _, r := range d.Stale {
		staleRoot[r] = true
	}
	for abs := range managed {
		r := managedTarget[abs]
		if d.File(abs) == nil && (slices.Contains(d.Targets, r.Target) || staleRoot[r]) {
			stale = append(stale, abs)
		}
	}
	sort.Strings(stale)
	staleActual := make([]actual, len(stale))
	workers.Parallel(len(stale), func(i int) { staleActual[i] = readActual(sys, guard, nil, managedTarget[stale[i]].Path, stale[i], "") })
	for i, abs := range stale {
		a := staleActual[i]
		if apperr.CodeOf(a.err) == apperr.IOInvalidPath {
			// A manifest entry reached through a link is never deleted, and
			// never skipped silently either.
			return nil, a.err
		}
		if a.err != nil || !a.exists {
			continue
		}
		p.Actual[abs] = a.sha
		last, r := managed[abs], managedTarget[abs]
		before := a.sha
		c := Change{Target: r.Target, Op: OpDelete, Path: abs, PathPosix: filepath.ToSlash(abs), BeforeSHA256: &before,
			Reason: ReasonNoLonger, ModuleIDs: nonNil(last.ModuleIDs), Root: r.Path, Before: a.data}
		if last.SHA256 != before {
			c.Reason = ReasonEdited
		}
		p.Changes = append(p.Changes, c)
	}
	sortChanges(p.Changes)
	for _, c := range p.Changes {
		switch c.Op {
		case OpCreate:
			p.Summary.Create++
		case OpUpdate:
			p.Summary.Update++
		case OpDelete:
			p.Summary.Delete++
		}
	}
	return p, nil
}

func sortChanges(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Target != cs[j].Target {
			return cs[i].Target < cs[j].Target
		}
		return cs[i].Path < cs[j].Path
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
