package apply

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// write is one file operation of a transaction.
type write struct {
	change snapshots.FileChange
	// root and path are change.Root and change.Path.
	root, path fsys.AbsPath
	// data is the bytes written when they are held (manifests, state
	// files, restores); nil for a removal and when load reads them.
	data []byte
	// load reads the bytes to write of a file whose desired state kept
	// only their hash: read as the file is written and let go after, so a
	// deploy of ten thousand files never holds all their bytes.
	load   func() ([]byte, error)
	remove bool
	mode   fs.FileMode
	before []byte // the bytes it replaces (nil when the path is new)
	// beforeSaved: the bytes it replaces are in the pack already (a
	// rollback adds them as it reads them), so before is nil.
	beforeSaved bool
	// noop: the path already holds data. It is recorded (Before == After)
	// but not written.
	noop bool
	// shared marks a key-level file (a client's MCP config): its new text
	// was computed from the text plan read, and the client itself rewrites
	// the file at any time (Claude Code updates ~/.claude.json on every
	// start), so perform checks the file still holds those bytes first.
	shared bool
}

// bytes returns the bytes w writes.
func (w *write) bytes() ([]byte, error) {
	if w.load == nil {
		return w.data, nil
	}
	return w.load()
}

// transactionWrites turns a plan into the ordered writes of its transaction:
// target files, then the manifests recording them (the last nManifests).
// The bytes of a file the desired state kept only the hash of are read when
// it is written; their size is recorded then. The manifests are built
// first, from d.Desired, which is then let go of (d.Desired is nil after):
// the writes of the target files need only the plan, so the desired state
// can be freed before they are made.
func (wr *Writer) transactionWrites(d *Deployment, id string, now time.Time) (writes []write, nManifests int, err error) {
	manifests, err := wr.manifestWrites(*d, id, now)
	if err != nil {
		return nil, 0, err
	}
	d.Desired = nil
	changes := d.Plan.Changes
	if len(changes)+len(manifests) > 0 {
		// State changes only with an apply: a plan with nothing to do
		// records no snapshot just to rewrite the roots registry.
		manifests = append(manifests, wr.stateWrites(d.State)...)
	}
	writes = make([]write, 0, len(changes)+len(manifests))
	for _, c := range changes {
		w := write{change: snapshots.FileChange{Target: c.Target, Root: c.Root.String(), Path: c.Path.String(), Op: c.Op},
			root: c.Root, path: c.Path, shared: len(c.Entries) > 0}
		if c.BeforeSHA256 != nil {
			w.before = c.Before
			w.change.Before = &snapshots.Content{SHA256: *c.BeforeSHA256, Size: int64(len(c.Before)), Mode: uint32(wr.modeOf(c.Path))}
		}
		if c.Op == plan.OpDelete {
			w.remove = true
		} else {
			w.data, w.mode = c.After, c.Mode
			if c.After == nil {
				w.load = c.Load
			}
			w.change.After = &snapshots.Content{SHA256: *c.AfterSHA256, Size: int64(len(c.After)), Mode: uint32(c.Mode.Perm())}
		}
		writes = append(writes, w)
	}
	return append(writes, manifests...), len(manifests), nil
}

// stateWrites returns the writes of state files whose bytes change.
func (wr *Writer) stateWrites(files []StateFile) []write {
	var out []write
	for _, f := range files {
		before, err := wr.Sys.ReadFile(f.Path)
		has := err == nil
		if has && bytes.Equal(before, f.Data) {
			continue
		}
		w := write{change: snapshots.FileChange{Target: snapshots.StateTarget, Root: f.Path.Dir().String(), Path: f.Path.String(), Op: plan.OpCreate, Manifest: true},
			root: f.Path.Dir(), path: f.Path, data: f.Data, mode: 0o600}
		if has {
			w.before = before
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(f.Path))}
		}
		w.change.After = &snapshots.Content{SHA256: checksum.SHA256Hex(f.Data), Size: int64(len(f.Data)), Mode: 0o600}
		out = append(out, w)
	}
	return out
}

// relBelow is filepath.Rel(root, path) for a desired file's path, which
// compiling made clean: below root it is the rest of path, no new string.
func relBelow(root, path fsys.AbsPath) (string, error) {
	r, p := string(root), string(path)
	if len(p) > len(r)+1 && p[:len(r)] == r && p[len(r)] == filepath.Separator && r[len(r)-1] != filepath.Separator &&
		filepath.Clean(p) == p {
		return p[len(r)+1:], nil
	}
	return filepath.Rel(r, p)
}

