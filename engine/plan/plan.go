// Package plan decides: it compares the desired state with what is on disk
// and with what the target manifests say was last applied (three-way), and
// returns a [Plan], pure data that apply carries out. It also owns what plan
// reads to decide: the target manifests, the stat cache, the git index of
// the project and the link guard.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
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
	Target       string       `json:"target"`
	Op           string       `json:"op"`
	Path         fsys.AbsPath `json:"path"`
	PathPosix    string       `json:"path_posix"`
	BeforeSHA256 *string      `json:"before_sha256"`
	AfterSHA256  *string      `json:"after_sha256"`
	UpdateKind   string       `json:"update_kind,omitempty"`
	Reason       string       `json:"reason"`
	ModuleIDs    []string     `json:"module_ids"`
	// Entries, for a key-level file, say what happens to each entry agentpack
	// writes or owns there (see keyed.go); the file-level fields describe the
	// whole file that apply writes.
	Entries []EntryChange `json:"entries,omitempty"`

	// Root is the managed root holding Path.
	Root fsys.AbsPath `json:"-"`
	// Bytes holds the bytes the change carries, nil when it carries none:
	// most changes of a large plan (a created module file's bytes are read
	// from Src when written), which so hold no two empty slices each.
	Bytes *ChangeBytes `json:"-"`
	Mode  fs.FileMode  `json:"-"`
	// srcTail and srcDir name the source file holding After's bytes for a
	// file whose desired state keeps only its hash (AfterSHA256), as the
	// desired file does ([desired.File.Src]): the folder its module's
	// files share, then the last srcTail bytes of Path. A path, not a
	// function reading it, and not a string made for each of 100,000
	// creates ([Change.Src]).
	srcTail uint16
	// beforePerm is, with knownPerm set, the permission bits of the file
	// the change replaces or removes as the plan found it, for the
	// snapshot's record ([Change.BeforePerm]): not a look at every file a
	// deploy of updates replaces. It fits where Change had padding.
	beforePerm uint16
	srcDir     fsys.AbsPath
}

// knownPerm marks beforePerm as set: permission bits use 12 of its 16.
const knownPerm = 1 << 15

// BeforePerm is the permission bits of the file the change replaces or
// removes as the plan found it; ok is false when the plan did not say.
func (c *Change) BeforePerm() (perm fs.FileMode, ok bool) {
	return fs.FileMode(c.beforePerm &^ knownPerm), c.beforePerm&knownPerm != 0
}

// replaces makes c an update or removal (op) of the file the plan found
// with hash before and mode.
func (c *Change) replaces(op, before string, mode fs.FileMode) {
	c.Op, c.BeforeSHA256 = op, &before
	c.beforePerm = uint16(mode.Perm()) | knownPerm
}

// Src is the source file holding the change's After bytes when the plan
// keeps only their hash, or "" (see [Plan.AfterBytes]). It is a new string
// each call unless the source folder is the whole path.
func (c *Change) Src() fsys.AbsPath {
	if c.srcTail == 0 {
		return c.srcDir
	}
	return c.srcDir + c.Path[len(c.Path)-int(c.srcTail):]
}

// srcFrom makes f's source file the change's ([Change.Src]).
func (c *Change) srcFrom(f *desired.File) {
	c.srcDir, c.srcTail = f.SrcDir(), uint16(f.SrcTail())
}

// ChangeBytes are the bytes a [Change] carries.
type ChangeBytes struct {
	// Before is the current bytes (nil when the file does not exist).
	Before []byte
	// After is the desired bytes for create/update; nil with Src set when
	// they are read only if needed (see [Plan.AfterBytes]).
	After []byte
}

// Before is the file's current bytes the change carries (nil when the
// file does not exist).
func (c *Change) Before() []byte {
	if c.Bytes == nil {
		return nil
	}
	return c.Bytes.Before
}

// After is the desired bytes the change carries, nil when it carries
// none (a delete, or bytes read from Src: see [Plan.AfterBytes]).
func (c *Change) After() []byte {
	if c.Bytes == nil {
		return nil
	}
	return c.Bytes.After
}

// SetBytes sets the bytes c carries, none when both are nil.
func (c *Change) SetBytes(before, after []byte) {
	if before == nil && after == nil {
		c.Bytes = nil
		return
	}
	c.Bytes = &ChangeBytes{Before: before, After: after}
}

// AfterBytes returns the desired bytes of c, a create or update of p:
// After, or c's source file read through p's System and checked against
// c's hash ([desired.ReadSource]).
func (p *Plan) AfterBytes(c *Change) ([]byte, error) {
	if after := c.After(); after != nil || c.srcDir == "" {
		return after, nil
	}
	return desired.ReadSource(p.Sys, c.Src(), *c.AfterSHA256)
}

