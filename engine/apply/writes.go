package apply

import (
	"bytes"
	"io"
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
	// change is what the snapshot records of the write; nil for a target
	// file of a plan, whose record is made from its change when it is
	// asked for ([write.fileChange]): a deploy of ten thousand files
	// holds no second copy of their paths and hashes while it writes.
	change *snapshots.FileChange
	// planned is the plan's change a target file's write carries out (nil
	// for manifests, state files, restores); afterSize is the size its
	// record gives the new bytes (of the bytes held, then of those
	// written), beforeMode the permission bits of the file it replaces.
	planned    *plan.Change
	afterSize  int64
	beforeSize int64 // of the bytes it replaces, once saved ([Writer.savePlannedBefore])
	beforeMode uint32
	// h is what a write that is not a plan's change holds or reads of
	// its bytes (nil when it holds nothing): a plan's change carries its
	// own, so the writes of 100,000 creates hold no four empty fields each.
	h *held
	// stat is, until perform writes, the stat data of the file the
	// write replaces or removes as looked at before its bytes were read
	// and saved ([Writer.savePlannedBefore], [Writer.restoreWrites]; zero
	// when not read, or too recent to trust): perform finds the file
	// unchanged by a look instead of reading it again. From then on it is
	// the stat data of the file the write placed, when the System could
	// tell ([fsys.StatWriter]): the stat cache records them. One field,
	// as the two are never needed at once (100,000 writes are 4 MB less).
	stat   fsys.StatData
	remove bool
	mode   fs.FileMode
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
	// rendered marks a target manifest rendered for this transaction:
	// nothing else holds its bytes, so once saved whole in the pack they
	// are let go of and read back from it to be written ([savePack]).
	rendered bool
	// checked: the bytes written were read from the source and checked
	// against the planned hash, so the pack takes that hash.
	checked bool
	// distinct: the stat data the write placed are told apart from any
	// later write to the file ([fsys.Placed.Distinct]).
	distinct bool
}

// held is the bytes a write holds or how it reads them ([write.h]).
type held struct {
	// data is the bytes written when they are held (manifests, state
	// files, restores); nil for a removal and when load gives them.
	data []byte
	// before is the bytes the write replaces (nil when the path is new).
	before []byte
	// readBefore: the target manifest the write replaces is read once the
	// plan is let go of ([Writer.readManifestsBefore]), not with the
	// plan: one of 100,000 files is 18 MB.
	readBefore bool
	// load reads the bytes a restore writes from the snapshots that saved
	// them.
	load func() ([]byte, error)
	// stream, when set, writes the bytes of a manifest this transaction
	// saved whole in its pack (rendered into it, or let go of once saved),
	// copied from there ([snapshots.Pack.CopyTo]), never held whole.
	stream func(io.Writer) error
	// whole: a manifest a rollback mostly changes, saved whole without
	// computing deltas about as large ([wholeManifests]).
	whole bool
	// decoded is, for a target manifest this transaction renders, what
	// the manifest cache keeps of it ([plan.DecodedManifestOf]): the
	// stat cache records it with the file once written, so the next plan
	// does not parse the text (12 ms for 10,000 entries; 48 bytes an
	// entry held until then).
	decoded []byte
}

// hold is w's held bytes, made when it has none yet.
func (w *write) hold() *held {
	if w.h == nil {
		w.h = &held{}
	}
	return w.h
}

// data is the bytes w writes when they are held: the plan change's, or
// w's own.
func (w *write) data() []byte {
	if w.planned != nil {
		return w.planned.After()
	}
	if w.h == nil {
		return nil
	}
	return w.h.data
}

// beforeBytes is the bytes w replaces, when they are held.
func (w *write) beforeBytes() []byte {
	if w.planned != nil {
		return w.planned.Before()
	}
	if w.h == nil {
		return nil
	}
	return w.h.before
}

// streamer is how w's bytes are copied when they are not held, or nil.
func (w *write) streamer() func(io.Writer) error {
	if w.h == nil {
		return nil
	}
	return w.h.stream
}

