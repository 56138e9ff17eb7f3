package plan

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"sort"
	"sync"
	"syscall"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
)

// Actual is what is on disk at a path. Data is nil when the file does not
// exist, or when it holds the bytes the caller wanted (then SHA256 is set
// and equals that hash): the stat cache proved it unchanged, or it was
// read and hashed.
type Actual struct {
	Exists bool
	Data   []byte
	SHA256 string
	Mode   fs.FileMode
}

// ReadActual reads path, refusing one reached through a link below root;
// when the stat cache vouches that the file still has hash want, it skips
// reading it, and when it reads the file and finds hash want, it keeps
// only the hash. A missing file is no error. cache may be nil.
func ReadActual(sys fsys.System, guard *LinkGuard, cache *StatCache, root, path fsys.AbsPath, want string) (Actual, error) {
	a, _, err := readActual(sys, guard, cache, root, path, want, true)
	return a, err
}

// readActual is ReadActual, keeping the bytes of a file that differs from
// want only when keep is set (its hash says it differs, and without keep
// the stat cache may tell that hash), and giving the stat data of the file
// as looked at before it was read (zero when missing).
func readActual(sys fsys.System, guard *LinkGuard, cache *StatCache, root, path fsys.AbsPath, want string, keep bool) (Actual, fsys.StatData, error) {
	if want == "" {
		if a, fi, ok := readWhole(sys, guard, cache, root, path); ok {
			return a, fi, nil
		}
	}
	fi, missing, err := guard.readData(root, path)
	if missing || err != nil {
		if missing || errors.Is(err, syscall.ENOTDIR) {
			cache.Forget(path) // keeps the cache to the files that exist
			return Actual{}, fsys.StatData{}, nil
		}
		return Actual{}, fsys.StatData{}, err
	}
	if fi.IsDir() {
		return Actual{}, fsys.StatData{}, apperr.New(apperr.IOInvalidPath, "%s is a directory where agentpack manages a file", path).
			WithHint("move the directory away").With("path", path.String())
	}
	if want != "" && cache.vouches(path, fi, want) {
		return Actual{Exists: true, SHA256: want, Mode: fi.Mode.Perm()}, fi, nil
	}
	if want != "" && !keep {
		// A file that differs, its hash known: not read at all (a plan of
		// 90,000 updates read each of them).
		if sha, ok := cache.lookup(path, fi); ok {
			return Actual{Exists: true, SHA256: sha, Mode: fi.Mode.Perm()}, fi, nil
		}
	}
	if want == "" {
		data, err := sys.ReadFile(path)
		if err != nil {
			return Actual{}, fsys.StatData{}, err
		}
		sha := checksum.SHA256Hex(data)
		cache.record(path, fi, sha, false)
		return Actual{Exists: true, Data: data, SHA256: sha, Mode: fi.Mode.Perm()}, fi, nil
	}
	// Most files read hold the wanted bytes (a home that knows none of
	// 10,000 deployed files): they are read into a reused buffer, and
	// only a file that differs keeps its bytes.
	buf := fsys.GetReadBuf()
	defer fsys.PutReadBuf(buf, nil)
	data, rfi, err := fsys.ReadRegular(sys, path, *buf)
	if err == nil && (rfi == nil || !rfi.Mode().IsRegular()) {
		data, err = sys.ReadFile(path) // replaced since the look: as ReadFile finds it
	}
	if err != nil {
		return Actual{}, fsys.StatData{}, err
	}
	sha := checksum.SHA256Hex(data)
	cache.record(path, fi, sha, false)
	if sha == want || !keep {
		return Actual{Exists: true, SHA256: sha, Mode: fi.Mode.Perm()}, fi, nil
	}
	if len(data) > 0 && &data[0] == &(*buf)[:1][0] {
		data = bytes.Clone(data) // the buffer goes back to the pool
	}
	return Actual{Exists: true, Data: data, SHA256: sha, Mode: fi.Mode.Perm()}, fi, nil
}

