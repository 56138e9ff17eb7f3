package desired

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

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
	d := &State{Targets: in.Targets}
	origins := Origins{}
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
		for i, f := range out.Files {
			f.Path = clean(f.Path)
			if f.Mode == 0 {
				f.Mode = 0o644
			}
			root := d.RootFor(name, f.Path)
			if root == "" {
				return nil, apperr.New(apperr.Unexpected, "target %s produced %s outside its roots", name, f.Path)
			}
			dir, tail := splitSrc(f.Src, f.Path)
			files[i] = NewFileOf(origins.Get(name, root, f.ModuleIDs, dir), f, sums[i], f.Src != "", tail)
			d.Files = append(d.Files, &files[i])
		}
	}
	var err error
	if d.Files, err = merge(d.Files, origins); err != nil {
		return nil, err
	}
	d.index()
	sort.Slice(d.Roots, func(i, j int) bool {
		if d.Roots[i].Target != d.Roots[j].Target {
			return d.Roots[i].Target < d.Roots[j].Target
		}
		return d.Roots[i].Path < d.Roots[j].Path
	})
	return d, nil
}

// merge sorts files by path and merges the files of one path: identical
// bytes for one target merge module ids; different bytes are
// E_DESIRED_STATE_CONFLICT.
func merge(files []*File, origins Origins) ([]*File, error) {
	if !slices.IsSortedFunc(files, comparePaths) { // adapters mostly render in order
		slices.SortStableFunc(files, comparePaths)
	}
	out := files[:0]
	for _, f := range files {
		if len(out) == 0 || out[len(out)-1].Path != f.Path {
			out = append(out, f)
			continue
		}
		prev := out[len(out)-1]
		if !bytes.Equal(prev.Data, f.Data) || prev.SHA256 != f.SHA256 || prev.Target != f.Target {
			return nil, conflict(prev, f)
		}
		prev.Origin = origins.Get(prev.Target, prev.Root, mergeIDs(prev.ModuleIDs, f.ModuleIDs), prev.srcDir)
		// Two modules' files, equal now: an edit of one source alone
		// would make them conflict, which only compiling tells.
		prev.srcUse = module.UseParsed
	}
	clear(files[len(out):])
	return out, nil
}

// Origins makes each distinct [Origin] once.
type Origins map[originKey]*Origin

type originKey struct {
	target       string
	root, srcDir fsys.AbsPath
	ids          string
}

// Get is the origin of these parts, made on first use (its strings copies
// of these, not parts of larger strings).
func (m Origins) Get(target string, root fsys.AbsPath, ids []string, srcDir fsys.AbsPath) *Origin {
	k := originKey{target, root, srcDir, strings.Join(ids, "\x00")}
	if o := m[k]; o != nil {
		return o
	}
	o := NewOrigin(target, root, ids, fsys.AbsPath(strings.Clone(string(srcDir))))
	m[k] = o
	return o
}

// splitSrc is src as a folder and the length of the tail it shares with
// path, from a separator on: the files copied from one folder tree to
// another share one folder string, their paths holding the rest.
func splitSrc(src, path fsys.AbsPath) (fsys.AbsPath, int) {
	n := 0
	for n < len(src) && n < len(path) && src[len(src)-1-n] == path[len(path)-1-n] {
		n++
	}
	tail := strings.IndexByte(string(src[len(src)-n:]), filepath.Separator)
	if tail < 0 || n-tail > math.MaxUint16 {
		return src, 0
	}
	n -= tail
	return src[:len(src)-n], n
}

// clean cleans a path an adapter returned: its own joins make clean paths,
// but nothing stops an adapter from building one by hand.
func clean(p fsys.AbsPath) fsys.AbsPath { return fsys.AbsPath(filepath.Clean(p.String())) }