// root and path are the root and path of w's change: the paths of a
// plan's change or, read back from a journal or a snapshot record, clean
// absolute paths (see [recorded]).
func (w *write) root() fsys.AbsPath {
	if w.planned != nil {
		return w.planned.Root
	}
	return fsys.AbsPath(w.change.Root)
}

func (w *write) target() string {
	if w.planned != nil {
		return w.planned.Target
	}
	return w.change.Target
}

func (w *write) path() fsys.AbsPath {
	if w.planned != nil {
		return w.planned.Path
	}
	return fsys.AbsPath(w.change.Path)
}

// createsFile says w writes a file that was missing when planned (or when
// a rollback read it).
func (w *write) createsFile() bool {
	if w.remove {
		return false
	}
	if w.planned != nil {
		return w.planned.BeforeSHA256 == nil
	}
	return w.change.Before == nil
}

// replacesFile says w replaces or removes a target file (not a manifest or
// a state file, which only agentpack writes) that existed when planned.
func (w *write) replacesFile() bool {
	if w.planned != nil {
		return w.planned.BeforeSHA256 != nil
	}
	return w.change.Before != nil && !w.change.Manifest && w.change.Target != snapshots.StateTarget
}

// fileChange is the change the journal and the snapshot record list for w.
func (w *write) fileChange() snapshots.FileChange {
	c := w.planned
	if c == nil {
		return *w.change
	}
	fc := snapshots.FileChange{Target: c.Target, Root: c.Root.String(), Path: c.Path.String(), Op: c.Op}
	if c.BeforeSHA256 != nil {
		fc.Before = &snapshots.Content{SHA256: *c.BeforeSHA256, Size: w.beforeSize, Mode: w.beforeMode}
	}
	if c.Op != plan.OpDelete {
		fc.After = &snapshots.Content{SHA256: *c.AfterSHA256, Size: w.afterSize, Mode: uint32(c.Mode.Perm())}
	}
	return fc
}

// afterSHA256 is the hash of the bytes w writes.
func (w *write) afterSHA256() string {
	if w.planned != nil {
		return *w.planned.AfterSHA256
	}
	return w.change.After.SHA256
}

// bytes returns the bytes w writes, reading them through sys when only
// the planned change's source or the pack holds them; a source is read
// into buf when it has room.
func (w *write) bytes(sys fsys.System, buf []byte) ([]byte, error) {
	if w.h != nil && w.h.load != nil {
		return w.h.load()
	}
	if data := w.data(); w.planned == nil || data != nil {
		return data, nil
	}
	if src := w.planned.Src(); src != "" {
		data, err := desired.ReadSourceInto(sys, src, *w.planned.AfterSHA256, buf)
		w.checked = err == nil
		return data, err
	}
	return nil, nil
}

// transactionWrites turns a plan into the ordered writes of its transaction:
// target files, then the manifests recording them (the last nManifests).
// The bytes of a file the desired state kept only the hash of are read when
// it is written; their size is recorded then. The manifests are built
// first, from d.Desired, which is then let go of (d.Desired is nil after):
// the writes of the target files need only the plan, so the desired state
// can be freed before they are made.
//
// pack, when set, begins the snapshot's pack: a new manifest is rendered
// straight into it ([Writer.manifestWrites]).
func (wr *Writer) transactionWrites(d *Deployment, id string, now time.Time, pack func() (*snapshots.Pack, error)) (writes []write, nManifests int, err error) {
	manifests, err := wr.manifestWrites(*d, id, now, pack)
	if err != nil {
		return nil, 0, err
	}
	if len(manifests) > 0 {
		kept, err := wr.keptInPlace(*d)
		if err != nil {
			return nil, 0, err
		}
		manifests = append(kept, manifests...)
	}
	d.Desired = nil
	changes := d.Plan.Changes
	if len(changes)+len(manifests) > 0 {
		// State changes only with an apply: a plan with nothing to do
		// records no snapshot just to rewrite the roots registry.
		manifests = append(manifests, wr.stateWrites(d.State)...)
	}
	writes = make([]write, 0, len(changes)+len(manifests))
	for i := range changes {
		c := &changes[i]
		w := write{planned: c, shared: len(c.Entries) > 0}
		if c.BeforeSHA256 != nil {
			perm, ok := c.BeforePerm()
			if !ok {
				perm = wr.modeOf(c.Path)
			}
			w.beforeMode = uint32(perm)
		}
		if c.Op == plan.OpDelete {
			w.remove = true
		} else {
			w.mode, w.afterSize = c.Mode, int64(len(c.After()))
		}
		writes = append(writes, w)
	}
	return append(writes, manifests...), len(manifests), nil
}

