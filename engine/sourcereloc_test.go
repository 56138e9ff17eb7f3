package engine_test

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

const relocManifest = `version: 1
profiles:
  default: {include_tags: [base]}
targets:
  codex: {scope: both}
  claude_code: {scope: both}
  cursor: {scope: project}
  vscode: {scope: project}
modules:
  - {id: "instructions:base", type: instructions, tags: [base], source: {local_path: {path: modules/base}}}
  - {id: "skill:s", type: skill, tags: [base], source: {local_path: {path: modules/s}}}
  - {id: "prompt:p", type: prompt, tags: [base], source: {local_path: {path: modules/p.md}}}
  - {id: "command:c", type: command, tags: [base], source: {local_path: {path: modules/c.md}}}
  - {id: "mcp:gh", type: mcp, tags: [base], source: {local_path: {path: modules/mcp/gh.yaml}}}
`

// relocWorld is one home and repo deployed to from several projects.
type relocWorld struct {
	t        *testing.T
	home     engine.Env
	repo     string
	reads    atomic.Int64
	adapters func() *target.Set
}

func newRelocWorld(t *testing.T) *relocWorld {
	t.Helper()
	w := &relocWorld{t: t, home: testEnv(t), adapters: targets.NewSet}
	w.repo = writeRepo(t, map[string]string{
		"agentpack.yaml":         relocManifest,
		"modules/base/AGENTS.md": "# base\n",
		"modules/s/SKILL.md":     "---\nname: s\ndescription: d\n---\nbody\n",
		"modules/s/ref/a.md":     "a\n",
		"modules/p.md":           "---\ndescription: p\n---\nprompt\n",
		"modules/c.md":           "---\ndescription: c\n---\ncommand\n",
		"modules/mcp/gh.yaml":    ghServer,
	})
	return w
}

// project makes a project folder (with .git unless bare) and returns the
// environment of a command run in it (or in its subfolder sub).
func (w *relocWorld) project(name string, bare bool, sub string) engine.Env {
	w.t.Helper()
	env := w.home
	env.Cwd = filepath.Join(filepath.Dir(w.home.Cwd), name)
	if !bare {
		must(w.t, os.MkdirAll(filepath.Join(env.Cwd, ".git"), 0o755))
	}
	env.Cwd = filepath.Join(env.Cwd, sub)
	must(w.t, os.MkdirAll(env.Cwd, 0o755))
	return env
}

// engine is an engine of env counting what it reads of the repo, with
// the source cache when cached.
func (w *relocWorld) engine(env engine.Env, cached bool) *engine.Engine {
	e := engine.New(env, w.adapters())
	e.Sys = sourceReads{e.Sys, fsys.AbsPath(w.repo), &w.reads}
	if cached {
		e.SourceCache = &engine.SourceCache{Build: "test", Racy: 1}
	}
	return e
}

