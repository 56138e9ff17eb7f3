package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/fsys"
)

// A source cache entry is per project (its key names the working folder),
// so the first plan of a repo in a new project read, parsed and hashed the
// whole repo again, though another project's entry held what it compiles
// to but for where the project's files go: 100 of the 360 ms of a cold
// 10,000-file deploy. An entry whose compiled state depends on its project
// only through the paths of the project's roots is marked relocatable when
// saved, and a pointer to it is kept per request (the key without the
// working folder); the load of a new project beside it (in the same
// folder, with no entry of its own) relocates that state to its own folder
// ([desired.State.Relocated]) when the entry is still good.
//
// Relocatable means, checked when the entry is saved:
//   - the working folder is a project's root (it holds .git), which is not
//     a file system's root and holds neither the repo nor agentpack's or
//     the user's home, and is not inside the repo; no project overlay
//     applies to it;
//   - the load saw nothing in the project but its .git and paths missing
//     there (an AGENTS.md agentpack would merge its blocks into), and
//     nothing of the folders above it but their type (no listing);
//   - compiling the same modules for a probe, a project of another name
//     beside it, gives the relocated state exactly, with the same
//     warnings, and no warning names the project: whatever an adapter
//     makes of the project's name (a file holding the project's path, a
//     key under ~/.claude.json's "projects") shows up as a difference.
//
// The new project must meet the first point too, lie in the same folder
// (so a path an adapter derives from the project's folder, a rules folder
// at "../common", is the same for both), and miss the paths the old one
// missed; the rest of the entry's fingerprint must be unchanged, as for
// any hit (what the old project holds now does not matter: a deploy there
// since does not keep its entry from moving).

// relocDir holds the pointers, one per request: the project folder whose
// entry was saved relocatable last.
const relocDir = "reloc"

// sourceCacheKey is the source cache key of req for a working folder cwd:
// one entry per request, environment (the working folder included) and
// build.
func (e *Engine) sourceCacheKey(req Request, cwd string) string {
	env := e.Env
	env.Cwd = cwd
	return fmt.Sprintf("%#v\x00%#v\x00%v\x00%s", req, env, e.Adapters.Names(), e.SourceCache.Build)
}

// relocPointer is the pointer file of req's loads in any project.
func (e *Engine) relocPointer(req Request) fsys.AbsPath {
	sum := sha256.Sum256([]byte(e.sourceCacheKey(req, "")))
	return abs(filepath.Join(e.Env.CacheDir(), "load", relocDir, hex.EncodeToString(sum[:12])+".bin"))
}

// relocatableProject is the working folder when a compiled state can be
// relocated to or from it for repo (the first point above), else "".
func (e *Engine) relocatableProject(repo string, req Request) fsys.AbsPath {
	top, found := e.Env.gitTop(e.Sys)
	root, cwd := abs(top), abs(e.Env.Cwd)
	if !found || root != cwd || root.Dir() == root || abs(repo).Contains(root) {
		return ""
	}
	for _, p := range []string{repo, e.Env.Home, e.Env.AgentpackHome, e.Env.CodexHome} {
		if p != "" && root.Contains(abs(e.Env.ExpandHome(p))) {
			return ""
		}
	}
	if e.overlayLayout(repo, req).HasScope(e.Sys, overlay.Project) {
		return ""
	}
	return root
}

// relocatable reports whether st, just loaded through tracker's fingerprint
// fp and probed ([State.movable]), may be relocated to other projects (see
// above).
func (e *Engine) relocatable(st *State, fp *fsys.Fingerprint) bool {
	root := st.Project
	if !st.movable || e.relocatableProject(st.Repo, st.Req) != root ||
		slices.Contains(st.overlayScopes, overlay.Project) {
		return false
	}
	own := projectOwn(root)
	for _, fe := range fp.Entries() {
		switch {
		case own(fe.Path) && !fe.Listed, fe.Missing && !fe.Listed:
		case root.Contains(fe.Path), fe.Path.Contains(root) && fe.Listed:
			return false
		}
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, root.String()) {
			return false
		}
	}
	return true
}

// relocProbe is the probe of [Engine.relocatable]: st's modules compiled
// for a project of another name beside st's.
type relocProbe struct {
	root     fsys.AbsPath
	done     chan struct{}
	state    *desired.State
	err      error
	mu       sync.Mutex
	warnings []string
}

