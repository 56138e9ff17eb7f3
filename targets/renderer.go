package targets

import (
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// warnFunc records a warning. Adapters get rc.Warn; tests pass a recorder.
type warnFunc func(format string, args ...any)

// renderer collects one adapter's output for one render.
type renderer struct {
	rc   *target.RenderContext
	spec *targetSpec
	warn warnFunc
	// paths holds the resolved path of every enabled output.
	paths  map[outputKey]fsys.AbsPath
	roots  map[fsys.AbsPath]bool // path -> scan extras
	files  []target.DesiredFile
	warned map[string]bool
	// mcpPaths are the enabled key-level MCP config files, by scope (user:
	// true); their roots are added only when a server is written.
	mcpPaths map[bool]fsys.AbsPath
}

type outputKey struct {
	kind string
	user bool
}

// newRenderer resolves the enabled outputs and their roots, and warns about
// option keys the target does not know.
func newRenderer(spec *targetSpec, rc *target.RenderContext, home fsys.AbsPath, warn warnFunc) *renderer {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	r := &renderer{rc: rc, spec: spec, warn: warn, paths: map[outputKey]fsys.AbsPath{}, roots: map[fsys.AbsPath]bool{}, warned: map[string]bool{}}
	known := spec.knownOptions()
	var unknown []string
	for key := range rc.Config.Options {
		if !slices.Contains(known, key) {
			unknown = append(unknown, key)
		}
	}
	sort.Strings(unknown)
	for _, key := range unknown {
		warn("unknown option %q ignored (known options: %s)", key, strings.Join(known, ", "))
	}
	r.resolveMCP(spec, rc, home)
	for _, o := range spec.outputs {
		if o.kind == mcpKind || (o.user && !rc.Scope.User()) || (!o.user && !rc.Scope.Project()) || !o.enabled(rc.Config) {
			continue
		}
		base := rc.ProjectRoot
		if o.user {
			base = home
		}
		p := resolvePath(rc, base, rc.Config.OptionString(o.path, o.def))
		r.paths[outputKey{o.kind, o.user}] = p
		if o.file {
			// The folder of a single file also holds the user's own files.
			r.addRoot(p.Dir(), false)
		} else {
			r.addRoot(p, true)
		}
	}
	return r
}

// reserve makes room for about as many files as modules hold: most
// render one file per module file, and a 10,000-file render would
// otherwise copy its file list over and over as it grows.
func (r *renderer) reserve(modules []*module.LoadedModule) {
	n := 0
	for _, lm := range modules {
		n += len(lm.Files)
	}
	r.files = slices.Grow(r.files, n)
}

// addRoot adds a managed root; a folder shared by a file output and a folder
// output never scans extras.
func (r *renderer) addRoot(p fsys.AbsPath, scanExtras bool) {
	if prev, ok := r.roots[p]; ok {
		scanExtras = scanExtras && prev
	}
	r.roots[p] = scanExtras
}

// path returns the resolved location of an enabled output.
func (r *renderer) path(kind string, user bool) (fsys.AbsPath, bool) {
	p, ok := r.paths[outputKey{kind, user}]
	return p, ok
}

// all returns the paths of an output kind in every enabled scope, user first.
func (r *renderer) all(kind string) []fsys.AbsPath {
	var out []fsys.AbsPath
	for _, user := range []bool{true, false} {
		if p, ok := r.path(kind, user); ok {
			out = append(out, p)
		}
	}
	return out
}

// add records one desired file.
func (r *renderer) add(p fsys.AbsPath, data []byte, mode fs.FileMode, ids ...string) {
	ids = slices.Clone(ids)
	sort.Strings(ids)
	if mode == 0 {
		mode = 0o644
	}
	r.files = append(r.files, target.DesiredFile{Path: p, Data: data, Mode: mode, ModuleIDs: ids})
}

// copyFile records f at p, byte for byte with its mode, naming the source
// file the bytes came from.
func (r *renderer) copyFile(p fsys.AbsPath, f *module.File, ids ...string) {
	r.add(p, f.Data, f.Mode, ids...)
	last := &r.files[len(r.files)-1]
	last.Src, last.SrcSHA256, last.SrcUse = f.Src, f.SHA256, f.Use
}

// copyModule writes every file of lm under dir, byte for byte with its mode.
// The files share one module id list (nothing changes a file's list in
// place); past what reserve made room for, the file list doubles.
func (r *renderer) copyModule(dir fsys.AbsPath, lm *module.LoadedModule) {
	if n := len(lm.Files); cap(r.files)-len(r.files) < n {
		r.files = slices.Grow(r.files, max(n, len(r.files)))
	}
	ids := []string{lm.ID}
	for i := range lm.Files {
		f := &lm.Files[i]
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		r.files = append(r.files, target.DesiredFile{Path: under(dir, f.Path), Data: f.Data, Mode: mode, ModuleIDs: ids, Src: f.Src, SrcSHA256: f.SHA256, SrcUse: f.Use})
	}
}

// mainFile returns the base name of the module's principal file.
func mainFile(lm *module.LoadedModule) string {
	if lm.Main == nil {
		return lm.Name() + ".md"
	}
	return path.Base(lm.Main.Path)
}

// dropKeys warns, once per module and key, about frontmatter keys that are
// neither kept nor known metadata, and reports whether any key was dropped.
func (r *renderer) dropKeys(lm *module.LoadedModule, what string, keep, meta []string) bool {
	dropped := false
	for _, key := range lm.Frontmatter.Keys() {
		if slices.Contains(keep, key) || slices.Contains(meta, key) {
			continue
		}
		dropped = true
		id := lm.ID + "\x00" + what + "\x00" + key
		if !r.warned[id] {
			r.warned[id] = true
			r.warn("module %s: frontmatter key %q dropped (%s %s cannot use it)", lm.ID, key, r.spec.name, what)
		}
	}
	return dropped
}

// output returns the collected roots and files, sorted by path.
func (r *renderer) output() *target.Output {
	out := &target.Output{Files: r.files}
	for p, scan := range r.roots {
		out.Roots = append(out.Roots, target.Root{Path: p, ScanExtras: scan})
	}
	sort.Slice(out.Roots, func(i, j int) bool { return out.Roots[i].Path < out.Roots[j].Path })
	sort.SliceStable(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out
}

// agentKeys is the frontmatter an agent keeps in Claude Code and Cursor.
var agentKeys = []string{"name", "description", "tools", "model"}

// markdownAgent renders an agent file that keeps only the keys in keep: the
// source bytes when nothing is dropped, else the kept frontmatter and body.
func (r *renderer) markdownAgent(lm *module.LoadedModule, keep []string) []byte {
	if !r.dropKeys(lm, "agents", keep, nil) {
		return lm.Main.Data
	}
	return lm.Frontmatter.Subset(keep...).Render(lm.Body)
}