// plan is the plan and status JSON (and warnings) of a run in env.
func (w *relocWorld) plan(env engine.Env, cached bool) string {
	w.t.Helper()
	e := w.engine(env, cached)
	req := engine.Request{Repo: w.repo}
	st, p, err := e.Plan(context.Background(), req)
	if err != nil {
		w.t.Fatal(err)
	}
	_, s, err := e.Status(context.Background(), req, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	out, _ := json.Marshal([]any{p, s, st.Warnings})
	return string(out)
}

// check runs a cached and an uncached plan in env, which must agree; it
// reports whether the cached one read the repo.
func (w *relocWorld) check(env engine.Env) (read bool) {
	w.t.Helper()
	w.reads.Store(0)
	cached := w.plan(env, true)
	read = w.reads.Load() > 0
	if uncached := w.plan(env, false); cached != uncached {
		w.t.Errorf("in %s, with the cache:\n%s\nwithout:\n%s", env.Cwd, cached, uncached)
	}
	return read
}

// readsOfPlan is what a plan in env with the source cache reads of the
// repo (ReadFile, ReadRegular), and how many files it read and folders it
// listed there in all.
func (w *relocWorld) readsOfPlan(env engine.Env) (read []string, looks int64) {
	w.t.Helper()
	var mu sync.Mutex
	e := w.engine(env, true)
	e.Sys = namedReads{System: e.Sys, below: fsys.AbsPath(w.repo), mu: &mu, read: &read}
	w.reads.Store(0)
	if _, _, err := e.Plan(context.Background(), engine.Request{Repo: w.repo}); err != nil {
		w.t.Fatal(err)
	}
	return read, w.reads.Load()
}

// leavingManifest has cursor's rules in a folder beside the project.
var leavingManifest = strings.Replace(relocManifest, "cursor: {scope: project}", "cursor: {scope: project, options: {rules_dir: ../shared/rules}}", 1)

// overlay gives project env's project an overlay of skill:s.
func (w *relocWorld) overlay(env engine.Env, description string) {
	w.t.Helper()
	l := overlay.Layout{Repo: fsys.AbsPath(w.repo), ProjectID: w.engine(env, false).ProjectID()}
	mustWrite(w.t, l.ScopeDir(overlay.Project, "skill:s").JoinName("SKILL.md").String(), "---\nname: s\ndescription: "+description+"\n---\nbody\n")
}

// A project's first plan of a repo another project planned takes that
// project's compiled state moved to its own folder, reading nothing of the
// repo, and plans, deploys and reports exactly what a load would.
func TestNewProjectRelocatesAnotherProjectsState(t *testing.T) {
	w := newRelocWorld(t)
	a, b := w.project("a", false, ""), w.project("b", false, "")
	if !w.check(a) {
		t.Fatal("the first plan read nothing of the repo")
	}
	if w.check(b) {
		t.Fatal("a new project's plan read the repo again: the other project's state was not relocated")
	}
	_, res, err := w.engine(b, true).Deploy(context.Background(), engine.Request{Repo: w.repo}, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inB := 0
	for _, c := range res.Changes {
		if strings.HasPrefix(c.Path.String(), a.Cwd+string(filepath.Separator)) {
			t.Errorf("the deploy in b wrote %s, in a", c.Path)
		}
		if strings.HasPrefix(c.Path.String(), b.Cwd+string(filepath.Separator)) {
			inB++
			if _, err := os.Stat(c.Path.String()); err != nil {
				t.Errorf("the deploy in b did not write %s: %v", c.Path, err)
			}
		}
	}
	if inB < 5 {
		t.Fatalf("the deploy wrote %d files in b, want the project files of four targets", inB)
	}
	// Deployed, b's plan and status still agree with a load. The deploy
	// wrote ~/.claude.json and ~/.codex/config.toml, which compiling reads
	// (entries go into them), so a's entry is stale: a third project
	// loads the repo (and everything still agrees), a fourth moves the
	// third's state.
	w.check(b)
	w.check(w.project("c", false, ""))
	if w.check(w.project("d", false, "")) {
		t.Error("a fourth project read the repo again")
	}
	w.check(a)
}

// Where the state of one project cannot be moved to another, the new
// project loads the repo, and still gets what a load gives.
func TestRelocationOnlyWhereTheStateMoves(t *testing.T) {
	// Each case plans in a, then in b (a project beside a unless dir
	// says otherwise), which must load the repo; before runs before a's
	// plan, after between the two.
	for _, c := range []struct {
		name     string
		dir, sub string
		bare     bool
		before   func(t *testing.T, w *relocWorld, a engine.Env)
		after    func(t *testing.T, w *relocWorld, b engine.Env)
	}{
		{name: "the new project has a project overlay",
			after: func(t *testing.T, w *relocWorld, b engine.Env) { w.overlay(b, "b's own") }},
		{name: "the old project had a project overlay",
			before: func(t *testing.T, w *relocWorld, a engine.Env) { w.overlay(a, "a's own") }},
		{name: "the new project is no git repository", bare: true},
		{name: "run from a subfolder of the new project", sub: "sub"},
		{name: "the new project has files the old one had not",
			// AGENTS.md (agentpack's blocks go into the user's own text) and
			// .github/copilot-instructions.md are read when compiling.
			after: func(t *testing.T, w *relocWorld, b engine.Env) {
				mustWrite(t, filepath.Join(b.Cwd, "AGENTS.md"), "# b's own notes\n")
				mustWrite(t, filepath.Join(b.Cwd, ".github", "copilot-instructions.md"), "b's own\n")
			}},
		{name: "the repo has more files than a probe compiles",
			before: func(t *testing.T, w *relocWorld, a engine.Env) { t.Cleanup(engine.SetProbeMaxFiles(5)) }},
		{name: "a module changed since the old project loaded",
			after: func(t *testing.T, w *relocWorld, b engine.Env) {
				mustWrite(t, filepath.Join(w.repo, "modules", "s", "ref", "a.md"), "a, edited\n")
			}},
		{name: "the new project is in another folder", dir: "elsewhere/b"},
		{name: "an adapter writes the project's folder into a file",
			before: func(t *testing.T, w *relocWorld, a engine.Env) {
				w.adapters = func() *target.Set {
					var all []target.Adapter
					for _, a := range targets.Builtin() {
						if a.Name() == "codex" {
							a = namesProject{a}
						}
						all = append(all, a)
					}
					return target.NewSet(all...)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newRelocWorld(t)
			a := w.project("a", false, "")
			if c.before != nil {
				c.before(t, w, a)
			}
			w.check(a)
			b := w.project(cmp.Or(c.dir, "b"), c.bare, c.sub)
			if c.after != nil {
				c.after(t, w, b)
			}
			if !w.check(b) {
				t.Error("a's state was moved to b")
			}
		})
	}
	t.Run("a target folder leaves the project", func(t *testing.T) {
		// For a project beside it, the folder is the same one: moved or
		// loaded, b's plan is a's (check compares them).
		w := newRelocWorld(t)
		mustWrite(t, filepath.Join(w.repo, "agentpack.yaml"), leavingManifest)
		w.check(w.project("a", false, ""))
		w.check(w.project("b", false, ""))
		w.check(w.project("elsewhere/c", false, ""))
	})
	t.Run("the old project's entry is no longer relocatable", func(t *testing.T) {
		w := newRelocWorld(t)
		a := w.project("a", false, "")
		w.check(a)
		if w.check(w.project("b", false, "")) {
			t.Fatal("not relocated to b")
		}
		// a gets an overlay of its own: a's new entry (which the pointer
		// still names) is not moved to c.
		w.overlay(a, "a's own")
		w.check(a)
		if !w.check(w.project("c", false, "")) {
			t.Error("a's entry was moved to c")
		}
	})
}

// namesProject is an adapter that also writes a file holding the project's
// folder.
type namesProject struct{ target.Adapter }

func (n namesProject) Render(rc *target.RenderContext, mods []*module.LoadedModule) (*target.Output, error) {
	out, err := n.Adapter.Render(rc, mods)
	if err != nil || !rc.Scope.Project() {
		return out, err
	}
	root := rc.ProjectRoot.Join(".codex")
	out.Roots = append(out.Roots, target.Root{Path: root})
	out.Files = append(out.Files, target.DesiredFile{Path: root.JoinName("where.txt"), Data: []byte("project: " + rc.ProjectRoot.String() + "\n"), ModuleIDs: []string{"skill:s"}})
	return out, nil
}

// A project that took another's state, with no entry of its own, loads
// after a file is saved by rename knowing the other's source hashes: it
// reads the edited file again, not every file it only hashes, and agrees
// with a load.
func TestRelocatedProjectRereadsOnlyEditedFiles(t *testing.T) {
	w := newRelocWorld(t)
	mustWrite(t, filepath.Join(w.repo, "modules", "s", "ref", "b.md"), "b\n")
	a, b := w.project("a", false, ""), w.project("b", false, "")
	w.check(a)
	if w.check(b) {
		t.Fatal("a new project's plan read the repo again: the other project's state was not relocated")
	}
	edited := filepath.Join(w.repo, "modules", "s", "ref", "a.md")
	saveByRename(t, edited, "a edited\n")
	read, _ := w.readsOfPlan(b)
	loadedAgain(t, read, w.repo)
	onlyEditedRead(t, read, edited)
	w.check(b)
}

// An in-place edit of a file the state only copies patches the other
// project's entry before it is moved: a project that took that state
// reads just the edited file and lists no folder, agrees with a load, and
// the patched entry serves the other project and a third one without
// another read.
func TestRelocatedProjectPatchesEditsOfCopiedFiles(t *testing.T) {
	w := newRelocWorld(t)
	a, b := w.project("a", false, ""), w.project("b", false, "")
	w.check(a)
	if w.check(b) {
		t.Fatal("a new project's plan read the repo again: the other project's state was not relocated")
	}
	edited := filepath.Join(w.repo, "modules", "s", "ref", "a.md")
	appendLine(t, edited, "one more line")
	if read, n := w.readsOfPlan(b); len(read) != 1 || read[0] != edited || n != 1 {
		t.Errorf("the plan after the edit read %v (%d reads and listings in all), want just %s", read, n, edited)
	}
	w.check(b)
	for _, env := range []engine.Env{a, w.project("c", false, "")} {
		if w.check(env) {
			t.Errorf("the plan in %s read the repo: the patched entry was not saved", env.Cwd)
		}
	}
}