// manifestWrites returns the manifest files whose content must change after
// applying d's plan: each root lists the desired files under it.
func (wr *Writer) manifestWrites(d Deployment, id string, now time.Time) ([]write, error) {
	p := d.Plan
	perRoot := map[desired.Root][]plan.ManagedFile{}
	var inPlan map[fsys.AbsPath]bool
	if d.Partial {
		inPlan = map[fsys.AbsPath]bool{}
		for _, c := range p.Changes {
			inPlan[c.Path] = true
		}
		for _, r := range d.Desired.Roots {
			if old := p.Manifests[r]; old != nil {
				for _, mf := range old.ManagedFiles {
					if !inPlan[mf.In(r.Path)] {
						key := desired.Root{Target: r.Target, Path: r.Path}
						perRoot[key] = append(perRoot[key], mf)
					}
				}
			}
		}
	}
	if !d.Partial {
		// Room for each root's files at once: appending 10,000 entries one
		// by one would copy them over and over.
		counts := map[desired.Root]int{}
		for _, f := range d.Desired.Files {
			counts[desired.Root{Target: f.Target, Path: f.Root}]++
		}
		for r, n := range counts {
			perRoot[r] = make([]plan.ManagedFile, 0, n)
		}
	}
	for _, f := range d.Desired.Files {
		if d.Partial && !inPlan[f.Path] {
			continue
		}
		r := desired.Root{Target: f.Target, Path: f.Root}
		rel, err := relBelow(f.Root, f.Path)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "path %s outside root %s", f.Path, f.Root)
		}
		mf := plan.ManagedFile{Path: filepath.ToSlash(rel), SHA256: f.SHA256, ModuleIDs: f.ModuleIDs}
		switch {
		case f.Keyed != nil:
			// A key-level file records the entries it owns, not its bytes.
			mf = p.KeyedRecord(mf.Path, f.Path, f.SHA256, f.ModuleIDs, f.Keyed)
		case f.Marked:
			mf.OwnedSHA256 = target.OwnedSHA256(f.Data)
		}
		perRoot[r] = append(perRoot[r], mf)
	}
	var out []write
	for _, root := range d.Desired.Roots {
		key := desired.Root{Target: root.Target, Path: root.Path}
		files := perRoot[key]
		old := p.Manifests[root]
		if len(files) == 0 && old == nil {
			continue
		}
		if old != nil && sameManaged(old.ManagedFiles, files) {
			continue
		}
		path := root.Path.JoinName(plan.TargetManifestName(root.Target))
		data := plan.RenderTargetManifest(root.Target, id, d.Profile, d.Repo, now, files)
		w := write{change: snapshots.FileChange{Target: root.Target, Root: root.Path.String(), Path: path.String(), Op: plan.OpCreate, Manifest: true},
			root: root.Path, path: path, data: data, mode: 0o644}
		if before, err := wr.Sys.ReadFile(path); err == nil {
			w.before = before
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(path))}
		}
		w.change.After = &snapshots.Content{SHA256: checksum.SHA256Hex(data), Size: int64(len(data)), Mode: 0o644}
		out = append(out, w)
	}
	// A stale root's manifest goes with the files it listed.
	for _, root := range d.Desired.Stale {
		if d.Partial || p.Manifests[root] == nil {
			continue
		}
		path := root.Path.JoinName(plan.TargetManifestName(root.Target))
		before, err := wr.Sys.ReadFile(path)
		if err != nil {
			continue
		}
		out = append(out, write{change: snapshots.FileChange{Target: root.Target, Root: root.Path.String(), Path: path.String(), Op: plan.OpDelete, Manifest: true,
			Before: &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(path))}},
			root: root.Path, path: path, before: before, remove: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

func sameManaged(a, b []plan.ManagedFile) bool {
	if len(a) != len(b) {
		return false
	}
	sort.Slice(b, func(i, j int) bool { return b[i].Path < b[j].Path })
	for i := range a {
		if a[i].Path != b[i].Path || a[i].SHA256 != b[i].SHA256 || a[i].OwnedSHA256 != b[i].OwnedSHA256 ||
			!slices.Equal(a[i].ModuleIDs, b[i].ModuleIDs) || a[i].Created != b[i].Created {
			return false
		}
	}
	return true
}
