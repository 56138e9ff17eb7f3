package desired

import (
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
)

// Input is what [Compile] renders.
type Input struct {
	// ProjectIsHome refuses project-scope output: the project folder is
	// the user's home, where project files (AGENTS.md, .github/…) would
	// land among the user's own (pass --allow-home-project to allow it).
	ProjectIsHome bool
	// Adapters render the targets.
	Adapters *target.Set
	// Targets are the selected target names, sorted; Configs are their
	// entries in agentpack.yaml.
	Targets []string
	Configs map[string]target.Config
	// Modules are the loaded modules the profile selects, in id order.
	Modules []*module.LoadedModule
	// Context is what every adapter may know (homes, project, machine, FS,
	// warnings); Compile fills in Target, Config and Scope per target.
	Context target.RenderContext
	// Narrowed is set when --target picked targets on purpose: a module no
	// selected target deploys is then not worth a warning.
	Narrowed bool
	// Warn receives Compile's own warnings.
	Warn func(format string, args ...any)
}

// Compile renders every selected target and merges the results into one
// [State]. Two modules writing different bytes to one path are
// E_DESIRED_STATE_CONFLICT.
func Compile(in Input) (*State, error) {
	d := &State{Targets: in.Targets, byPath: map[fsys.AbsPath]*File{}}
	rendered := map[string]bool{}
	defer func() {
		if in.Narrowed {
			return // --target narrows on purpose
		}
		for _, lm := range in.Modules {
			if !rendered[lm.ID] {
				in.Warn("module %s (type %s) is selected but no configured target deploys it", lm.ID, lm.Type)
			}
		}
	}()
	for _, name := range in.Targets {
		t, err := in.Adapters.Lookup(name)
		if err != nil {
			return nil, err
		}
		cfg := in.Configs[name]
		if err := t.Validate(cfg); err != nil {
			return nil, err
		}
		scope := cfg.Scope
		if scope == "" {
			scope = target.ScopeBoth
			if sd, ok := t.(target.ScopeDefaulter); ok {
				scope = sd.DefaultScope()
			}
		}
		var mods []*module.LoadedModule
		for _, lm := range in.Modules {
			if len(lm.Targets) > 0 && !slices.Contains(lm.Targets, name) {
				continue
			}
			if !t.Supports(lm.Type) {
				if len(lm.Targets) > 0 {
					in.Warn("module %s: target %s does not support type %s; skipped", lm.ID, name, lm.Type)
				}
				continue
			}
			mods = append(mods, lm)
			rendered[lm.ID] = true
		}
		if in.ProjectIsHome && scope.Project() && len(mods) > 0 {
			home := in.Context.ProjectRoot
			return nil, apperr.New(apperr.ConfigInvalid, "the project folder is your home folder %s: target %s would write project files into it", home, name).
				WithHint("run agentpack inside a project (a git repository), set targets.%s.scope to user, or pass --allow-home-project", name).
				With("path", home.String()).With("target", name).With("reason_code", "project_is_home")
		}
		rc := in.Context
		rc.Target, rc.Config, rc.Scope = name, cfg, scope
		out, err := t.Render(&rc, mods)
		if err != nil {
			return nil, err
		}
		for _, r := range out.Roots {
			d.Roots = append(d.Roots, Root{Target: name, Path: clean(r.Path), ScanExtras: r.ScanExtras})
		}
		sums := make([]string, len(out.Files))
		workers.Parallel(len(out.Files), func(i int) {
			if k := out.Files[i].Keyed; k != nil {
				// A key-level file is identified by the entries it owns,
				// not by bytes (the rest of the file is the user's).
				sums[i] = target.EntriesSHA256(k.Hashes())
				return
			}
			if f := &out.Files[i]; f.Src != "" && f.SrcSHA256 != "" {
				sums[i] = f.SrcSHA256 // hashed while the module was read
				return
			}
			sums[i] = checksum.SHA256Hex(out.Files[i].Data)
		})
		files := make([]File, len(out.Files)) // one allocation, not one per file
		d.Files = slices.Grow(d.Files, len(out.Files))
		if len(d.byPath) == 0 {
			d.byPath = make(map[fsys.AbsPath]*File, len(out.Files))
		}
		for i, f := range out.Files {
			f.Path = clean(f.Path)
			if f.Mode == 0 {
				f.Mode = 0o644
			}
			files[i] = File{Target: name, DesiredFile: f, SHA256: sums[i]}
			if err := d.add(&files[i]); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range d.Files {
		f.Root = d.RootFor(f.Target, f.Path)
		if f.Root == "" {
			return nil, apperr.New(apperr.Unexpected, "target %s produced %s outside its roots", f.Target, f.Path)
		}
	}
	sort.Slice(d.Files, func(i, j int) bool {
		if d.Files[i].Target != d.Files[j].Target {
			return d.Files[i].Target < d.Files[j].Target
		}
		return d.Files[i].Path < d.Files[j].Path
	})
	sort.Slice(d.Roots, func(i, j int) bool {
		if d.Roots[i].Target != d.Roots[j].Target {
			return d.Roots[i].Target < d.Roots[j].Target
		}
		return d.Roots[i].Path < d.Roots[j].Path
	})
	return d, nil
}

// clean cleans a path an adapter returned: its own joins make clean paths,
// but nothing stops an adapter from building one by hand.
func clean(p fsys.AbsPath) fsys.AbsPath { return fsys.AbsPath(filepath.Clean(p.String())) }