// keptInPlace records, without writing them, the managed files whose
// manifest entry d changes although the plan writes nothing to them: the
// file was edited by hand and the repo now wants those bytes (`evolve
// propose`). The snapshot then names the file, with its bytes, so
// `rollback --to` an earlier snapshot puts back what that one wrote, and
// `rollback --last` leaves the file as it is. Each is read again under the
// lock; one that no longer holds what the plan found fails the deploy.
func (wr *Writer) keptInPlace(d Deployment) ([]write, error) {
	p := d.Plan
	if d.Partial || d.Desired == nil || len(p.Managed) == 0 {
		return nil, nil // a first deploy's files are all written
	}
	var kept []*desired.File
	var planned map[fsys.AbsPath]bool
	for _, f := range d.Desired.Files {
		m, managed := p.Managed[f.Path]
		if f.Keyed != nil || !managed || m.SHA256 == f.SHA256 {
			continue
		}
		if planned == nil {
			planned = p.ChangedPaths()
		}
		if !planned[f.Path] {
			kept = append(kept, f)
		}
	}
	guard := plan.NewLinkGuard(wr.Sys)
	out := make([]write, 0, len(kept))
	for _, f := range kept {
		a, _, err := plan.ReadSeen(wr.Sys, guard, f.Root, f.Path)
		if err != nil {
			return nil, err
		}
		if !a.Exists || a.SHA256 != f.SHA256 {
			return nil, plan.ChangedSincePlan(f.Path)
		}
		content := &snapshots.Content{SHA256: f.SHA256, Size: int64(len(a.Data)), Mode: uint32(a.Mode)}
		after := *content
		out = append(out, write{change: &snapshots.FileChange{Target: f.Target, Root: f.Root.String(), Path: f.Path.String(), Op: plan.OpUpdate,
			Before: content, After: &after}, h: &held{before: a.Data}, mode: a.Mode, noop: true})
	}
	return out, nil
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
		w := write{change: &snapshots.FileChange{Target: snapshots.StateTarget, Root: f.Path.Dir().String(), Path: f.Path.String(), Op: plan.OpCreate, Manifest: true},
			h: &held{data: f.Data}, mode: 0o600}
		if has {
			w.h.before = before
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(f.Path))}
		}
		w.change.After = &snapshots.Content{SHA256: checksum.SHA256Hex(f.Data), Size: int64(len(f.Data)), Mode: 0o600}
		out = append(out, w)
	}
	return out
}

// filesByRoot is files grouped by the root they lie in, each in files'
// order, checked to lie below it.
func filesByRoot(files []*desired.File) (map[desired.Root][]*desired.File, error) {
	// Room for each root's files at once: appending 10,000 one by one
	// would copy them over and over.
	counts := map[desired.Root]int{}
	for _, f := range files {
		counts[desired.Root{Target: f.Target, Path: f.Root}]++
	}
	perRoot := make(map[desired.Root][]*desired.File, len(counts))
	for r, n := range counts {
		perRoot[r] = make([]*desired.File, 0, n)
	}
	for _, f := range files {
		if _, err := relPath(f); err != nil {
			return nil, err
		}
		r := desired.Root{Target: f.Target, Path: f.Root}
		perRoot[r] = append(perRoot[r], f)
	}
	return perRoot, nil
}

