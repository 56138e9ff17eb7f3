package engine

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
	"github.com/agentpack/agentpack/internal/workers"
)

// Engine runs agentpack operations for one environment.
type Engine struct {
	Env Env
	// Adapters are the targets this engine can render for.
	Adapters *target.Set
	// Sys is the System every file the engine reads or writes goes through:
	// the repo, the target files, its state files. [New] makes it an
	// fsys.RealSystem; a dry run swaps in an fsys.DryRunSystem over it.
	Sys fsys.System
	// ResolveSource maps a non-local module source to a folder or file on
	// disk (git checkouts, package cache). Nil: only local sources work.
	ResolveSource func(ctx context.Context, st *State, mod *module.Module) (string, error)
	// ExtractPackage takes a package archive apart with every hostile-input
	// check (aampkg); nil: packages cannot be read.
	ExtractPackage pkgcache.Extractor
	// PackFolder packs a package folder into a deterministic archive.
	PackFolder func(ctx context.Context, dir string) ([]byte, error)
	// OpenRegistries returns the configured package registries, in config
	// order. Nil or empty: E_REGISTRY_NOT_CONFIGURED when one is needed.
	OpenRegistries func(ctx context.Context) ([]PackageRegistry, error)
	// GitProgress receives go-git's progress text (nil: none).
	GitProgress io.Writer
	// Progress is told as each repo of a multi-repo fetch finishes.
	Progress func(done, total int, what string)
	// LoadCache, when set, keeps compiled desired states across the
	// engines of one process (the MCP server builds one per call).
	LoadCache *LoadCache
	// SourceCache, when set, keeps the compiled desired state of plan,
	// status, diff and deploy on disk between processes (the CLI sets it).
	SourceCache *SourceCache
	// ApplyProgress is told how many target files a deploy or rollback
	// has written so far, out of how many (from several goroutines).
	ApplyProgress func(done, total int)
	// OnLockWait is told when a mutation has to wait for another agentpack
	// (the message names the holder), before it waits up to LockTimeout.
	OnLockWait func(msg string)

	locked bool // this engine holds the state lock (WithLock)
	// alongside are the answers a computation being kept found on its
	// way, kept with its own (see [Engine.keepInSyncAlongside]).
	alongside []answerToKeep
	// keeping is the tracker of the computation whose answer is being
	// kept on disk ([computeAndKeep]); nil when none is.
	keeping *fsys.TrackingSystem
	// repairs are the git cache repairs made so far, as warnings; a copy
	// of the engine (a recording twin) shares them.
	repairs *repairLog
	// inspectOnly stops Load from recovering an interrupted apply, so
	// `doctor` (without --fix) can report it instead.
	inspectOnly bool
	// recoverBestEffort lets `doctor --fix` finish a recovery that would
	// otherwise stop: it sets a damaged journal aside and skips paths whose
	// saved bytes are damaged, with warnings.
	recoverBestEffort bool
	// hashesOnly is set while the [SourceCache] loads a state for plan,
	// status, diff or deploy: a module file copied verbatim keeps its hash
	// and source path, not its bytes, once its module is loaded.
	hashesOnly bool
	// knownSources, set while hashesOnly loads a state whose last load is
	// out of date, tells the hash of a source file that load read from
	// its stat data, so only the files edited since are read again.
	knownSources module.KnownHash
	// probeSys is set while the [SourceCache] loads a state it may save:
	// the System beneath the load's tracker, through which the load's
	// relocation probe reads ([Engine.startProbe]).
	probeSys fsys.System
	// diffing is set while Diff or Preview with diffs plans: they show
	// every change's bytes, so a load through the [SourceCache] keeps the
	// bytes it reads instead of reading each changed file a second time,
	// up to diffHeld of them (kept counts them): modules loaded after that
	// keep hashes only, and their files are read again when diffed.
	diffing bool
	kept    *atomic.Int64 // made by each diff: modules load in parallel
	// shapes are the diff shapes of the files loaded after kept passed
	// diffHeld, by source path: their diffs as created files are made
	// from them, without reading the files again before they are shown.
	shapes *diffShapes

	// Checkpoint, when set, is called at each phase boundary of a
	// transaction ("deciding", before a deploy's writes are made from its
	// plan; "planned", "pack saved", "journal written", "files written",
	// "record saved", "journal removed"); crash tests stop the process
	// there.
	Checkpoint func(phase string)
}