// readWhole is readActual of a file whose bytes are wanted whatever they
// are (a rollback saves each file it removes), when path is a regular
// file below real folders: one open, its fstat the look the stat data
// come from, where an Lstat came before the open. ok is false for
// anything else (missing, a link, a folder, an error), which readActual
// looks at as it always does; a missing file is missing.
func readWhole(sys fsys.System, guard *LinkGuard, cache *StatCache, root, path fsys.AbsPath) (a Actual, seen fsys.StatData, ok bool) {
	if guard.goneAbove(root, path) {
		return Actual{}, fsys.StatData{}, false
	}
	if _, err := guard.parents(root, path); err != nil {
		return Actual{}, fsys.StatData{}, false
	}
	data, fi, err := fsys.ReadRegular(sys, path, nil)
	if fi == nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
		cache.Forget(path) // as readActual: the cache keeps to the files that exist
		return Actual{}, fsys.StatData{}, true
	}
	if err != nil || fi == nil || !fi.Mode().IsRegular() {
		return Actual{}, fsys.StatData{}, false
	}
	seen = fsys.StatDataOf(fi)
	sha := checksum.SHA256Hex(data)
	cache.record(path, seen, sha, false)
	return Actual{Exists: true, Data: data, SHA256: sha, Mode: fi.Mode().Perm()}, seen, true
}