// ManifestsCurrent reports whether applying p, a plan of d, would leave
// every target manifest as it is ([Writer.manifestWrites] writes none):
// each root's manifest lists d's files under it with the hashes and
// modules it records, and no root d no longer deploys to keeps one. A
// plan with no changes can still have manifests to bring up to date:
// after a file was edited by hand and the repo changed to match it.
func ManifestsCurrent(d *desired.State, p *plan.Plan) bool {
	perRoot, err := filesByRoot(d.Files)
	if err != nil {
		return false
	}
	for _, root := range d.Roots {
		n, entry := entriesOf(p, nil, perRoot[desired.Root{Target: root.Target, Path: root.Path}])
		if !manifestKept(p.Manifests[root], n, entry) {
			return false
		}
	}
	for _, root := range d.Stale {
		if p.Manifests[root] != nil {
			return false
		}
	}
	return true
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
// applying d's plan: each root lists the desired files under it. A root's
// entries are made from its desired files as its manifest is rendered
// (see [plan.RenderTargetManifestOf]), not held as a list beside them. A
// manifest that does not exist yet is, with pack set, rendered into the
// snapshot's pack instead of memory ([plan.WriteTargetManifestOf]): a
// first deploy of 100,000 files holds no 18 MB of manifest text beside
// its plan.
func (wr *Writer) manifestWrites(d Deployment, id string, now time.Time, pack func() (*snapshots.Pack, error)) ([]write, error) {
	p := d.Plan
	lists := map[desired.Root][]plan.ManagedFile{} // a partial apply's entries
	perRoot := map[desired.Root][]*desired.File{}  // or each root's desired files
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
						lists[key] = append(lists[key], mf)
					}
				}
			}
		}
	} else {
		var err error
		if perRoot, err = filesByRoot(d.Desired.Files); err != nil {
			return nil, err
		}
	}
	for _, f := range d.Desired.Files {
		if !d.Partial || !inPlan[f.Path] {
			continue
		}
		mf, err := managedFile(p, f)
		if err != nil {
			return nil, err
		}
		r := desired.Root{Target: f.Target, Path: f.Root}
		lists[r] = append(lists[r], mf)
	}
	var out []write
	var changed map[fsys.AbsPath]int // the plan's changes by root, once asked for
	for _, root := range d.Desired.Roots {
		key := desired.Root{Target: root.Target, Path: root.Path}
		n, entry := entriesOf(p, lists[key], perRoot[key])
		old := p.Manifests[root]
		if manifestKept(old, n, entry) {
			continue
		}
		path := root.Path.JoinName(plan.TargetManifestName(root.Target))
		w := write{change: &snapshots.FileChange{Target: root.Target, Root: root.Path.String(), Path: path.String(), Op: plan.OpCreate, Manifest: true},
			mode: 0o644, rendered: true}
		if decoded, ok := plan.DecodedManifestOf(root.Target, id, d.Profile, d.Repo, now, n, entry); ok {
			w.hold().decoded = decoded
		}
		fi, err := wr.Sys.Stat(path)
		if err == nil {
			w.hold().readBefore = true
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{Size: fi.Size()} // until read
			if changed == nil {
				changed = changesByRoot(p)
			}
		}
		switch {
		case err == nil && (pack == nil || old == nil || !mostChanged(changed[root.Path], len(old.ManagedFiles))):
		case pack != nil:
			// A new manifest, or one whose entries the plan mostly changes
			// (its deltas would be about as large as its texts, and take
			// both texts, the deltas and a line index to compute): its
			// bytes go straight into the pack, never held. The old text
			// is saved whole too ([savedBytes]).
			if err := wr.renderIntoPack(&w, pack, func(out io.Writer) error {
				return plan.WriteTargetManifestOf(out, root.Target, id, d.Profile, d.Repo, now, n, entry)
			}); err != nil {
				return nil, err
			}
			out = append(out, w)
			continue
		}
		data := plan.RenderTargetManifestOf(root.Target, id, d.Profile, d.Repo, now, n, entry)
		w.hold().data = data
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
		out = append(out, write{change: &snapshots.FileChange{Target: root.Target, Root: root.Path.String(), Path: path.String(), Op: plan.OpDelete, Manifest: true,
			Before: &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(path))}},
			h: &held{before: before}, remove: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].change.Path < out[j].change.Path })
	return out, nil
}

// changesByRoot counts p's changes by the root that holds them.
func changesByRoot(p *plan.Plan) map[fsys.AbsPath]int {
	out := map[fsys.AbsPath]int{}
	for i := range p.Changes {
		out[p.Changes[i].Root]++
	}
	return out
}

