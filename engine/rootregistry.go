package engine

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
)

// rootsFile lists every root agentpack wrote a manifest into, with the repo
// and project it was deployed from. Without it, a root that stops being
// desired (an output turned off or moved, a scope narrowed) would keep its
// files and manifest forever: nothing would read that manifest again.
const rootsFile = "roots.json"

type rootEntry struct {
	Target  string       `json:"target"`
	Root    fsys.AbsPath `json:"root"`
	Repo    string       `json:"repo"`
	Project fsys.AbsPath `json:"project"`
}

func (e *Engine) readRoots() []rootEntry {
	var out []rootEntry
	if data, err := e.Sys.ReadFile(e.rootsPath()); err == nil {
		_ = json.Unmarshal(data, &out) // a damaged list only loses stale-root cleanup
	}
	return out
}

// staleRoots returns the roots this repo deployed to before that the
// current config no longer produces, for the selected targets: user-level
// roots from any project, project roots only from this project.
func (e *Engine) staleRoots(st *State, d *desired.State) []desired.Root {
	current := map[desired.Root]bool{}
	for _, r := range d.Roots {
		current[desired.Root{Target: r.Target, Path: r.Path}] = true
	}
	project := e.projectRoot()
	var out []desired.Root
	for _, r := range e.readRoots() {
		key := desired.Root{Target: r.Target, Path: r.Root}
		// A root outside every project (in the home) is registered once
		// for each project deployed from: it is stale once.
		if r.Repo != st.Repo || current[key] || slices.Contains(out, key) {
			continue
		}
		// A target narrowed away with --target is left alone; a target
		// removed from agentpack.yaml is cleaned up like a removed module.
		configured := st.configures(r.Target)
		narrowed := st.Req.Target != "" && st.Req.Target != "all"
		if !slices.Contains(d.Targets, r.Target) && (configured || narrowed) {
			continue
		}
		if r.Project != project && r.Project.Contains(r.Root) {
			continue // another project's folder
		}
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target+out[i].Path.String() < out[j].Target+out[j].Path.String() })
	return out
}

// configures reports whether agentpack.yaml configures the target name.
func (st *State) configures(name string) bool {
	if st.Manifest == nil {
		return slices.Contains(st.configured, name) // a state from the source cache
	}
	_, ok := st.Manifest.Targets[name]
	return ok
}

// rootsAfter is the registry as an apply leaves it: roots holding a
// manifest now are added, stale roots whose manifest goes are dropped. The
// apply writes it inside its transaction.
func (e *Engine) rootsAfter(st *State, live []desired.Root, gone []desired.Root) apply.StateFile {
	project := e.projectRoot()
	drop := map[desired.Root]bool{}
	for _, g := range gone {
		drop[g] = true
	}
	var out []rootEntry
	seen := map[rootEntry]bool{}
	for _, r := range e.readRoots() {
		if r.Repo == st.Repo && drop[desired.Root{Target: r.Target, Path: r.Root}] {
			continue
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, r := range live {
		ent := rootEntry{Target: r.Target, Root: r.Path, Repo: st.Repo, Project: project}
		if !seen[ent] {
			seen[ent] = true
			out = append(out, ent)
		}
	}
	return apply.StateFile{Path: e.rootsPath(), Data: encodeRoots(out)}
}

// addRoots adds entries to the registry.
func (e *Engine) addRoots(entries []rootEntry) error {
	out := e.readRoots()
	seen := map[rootEntry]bool{}
	for _, r := range out {
		seen[r] = true
	}
	for _, r := range entries {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return e.writeRoots(out)
}

// writeRoots saves the registry. Its error is the caller's to report: the
// files are applied by then, so it becomes a warning, never silence.
func (e *Engine) writeRoots(out []rootEntry) error {
	return e.Sys.WriteFile(e.rootsPath(), encodeRoots(out), 0o600)
}

// encodeRoots is the registry's file content.
func encodeRoots(out []rootEntry) []byte {
	if out == nil {
		out = []rootEntry{}
	}
	data, _ := json.MarshalIndent(out, "", "  ") // plain strings: cannot fail
	return append(data, '\n')
}

func (e *Engine) rootsPath() fsys.AbsPath { return abs(e.Env.StateDir()).JoinName(rootsFile) }

// liveRoots are the desired roots that hold a manifest after an apply.
func liveRoots(st *State, p *plan.Plan) []desired.Root {
	has := map[desired.Root]bool{}
	for _, f := range st.Desired.Files {
		has[desired.Root{Target: f.Target, Path: f.Root}] = true
	}
	var out []desired.Root
	for _, r := range st.Desired.Roots {
		key := desired.Root{Target: r.Target, Path: r.Path}
		if has[key] || p.Manifests[r] != nil {
			out = append(out, key)
		}
	}
	return out
}