func (e *Engine) checkpoint(phase string) {
	if e.Checkpoint != nil {
		e.Checkpoint(phase)
	}
}

// New returns an Engine over the real filesystem with the given adapters.
func New(env Env, adapters *target.Set) *Engine {
	e := &Engine{Env: env, Adapters: adapters, Sys: fsys.NewRealSystem(fsys.RealSystemOptions{Fsync: env.Fsync}), repairs: &repairLog{}}
	e.ResolveSource = e.resolveLocked
	wireRegistries()
	e.wirePackages()
	return e
}

// Request names what an operation works on; every field is optional.
type Request struct {
	Repo    string `json:"repo,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Target is a target name, "all" or "".
	Target  string `json:"target,omitempty"`
	Machine string `json:"machine,omitempty"`
	// AllowHomeProject lets project-scope files go into $HOME when the
	// project folder is the home folder (refused by default).
	AllowHomeProject bool `json:"allow_home_project,omitempty"`
}

// Command renders an agentpack command line for this request, repeating the
// non-default --repo, --profile and --target so a suggested command acts on
// the same repo, profile and targets as the one that suggested it.
func (r Request) Command(args ...string) string {
	parts := []string{"agentpack"}
	if r.Repo != "" {
		parts = append(parts, "--repo", shellQuote(r.Repo))
	}
	if r.Profile != "" && r.Profile != "default" {
		parts = append(parts, "--profile", shellQuote(r.Profile))
	}
	if r.Target != "" && r.Target != "all" {
		parts = append(parts, "--target", r.Target)
	}
	return strings.Join(append(parts, args...), " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c == '/' || c == '.' || c == '-' || c == '_' || c == '~' || c == ':' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// State is a loaded desired-state repo for one request.
type State struct {
	Req  Request
	Repo string
	// Project is the project folder (git top level of the working folder).
	Project  fsys.AbsPath
	Profile  string
	Manifest *manifest.Manifest
	// Targets are the selected target names, sorted.
	Targets []string
	Modules []*module.LoadedModule
	// Desired is the compiled desired state; the State a deploy --apply
	// returns has none (it is let go of before the files are written).
	Desired  *desired.State
	Warnings []string

	mu   sync.Mutex // guards Warnings and lock while modules load in parallel
	lock *lockfile.Lockfile
	// pkgPaths maps each module expanded from a package to its artifact
	// in the package cache.
	pkgPaths map[string]string
	// overlays locates this load's overlay folders; overlayScopes are the
	// scopes whose root folder exists (most repos have none).
	overlays      overlay.Layout
	overlayScopes []overlay.Scope
	// configured are the targets agentpack.yaml configures, for a state
	// from the [SourceCache] (which has no Manifest).
	configured []string
	// movable says the relocation probe agreed: compiled for a project
	// beside this one, the modules give this state with its paths moved
	// ([Engine.relocatable]).
	movable bool
}

// Warn adds a warning; safe for concurrent use.
func (st *State) Warn(format string, args ...any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.Warnings = append(st.Warnings, fmt.Sprintf(format, args...))
}

// LoadManifest reads the request's agentpack.yaml without loading modules.
func (e *Engine) LoadManifest(ctx context.Context, req Request) (*manifest.Manifest, string, error) {
	repo := e.Env.ResolveRepo(req.Repo)
	m, err := manifest.Load(e.Sys, abs(repo), e.Adapters.Names())
	return m, repo, err
}

// Load reads the manifest, selects modules and targets, loads module files
// and compiles the desired state. Nothing is written.
func (e *Engine) Load(ctx context.Context, req Request) (*State, error) {
	return e.loadThrough(ctx, req, e.cachedLoadState)
}

// loadThrough is Load with the cache the load goes through.
func (e *Engine) loadThrough(ctx context.Context, req Request, cached func(context.Context, Request, func() (*State, error)) (*State, error)) (*State, error) {
	recovered, err := e.recoverFirst(ctx)
	if err != nil {
		return nil, err
	}
	st, err := cached(ctx, req, func() (*State, error) {
		m, repo, err := e.LoadManifest(ctx, req)
		if err != nil {
			return nil, err
		}
		return e.loadFrom(ctx, req, m, repo, nil)
	})
	if st != nil && len(recovered) > 0 {
		st.Warnings = append(recovered, st.Warnings...)
	}
	if st != nil && st.Desired != nil {
		// The plan and the writes that follow hold a few hundred bytes
		// per file: with many files, collect before the heap doubles.
		gcpace.ForFiles(len(st.Desired.Files))
	}
	return st, err
}

// loadFrom is Load for an already parsed manifest.
func (e *Engine) loadFrom(ctx context.Context, req Request, m *manifest.Manifest, repo string, warnings []string) (*State, error) {
	var err error
	st := &State{Req: req, Repo: repo, Project: e.projectRoot(), Manifest: m, Profile: req.Profile, Warnings: append(warnings, m.Warnings...)}
	if st.Profile == "" {
		st.Profile = "default"
	}
	if st.Targets, err = e.selectTargets(m, req.Target); err != nil {
		return nil, err
	}
	if err := e.expandPackages(ctx, st, m); err != nil {
		return nil, err
	}
	mods, err := m.SelectModules(st.Profile)
	if err != nil {
		return nil, err
	}
	e.findOverlays(st)
	// Modules load in parallel: most are a handful of small files, so a
	// serial walk would leave the disk idle between them.
	st.Modules = make([]*module.LoadedModule, len(mods))
	errs := make([]error, len(mods))
	workers.Parallel(len(mods), func(i int) { st.Modules[i], errs[i] = e.loadModule(ctx, st, mods[i]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, lm := range st.Modules {
		st.Warnings = append(st.Warnings, lm.Warnings()...)
	}
	var probe *relocProbe
	if e.probeSys != nil && st.Project.Dir() != st.Project {
		probe = e.startProbe(st, e.probeSys)
	}
	n := len(st.Warnings)
	if st.Desired, err = e.compile(st); err != nil {
		return nil, err
	}
	st.movable = probe.agrees(st.Project, st.Desired, st.Warnings[n:])
	st.Desired.Stale = e.staleRoots(st, st.Desired)
	e.warnProjectPlace(st)
	return st, nil
}

func (e *Engine) loadModule(ctx context.Context, st *State, mod *module.Module) (*module.LoadedModule, error) {
	path, err := e.modulePath(ctx, st, mod)
	if err != nil {
		return nil, err
	}
	within := ""
	if mod.Source.LocalPath != nil {
		within = st.Repo
	}
	load := module.LoadFilesIn
	if (e.hashesOnly || e.diffing && e.kept.Load() > diffHeld) && len(st.overlayScopes) == 0 {
		// No overlay can patch a file: the bytes of all but the main file
		// are only hashed (DropHashedBytes would drop them anyway; a
		// diff that holds enough bytes reads the rest again).
		load = module.LoadHashesIn
		if known := e.knownSources; known != nil && e.hashesOnly {
			load = func(sys fsys.System, mod *module.Module, path, within string) ([]module.File, error) {
				return module.LoadKnownHashesIn(sys, mod, path, within, known)
			}
		}
		if e.diffing && e.shapes != nil {
			shapes := e.shapes
			load = func(sys fsys.System, mod *module.Module, path, within string) ([]module.File, error) {
				return module.LoadShapesIn(sys, mod, path, within, shapes.add)
			}
		}
	}
	files, err := load(e.Sys, mod, path, within)
	if err != nil {
		return nil, err
	}
	if e.diffing {
		for i := range files {
			e.kept.Add(int64(len(files[i].Data)))
		}
	}
	files, origins, err := e.composeOverlays(st, mod, files)
	if err != nil {
		return nil, err
	}
	lm, err := module.NewLoaded(mod, path, files)
	if err != nil {
		return nil, err
	}
	lm.Origins = origins
	if e.hashesOnly {
		lm.DropHashedBytes()
	}
	return lm, nil
}

// modulePath resolves where a module's upstream files are: its local path,
// git checkout or package artifact.
func (e *Engine) modulePath(ctx context.Context, st *State, mod *module.Module) (string, error) {
	switch {
	case mod.Source.LocalPath != nil:
		p := e.Env.ExpandHome(mod.Source.LocalPath.Path)
		if p == "" {
			return "", apperr.New(apperr.ConfigInvalid, "module %q: source.local_path.path is empty", mod.ID).
				WithHint("set the path of the module's folder or file").With("line", st.Manifest.Lines[mod.ID])
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(st.Repo, filepath.FromSlash(p))
		}
		return p, nil
	case e.ResolveSource != nil:
		return e.ResolveSource(ctx, st, mod)
	}
	return "", apperr.New(apperr.ModuleInvalid, "module %q: source %s is not supported by this build", mod.ID, mod.Source.String()).
		WithHint("use a local_path source")
}

func (e *Engine) selectTargets(m *manifest.Manifest, target string) ([]string, error) {
	configured := m.TargetNames()
	if target == "" || target == "all" {
		return configured, nil
	}
	if _, err := e.Adapters.Lookup(target); err != nil {
		return nil, err
	}
	if !slices.Contains(configured, target) {
		return nil, apperr.New(apperr.TargetUnsupported, "target %q is not configured in agentpack.yaml", target).
			WithHint("add `targets: {%s: {scope: project}}` or pick one of: %s", target, strings.Join(configured, ", ")).
			With("target", target)
	}
	return []string{target}, nil
}

// warnProjectPlace says where project-scope files land when that is
// probably not what the user meant: outside any git repo, or in $HOME.
func (e *Engine) warnProjectPlace(st *State) {
	project := e.projectRoot()
	if project == abs(e.Env.Home) {
		for _, r := range st.Desired.Roots {
			if r.Path == project {
				st.Warn("the working directory is your home folder, so project files (%s's) go there; run agentpack inside a project", r.Target)
				return
			}
		}
		return
	}
	if e.inGitRepo() {
		return
	}
	for _, f := range st.Desired.Files {
		if project.Contains(f.Path) {
			st.Warn("%s is not inside a git repository: project files (like %s) go into it", project, f.Path)
			return
		}
	}
}

// compile renders every selected target and merges the results.
func (e *Engine) compile(st *State) (*desired.State, error) {
	return desired.Compile(e.compileInput(st, e.projectRoot(), e.Sys, func(w string) { st.Warn("%s", w) }))
}

// compileInput is what compiling st's modules for a project at project
// takes, reading existing files through sys, with warnings to warn.
func (e *Engine) compileInput(st *State, project fsys.AbsPath, sys fsys.System, warn func(string)) desired.Input {
	return desired.Input{
		Adapters: e.Adapters, Targets: st.Targets, Configs: st.Manifest.Targets, Modules: st.Modules,
		Narrowed: st.Req.Target != "" && st.Req.Target != "all", Warn: func(format string, args ...any) { warn(fmt.Sprintf(format, args...)) },
		ProjectIsHome: project == abs(e.Env.Home) && !st.Req.AllowHomeProject,
		Context: target.RenderContext{Home: abs(e.Env.Home), CodexHome: e.Env.CodexHome, ProjectRoot: project,
			Machine: st.Req.Machine, FS: sys, OnWarn: warn},
	}
}