// BeforeBytes returns the bytes c, an update or removal of p, replaces:
// Before, or the file read again through p's System (no link below c's
// root followed) and checked against c's hash, as a plan keeps only that
// unless it was made to show them ([Compute]).
func (p *Plan) BeforeBytes(c *Change) ([]byte, error) {
	if before := c.Before(); before != nil || c.BeforeSHA256 == nil {
		return before, nil
	}
	guard := p.Guard
	if guard == nil {
		guard = NewLinkGuard(p.Sys)
	}
	data, _, err := c.ReadBefore(p.Sys, guard)
	return data, err
}

// ReadBefore reads the file c replaces through sys, no link below c's root
// followed, and returns its bytes when they still hash to c's
// BeforeSHA256; when they do not (or the file is gone) it is
// E_DRIFT_CONFLICT changed_since_plan. seen is as [ReadSeen] gives it.
func (c *Change) ReadBefore(sys fsys.System, guard *LinkGuard) (data []byte, seen fsys.StatData, err error) {
	a, seen, err := ReadSeen(sys, guard, c.Root, c.Path)
	if err != nil {
		return nil, fsys.StatData{}, err
	}
	if !a.Exists || c.BeforeSHA256 == nil || a.SHA256 != *c.BeforeSHA256 {
		return nil, fsys.StatData{}, ChangedSincePlan(c.Path)
	}
	return a.Data, seen, nil
}

// ChangedSincePlan is the error of a file that no longer holds what the
// plan read there when the apply reads it again.
func ChangedSincePlan(path fsys.AbsPath) error {
	return apperr.New(apperr.DriftConflict, "%s changed since the plan read it", path).
		WithHint("run the command again").With("path", path.String()).With("reason_code", "changed_since_plan")
}

// ReadSeen is [ReadActual] of a file read whole, with no stat cache, and
// the stat data it was looked at with before the read — unless that is
// too recent to tell a later edit by (git's "racy clean" rule; zero then,
// and for a missing file): a later look that finds the same stat data
// finds those bytes ([Unchanged]).
func ReadSeen(sys fsys.System, guard *LinkGuard, root, path fsys.AbsPath) (Actual, fsys.StatData, error) {
	a, seen, err := readActual(sys, guard, nil, root, path, "", true)
	if err != nil || !a.Exists || racy(entryFor(seen, [32]byte{}, true)) {
		seen = fsys.StatData{}
	}
	return a, seen, err
}

// Unchanged reports whether now, a look at a file, finds it as seen, a
// look before its bytes were read that [ReadSeen] kept: the same inode,
// size, mode and times, so nothing wrote it in between.
func Unchanged(seen, now fsys.StatData) bool {
	return seen.Ino != 0 && seen == now
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
	// Managed maps each last-applied absolute path to its manifest entry
	// and the root whose manifest lists it.
	Managed map[fsys.AbsPath]Managed `json:"-"`
	// ManagedPaths are where the files of each root's manifest lie:
	// ManagedPaths[r][i] is Manifests[r].ManagedFiles[i].In(r.Path).
	ManagedPaths map[desired.Root][]fsys.AbsPath `json:"-"`
	// Actual maps each path plan looked at and found to its sha256.
	Actual map[fsys.AbsPath]string `json:"-"`
	// StatCache is the stat cache the plan was computed with (nil for
	// none), so apply records what it writes without loading it again.
	StatCache *StatCache `json:"-"`
	// Sys is the System the plan read with, and reads a change's
	// source with ([Plan.AfterBytes]).
	Sys fsys.System `json:"-"`
	// Guard is the link guard the plan looked with: it knows the folders
	// below the roots it found to be real folders.
	Guard *LinkGuard `json:"-"`
	// ManifestsBehind marks a plan with no changes whose apply would still
	// rewrite a target manifest (the repo now wants the bytes a file was
	// edited to by hand, or a module id moved): a deploy of it has work
	// to do, so it is not kept as one with nothing to do.
	ManifestsBehind bool `json:"-"`
}

// ChangedPaths is the set of the paths p changes (each once).
func (p *Plan) ChangedPaths() map[fsys.AbsPath]bool {
	out := make(map[fsys.AbsPath]bool, len(p.Changes))
	for _, c := range p.Changes {
		out[c.Path] = true
	}
	return out
}

// Release lets go of what p looked up to decide (the manifests, the files
// managed and found, the link guard), keeping its changes, summary and
// stat cache: an apply that has built its writes needs no more, and the
// rest can be freed while it writes the files.
func (p *Plan) Release() {
	p.Manifests, p.Managed, p.ManagedPaths, p.Actual, p.Guard = nil, nil, nil, nil, nil
}

// Managed is a last-applied file: its manifest entry and its root.
type Managed struct {
	*ManagedFile
	// Root points at one root shared by all its files: a status of
	// 10,000 managed files holds one entry each.
	Root *desired.Root
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