// mostChanged reports whether changes of a root's entries are at least
// half of the entries its manifest lists: saved as two deltas, its texts
// would take about as much room as saved whole (deltas are kept when they
// are less than half the size, [savedBytes]).
func mostChanged(changes, entries int) bool {
	return changes*2 >= entries
}

// renderIntoPack saves what render writes, a new manifest's bytes, in
// the snapshot's pack as it writes them, and makes w, their write, copy
// them from there.
func (wr *Writer) renderIntoPack(w *write, pack func() (*snapshots.Pack, error), render func(io.Writer) error) error {
	p, err := pack()
	if err != nil {
		return err
	}
	sha, size, err := p.AddFunc(render)
	if err != nil {
		return packFailed(err, wr.Store)
	}
	w.change.After = &snapshots.Content{SHA256: sha, Size: size, Mode: 0o644}
	w.hold().stream = func(out io.Writer) error { return p.CopyTo(sha, out) }
	return nil
}

// relPath is f's path below its root, with '/'.
func relPath(f *desired.File) (string, error) {
	rel, err := relBelow(f.Root, f.Path)
	if err != nil {
		return "", apperr.Wrap(err, apperr.Unexpected, "path %s outside root %s", f.Path, f.Root)
	}
	return filepath.ToSlash(rel), nil
}

// managedFile is the manifest entry of desired file f after p is applied.
func managedFile(p *plan.Plan, f *desired.File) (plan.ManagedFile, error) {
	rel, err := relPath(f)
	if err != nil {
		return plan.ManagedFile{}, err
	}
	mf := plan.ManagedFile{Path: rel, SHA256: f.SHA256, ModuleIDs: f.ModuleIDs}
	switch {
	case f.Keyed != nil:
		// A key-level file records the entries it owns, not its bytes.
		mf = p.KeyedRecord(mf.Path, f.Path, f.SHA256, f.ModuleIDs, f.Keyed)
	case f.Marked:
		mf.OwnedSHA256 = target.OwnedSHA256(f.Data)
	}
	return mf, nil
}

// entriesOf is a root's manifest entries sorted by path, as their number
// and a function making the i-th: list's, or (list nil) those of files,
// made from each as it is asked for. files come in the desired state's
// order, which is the entries' unless a separator sorts otherwise; then
// they are listed and sorted.
func entriesOf(p *plan.Plan, list []plan.ManagedFile, files []*desired.File) (int, func(int) plan.ManagedFile) {
	entry := func(i int) plan.ManagedFile {
		mf, _ := managedFile(p, files[i]) // checked when files were gathered
		return mf
	}
	if list == nil {
		sorted, prev := true, ""
		for i := 0; i < len(files) && sorted; i++ {
			rel, _ := relPath(files[i])
			sorted, prev = i == 0 || prev < rel, rel
		}
		if sorted {
			return len(files), entry
		}
		list = make([]plan.ManagedFile, len(files))
		for i := range files {
			list[i] = entry(i)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	return len(list), func(i int) plan.ManagedFile { return list[i] }
}

// manifestKept reports whether a root's manifest, old (nil: none), stays
// as it is once the root has the n entries entry makes: none before and
// none after, or the same entries.
func manifestKept(old *plan.TargetManifest, n int, entry func(int) plan.ManagedFile) bool {
	if old == nil {
		return n == 0
	}
	return sameManaged(old.ManagedFiles, n, entry)
}

// sameManaged reports whether a manifest's entries a are the n that entry
// makes, in order.
func sameManaged(a []plan.ManagedFile, n int, entry func(int) plan.ManagedFile) bool {
	if len(a) != n {
		return false
	}
	for i := range a {
		b := entry(i)
		if a[i].Path != b.Path || a[i].SHA256 != b.SHA256 || a[i].OwnedSHA256 != b.OwnedSHA256 ||
			!slices.Equal(a[i].ModuleIDs, b.ModuleIDs) || a[i].WasCreated() != b.WasCreated() {
			return false
		}
	}
	return true
}