// Compute compares the desired state d of profile with what sys shows and
// with what the target manifests say was last applied (three-way). project
// is the folder whose git index marks manifests that came with a clone;
// warn receives warnings. cache may be nil.
//
// keepBefore keeps the bytes each update or removal replaces in its change,
// for a caller that shows them (a diff); without it a change holds only
// their hash, and an apply reads them again to save them in its snapshot
// ([Change.Before] is nil): a plan that updates 10,000 files of 9 KB holds
// no 90 MB.
func Compute(d *desired.State, profile string, project fsys.AbsPath, sys fsys.System, cache *StatCache, warn func(string), keepBefore bool) (*Plan, error) {
	p := &Plan{Profile: profile, Targets: append([]string{}, d.Targets...), Changes: []Change{}, Manifests: map[desired.Root]*TargetManifest{},
		StatCache: cache, Sys: sys, Guard: NewLinkGuard(sys)}
	tracked := NewGitTracked(sys, project)
	roots := append(append([]desired.Root{}, d.Roots...), d.Stale...)
	scope := make([]fsys.AbsPath, len(roots))
	for i, r := range roots {
		scope[i] = r.Path
	}
	cache.Scope(scope)
	n := 0
	for _, r := range roots {
		m := readTargetManifest(sys, tracked, cache, r.Path, r.Target, warn, newSharer(d, r.Path))
		p.Manifests[r] = m
		if m != nil {
			n += len(m.ManagedFiles)
		}
	}
	managed := make(map[fsys.AbsPath]Managed, n) // last applied
	p.Managed = managed
	p.ManagedPaths = managedPaths(d, roots, p.Manifests)
	for ri := range roots {
		r := &roots[ri]
		m := p.Manifests[*r]
		if m == nil {
			continue
		}
		for i := range m.ManagedFiles {
			f := &m.ManagedFiles[i]
			abs := p.ManagedPaths[*r][i]
			// The deepest root wins when roots nest (a project root holding .agents/skills).
			if prev, ok := managed[abs]; ok && len(prev.Root.Path) > len(r.Path) {
				continue
			}
			managed[abs] = Managed{ManagedFile: f, Root: r}
		}
	}

	guard := p.Guard
	actuals := readActuals(sys, guard, cache, d.Files, keepBefore)
	// Room for every change and every file found at once: growing a slice
	// or map of 10,000 by doubling would copy it over and over (and a
	// cold deploy finds no file, so its map stays empty).
	n = 0
	found := 0
	for i := range d.Files {
		a, _ := actuals.at(i)
		if !a.Exists || a.SHA256 != d.Files[i].SHA256 || d.Files[i].Keyed != nil {
			n++
		}
		if a.Exists {
			found++
		}
	}
	p.Actual = make(map[fsys.AbsPath]string, found)
	p.Changes = slices.Grow(p.Changes, n)
	for i, f := range d.Files {
		a, err := actuals.at(i)
		if err != nil {
			return nil, err
		}
		if f.Keyed == nil && a.Exists && a.SHA256 == f.SHA256 && (a.Mode&0o111 == f.Mode&0o111) {
			// Unchanged: the common case, kept cheap (the desired hash's
			// string, so the one hashing made can be freed).
			p.Actual[f.Path] = f.SHA256
			continue
		}
		after := f.SHA256
		c := Change{Target: f.Target, Path: f.Path, PathPosix: f.Path.ToSlash(), AfterSHA256: &after,
			ModuleIDs: f.ModuleIDs, Root: f.Root, Mode: f.Mode}
		c.SetBytes(nil, f.Data)
		if f.Data == nil && f.HasSrc() && f.Keyed == nil {
			// The path (and the hash), not f: once the plan is made,
			// nothing of the desired state needs to stay for apply to
			// read the bytes.
			c.srcFrom(f)
		}
		if f.Keyed != nil {
			// A key-level file (keyed.go): the change edits only its
			// entries, and status compares the digest of the owned
			// entries, not the file's bytes.
			if a.Exists && a.Data == nil {
				if a.Data, err = sys.ReadFile(f.Path); err != nil {
					return nil, err
				}
			}
			var last *ManagedFile
			if m, ok := managed[f.Path]; ok {
				last = m.ManagedFile
			}
			kc, digest, err := keyedChange(c, keyedSpec{format: f.Keyed.Format, container: f.Keyed.Container, want: f.Keyed}, last, a)
			if err != nil {
				return nil, err
			}
			if a.Exists {
				p.Actual[f.Path] = digest
			}
			if kc != nil {
				p.Changes = append(p.Changes, *kc)
			}
			continue
		}
		if !a.Exists {
			c.Op, c.Reason = OpCreate, ReasonMissing
			p.Changes = append(p.Changes, c)
			continue
		}
		p.Actual[f.Path] = a.SHA256
		if a.SHA256 == f.SHA256 && (a.Mode&0o111 == f.Mode&0o111) {
			continue
		}
		before := a.SHA256
		if a.Data == nil && keepBefore { // not kept or not read; diffs need the bytes
			if a.Data, err = sys.ReadFile(f.Path); err != nil {
				return nil, err
			}
		}
		c.replaces(OpUpdate, before, a.Mode)
		c.Reason = ReasonDiffers
		c.SetBytes(a.Data, c.After())
		last, isManaged := managed[f.Path]
		switch {
		case !isManaged:
			c.UpdateKind, c.Reason = UpdateAdopt, ReasonUnmanaged
		case !last.EditedSince(before, a.Data):
			// Unchanged since the last deploy, or (a marked file) changed
			// only outside agentpack's blocks: the update keeps that text.
			c.UpdateKind = UpdateManaged
		default:
			// SPEC §6: the update kind says "edited by hand"; the reason stays
			// one of the update reasons.
			c.UpdateKind = UpdateDrifted
		}
		p.Changes = append(p.Changes, c)
	}

	var stale []fsys.AbsPath
	staleRoot := map[desired.Root]bool{}
	for _, r := range d.Stale {
		staleRoot[r] = true
	}
	// Root by root in the manifest's order, each path where managed has
	// it from: a cursor then finds the desired files in one comparison.
	// (A root listed twice, as desired and stale, is looked at once.)
	looked := map[desired.Root]bool{}
	for ri := range roots {
		r := &roots[ri]
		m := p.Manifests[*r]
		if m == nil || looked[*r] || !(slices.Contains(d.Targets, r.Target) || staleRoot[*r]) {
			continue
		}
		looked[*r] = true
		files := d.Cursor()
		for i, abs := range p.ManagedPaths[*r] {
			if managed[abs].ManagedFile == &m.ManagedFiles[i] && files.File(abs) == nil {
				stale = append(stale, abs)
			}
		}
	}
	slices.Sort(stale)
	staleActual := make([]Actual, len(stale))
	staleErrs := make([]error, len(stale))
	workers.Parallel(len(stale), func(i int) {
		m := managed[stale[i]]
		want := ""
		if !keepBefore && !m.ManagedFile.keyed() {
			want = m.ManagedFile.SHA256
		}
		staleActual[i], _, staleErrs[i] = readActual(sys, guard, nil, m.Root.Path, stale[i], want, want == "")
	})
	for i, abs := range stale {
		a := staleActual[i]
		if apperr.CodeOf(staleErrs[i]) == apperr.IOInvalidPath {
			// A manifest entry reached through a link is never deleted, and
			// never skipped silently either.
			return nil, staleErrs[i]
		}
		if staleErrs[i] != nil || !a.Exists {
			continue
		}
		p.Actual[abs] = a.SHA256
		last, r := managed[abs].ManagedFile, *managed[abs].Root
		if last.keyed() {
			// A key-level file no module writes to any more: remove the
			// entries agentpack owns there, and nothing else.
			base := Change{Target: r.Target, Path: abs, PathPosix: abs.ToSlash(), ModuleIDs: []string{}, Root: r.Path}
			kc, digest, err := keyedChange(base, keyedSpec{format: cfgedit.Format(last.KeyLevel.Format), container: last.KeyLevel.Container}, last, a)
			if err != nil {
				return nil, err
			}
			p.Actual[abs] = digest
			if kc != nil {
				p.Changes = append(p.Changes, *kc)
			}
			continue
		}
		before := a.SHA256
		ids := last.ModuleIDs
		if ids == nil {
			ids = []string{} // JSON [] rather than null
		}
		c := Change{Target: r.Target, Path: abs, PathPosix: abs.ToSlash(), Reason: ReasonNoLonger, ModuleIDs: ids, Root: r.Path}
		c.replaces(OpDelete, before, a.Mode)
		c.SetBytes(a.Data, nil)
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

// actuals are what [ReadActual] found at each desired file's path, held
// compactly: of 10,000 deployed files nearly all are either missing (a
// cold deploy) or hold the desired bytes (vouched by the stat cache, or
// read and hashed), and of those only the mode is kept instead of an
// Actual and an error each; the rest, read or failed, are kept whole.
type actuals struct {
	files []*desired.File
	found []foundAt
	mu    sync.Mutex
	other map[int]otherActual
}

type foundAt struct {
	vouched bool        // the file has the desired hash, its bytes not kept
	mode    fs.FileMode // then its permission bits
}

type otherActual struct {
	a   Actual
	err error
}

// readActuals reads the actual file of each of files, on every CPU.
func readActuals(sys fsys.System, guard *LinkGuard, cache *StatCache, files []*desired.File, keepBefore bool) *actuals {
	out := &actuals{files: files, found: make([]foundAt, len(files)), other: map[int]otherActual{}}
	workers.Chunks(len(files), func(i int) bool {
		f := files[i]
		// A key-level file's text is edited, a marked file's blocks are
		// compared: those keep the bytes of a file that differs.
		a, _, err := readActual(sys, guard, cache, f.Root, f.Path, f.SHA256, keepBefore || f.Keyed != nil || f.Marked)
		switch {
		case err == nil && !a.Exists && a.Data == nil && a.SHA256 == "" && a.Mode == 0:
		case err == nil && a.Exists && a.Data == nil && a.SHA256 == f.SHA256:
			out.found[i] = foundAt{vouched: true, mode: a.Mode}
		default:
			out.mu.Lock()
			out.other[i] = otherActual{a, err}
			out.mu.Unlock()
		}
		return true
	})
	return out
}

// at is what ReadActual returned for files[i].
func (as *actuals) at(i int) (Actual, error) {
	if o, ok := as.other[i]; ok {
		return o.a, o.err
	}
	if f := as.found[i]; f.vouched {
		return Actual{Exists: true, SHA256: as.files[i].SHA256, Mode: f.mode}, nil
	}
	return Actual{}, nil
}

// managedPaths is where each file of each root's manifest lies
// ([ManagedFile.In]): the desired file's path when d has one there, else
// built in one arena.
func managedPaths(d *desired.State, roots []desired.Root, manifests map[desired.Root]*TargetManifest) map[desired.Root][]fsys.AbsPath {
	out := make(map[desired.Root][]fsys.AbsPath, len(roots))
	size := 0
	for _, r := range roots {
		m := manifests[r]
		if m == nil || out[r] != nil {
			continue
		}
		share := newSharer(d, r.Path)
		paths := make([]fsys.AbsPath, len(m.ManagedFiles))
		for i, f := range m.ManagedFiles {
			if abs, ok := share.abs(f.Path); ok {
				paths[i] = abs
			} else {
				size += len(r.Path) + 1 + len(f.Path)
			}
		}
		out[r] = paths
	}
	strs := arena.New(size)
	for r, paths := range out {
		for i, f := range manifests[r].ManagedFiles {
			if paths[i] == "" {
				paths[i] = f.in(r.Path, strs)
			}
		}
	}
	return out
}

func sortChanges(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Target != cs[j].Target {
			return cs[i].Target < cs[j].Target
		}
		return cs[i].Path < cs[j].Path
	})
}
