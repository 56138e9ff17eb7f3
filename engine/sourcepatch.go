package engine

import (
	"io"
	"slices"
	"sync"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/sourcecache"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
)

// maxPatched is how many edited source files a cached state is patched
// for ([Engine.currentState]); past it the repo is loaded again. Each is
// read and hashed, as a load reads and hashes every file that changed, so
// only what the check holds of them bounds it.
const maxPatched = 1 << 16

// patchable is what a source cache entry's path may have gone through for
// the entry to be patched rather than the repo loaded again: a regular
// file of the repo, looked at without following links, edited in place
// (same type and permissions; its folder, listed, did not move, or its
// own entry refuses the patch), that the compiled state only copies
// (copies: [desired.Copies.Use]).
func patchable(repo fsys.AbsPath, copies func() *desired.Copies) func(was, now fsys.FingerprintEntry) bool {
	return func(was, now fsys.FingerprintEntry) bool {
		return !was.Follow && !was.Listed && !was.Missing && was.Mode.IsRegular() &&
			!now.Missing && now.Mode == was.Mode && repo.Contains(was.Path) && copies().Use(was.Path) != module.UseParsed
	}
}

// copiesOf is [desired.State.Copies] of the state decoded by state, made on
// its first call (copying nothing when the state fails to decode).
func copiesOf(state func() (*desired.State, error)) func() *desired.Copies {
	return sync.OnceValue(func() *desired.Copies {
		d, err := state()
		if err != nil {
			d = &desired.State{}
		}
		return d.Copies()
	})
}

// currentState is ent's compiled state (ent is key's, in its file at path)
// for the sources as they are now: decoded when changes, the look at the
// paths its stamp describes, finds none moved, and patched when it finds
// only in-place edits of files the state merely copies ([patchable]):
// those files are read and hashed, and their copies take the new hash,
// instead of the whole repo being loaded again (every folder listed, every
// file looked at, every module compiled). A patched entry is saved with
// the new stat data when that can be trusted. ok is false when the repo
// must be loaded again.
func (e *Engine) currentState(key string, path fsys.AbsPath, ent *sourcecache.Entry, changes func(accept func(was, now fsys.FingerprintEntry) bool) ([]fsys.FingerprintEntry, bool)) (*desired.State, bool) {
	start := time.Now()
	state := sync.OnceValues(ent.DecodeDesired)
	copies := copiesOf(state)
	changed, ok := changes(patchable(abs(ent.Repo), copies))
	if !ok {
		return nil, false
	}
	d, err := state()
	if err != nil {
		return nil, false
	}
	if len(changed) == 0 {
		return d, true
	}
	if d, ok = e.patchState(copies(), changed); ok {
		e.savePatchedEntry(key, path, ent, d, changed, start)
	}
	return d, ok
}

// patchState reads and hashes the edited files in changed and is the
// state of copies with their copies given the new hashes
// ([desired.Copies.Rehashed]); ok is false when a file is not as the look
// found it, the state does not only copy it, or it fails the check its use
// names (a skill's SKILL.md: [module.CheckSkillMain]; the load that
// follows reports why).
func (e *Engine) patchState(copies *desired.Copies, changed []fsys.FingerprintEntry) (*desired.State, bool) {
	hashes := make([]string, len(changed))
	workers.Parallel(len(changed), func(i int) {
		c := changed[i]
		data, fi, err := fsys.ReadRegular(e.Sys, c.Path, nil)
		if err != nil || fsys.StatDataOf(fi) != statDataOfEntry(c) {
			return // changed again since the look, or not as it looked
		}
		if copies.Use(c.Path) == module.UseSkillMain && !module.CheckSkillMain(data) {
			return
		}
		hashes[i] = checksum.SHA256Hex(data)
	})
	sums := make(map[fsys.AbsPath]string, len(changed))
	for i, c := range changed {
		if hashes[i] == "" {
			return nil, false
		}
		sums[c.Path] = hashes[i]
	}
	return copies.Rehashed(sums)
}

// settled reports whether every entry of changed is old enough, against a
// look begun at start, to be recorded ([fsys.FingerprintEntry.Settled]).
func settled(changed []fsys.FingerprintEntry, start time.Time, racy time.Duration) bool {
	for _, c := range changed {
		if !c.Settled(start, racy) {
			return false
		}
	}
	return true
}

// withChanges is entries, a fingerprint's, with each entry of changed (in
// the same order) in place of the one of the same look; ok is false when
// one has none.
func withChanges(entries, changed []fsys.FingerprintEntry) (out []fsys.FingerprintEntry, ok bool) {
	out = slices.Clone(entries)
	j := 0
	for i := range out {
		if j < len(changed) && sameLook(out[i], changed[j]) {
			out[i] = changed[j]
			j++
		}
	}
	return out, j == len(changed)
}

// savePatchedEntry writes ent again at path with the patched state d and
// the stat data of the edited files in changed, when none of those changed
// too recently before start to be trusted (then the next command patches
// again).
func (e *Engine) savePatchedEntry(key string, path fsys.AbsPath, ent *sourcecache.Entry, d *desired.State, changed []fsys.FingerprintEntry, start time.Time) {
	if e.dryRun() || !settled(changed, start, e.SourceCache.racy()) {
		return
	}
	entries, ok := withChanges(ent.Stamp.Entries(), changed)
	if !ok {
		return
	}
	out := &sourcecache.Entry{Key: key, Fingerprint: fsys.NewFingerprint(entries), Repo: ent.Repo, Project: ent.Project,
		Profile: ent.Profile, Targets: ent.Targets, Configured: ent.Configured, Warnings: ent.Warnings,
		Relocatable: ent.Relocatable, Desired: d}
	e.writeCacheFile(path, func(w io.Writer) error { return sourcecache.Encode(w, out) })
}

// sameLook reports whether a and b are entries of the same look at the same
// path.
func sameLook(a, b fsys.FingerprintEntry) bool {
	return a.Path == b.Path && a.Follow == b.Follow && a.Listed == b.Listed
}

// statDataOfEntry is the stat data e records.
func statDataOfEntry(e fsys.FingerprintEntry) fsys.StatData {
	return fsys.StatData{Mode: e.Mode, Size: e.Size, MtimeNS: e.MtimeNS, CtimeNS: e.CtimeNS, Ino: e.Ino}
}