// probeMaxFiles is the most module files a probe compiles: its state is a
// second one as large as the load's, held while both are compiled (3 MiB
// at 10,000 files, 40 at 100,000), so a larger repo is not probed, and
// its entries are not relocatable.
var probeMaxFiles = 25000 // a variable for tests

// startProbe compiles st's modules for the probe on another goroutine,
// beside the load's own compile (the CPUs are idle but one then), reading
// existing files through sys: the probe's reads are no part of what the
// load depends on, so not through its tracker. It is nil (no probe) for
// more than probeMaxFiles module files.
func (e *Engine) startProbe(st *State, sys fsys.System) *relocProbe {
	files := 0
	for _, lm := range st.Modules {
		files += len(lm.Files)
	}
	if files > probeMaxFiles {
		return nil
	}
	p := &relocProbe{root: st.Project.Dir().JoinName(st.Project.Base() + ".agentpack-relocation-probe"), done: make(chan struct{})}
	in := e.compileInput(st, p.root, sys, func(w string) {
		p.mu.Lock()
		p.warnings = append(p.warnings, w)
		p.mu.Unlock()
	})
	go func() {
		defer close(p.done)
		p.state, p.err = desired.Compile(in)
	}()
	return p
}

// agrees waits for p (nil: no probe) and reports whether it compiled
// state d of the project at root, moved to the probe's folder
// ([desired.SameRelocated]), with the same warnings as d's compile. The
// probe's state is garbage after: only the answer is kept.
func (p *relocProbe) agrees(root fsys.AbsPath, d *desired.State, warnings []string) bool {
	if p == nil {
		return false
	}
	<-p.done
	return p.err == nil && slices.Equal(p.warnings, warnings) && desired.SameRelocated(d, root, p.root, p.state)
}

// saveRelocPointer points req's pointer at st's project, whose entry was
// just saved relocatable.
func (e *Engine) saveRelocPointer(st *State) {
	e.writeCacheFile(e.relocPointer(st.Req), func(w io.Writer) error {
		_, err := io.WriteString(w, st.Project.String())
		return err
	})
}

// relocatedHit is the state req compiles to in this project, relocated
// from the entry of the project req's pointer names, when that entry is
// relocatable and unchanged and this project can take it; else nil.
func (e *Engine) relocatedHit(req Request) *State {
	from, ok := e.relocatedFrom(req)
	if !ok {
		return nil
	}
	// This project first (a few looks), then the other's entry.
	repo := e.Env.ResolveRepo(req.Repo)
	to := e.relocatableProject(repo, req)
	if to == "" || to == from || to.Dir() != from.Dir() {
		return nil
	}
	key := e.sourceCacheKey(req, from.String())
	path := e.sourceCachePath(key)
	ent := readEntry(e.Sys, key, path)
	if ent == nil || !ent.Relocatable || ent.Project != from || ent.Repo != repo {
		return nil
	}
	// Edits only of files the state copies (none in either project) patch
	// the other project's entry, as its own plan would; it is then moved.
	d, ok := e.currentState(key, path, ent, func(accept func(was, now fsys.FingerprintEntry) bool) ([]fsys.FingerprintEntry, bool) {
		return ent.Stamp.ChangesMoved(e.Sys, from, to, projectOwn(from), maxPatched, accept)
	})
	if !ok {
		return nil
	}
	if d, ok := d.Relocated(from, to); ok {
		return e.cachedState(req, ent, to, d)
	}
	return nil
}

// relocatedFrom is the project whose entry req's relocation pointer names:
// the one saved last that another project may take its state from.
func (e *Engine) relocatedFrom(req Request) (fsys.AbsPath, bool) {
	data, err := e.Sys.ReadFile(e.relocPointer(req))
	if err != nil {
		return "", false
	}
	from, err := fsys.NewAbsPath(string(data))
	return from, err == nil
}

// projectOwn reports whether a path is root or in its .git: what finding
// the project looks at, which [Engine.relocatableProject] checks in the
// new project.
func projectOwn(root fsys.AbsPath) func(fsys.AbsPath) bool {
	git := root.JoinName(".git")
	return func(path fsys.AbsPath) bool { return path == root || git.Contains(path) }
}
