package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// importFound is one asset found on disk.
type importFound struct {
	spot importSpot
	path string
	name string
	// fileName is the base name of a single-file asset.
	fileName string
	files    []module.File
	hash     string
	skip     string // ImportSkipManaged or ImportSkipInvalid
}

// importPlanner builds (and writes) one import plan.
type importPlanner struct {
	e        *Engine
	m        *manifest.Manifest
	req      Request
	warnings []string
	// managed caches, per folder, the managed paths its target manifests
	// list (absolute).
	managed map[string][]string
	items   []ImportItem
	creates []importCreate
}

// importCreate is what --apply writes for one create item.
type importCreate struct {
	mod   module.Module
	dest  string // absolute module file or folder
	files []module.File
	// single is true when dest is the module's one file.
	single bool
}

func (ip *importPlanner) warn(format string, args ...any) {
	ip.warnings = append(ip.warnings, fmt.Sprintf(format, args...))
}

func (ip *importPlanner) plan() *ImportData {
	e := ip.e
	proj := e.projectRoot().String()
	out := &ImportData{Repo: ip.m.Dir, RepoPosix: filepath.ToSlash(ip.m.Dir), HomeRoot: e.Env.Home,
		HomeRootPosix: filepath.ToSlash(e.Env.Home), ProjectRoot: proj, ProjectRootPosix: filepath.ToSlash(proj),
		Profile: ImportProfile, Plan: []ImportItem{}, Conflicts: []ImportConflict{}}
	var found []*importFound
	seen := map[string]bool{}
	for _, sp := range e.importSpots(ip.m) {
		if ip.req.Target != "" && ip.req.Target != "all" && ip.req.Target != sp.target {
			continue
		}
		for _, f := range ip.find(sp) {
			if k := sp.target + "\x00" + f.path; !seen[k] {
				seen[k] = true
				found = append(found, f)
			}
		}
	}
	var valid []*importFound
	for _, f := range found {
		if f.skip != "" {
			ip.addItem(f.skip, baseImportID(f), []*importFound{f}, "", false)
			continue
		}
		valid = append(valid, f)
	}
	out.Conflicts = append(out.Conflicts, ip.group(valid)...)
	out.Conflicts = append(out.Conflicts, ip.destConflicts()...)
	sort.SliceStable(ip.items, func(i, j int) bool {
		if ip.items[i].ModuleID != ip.items[j].ModuleID {
			return ip.items[i].ModuleID < ip.items[j].ModuleID
		}
		return ip.items[i].SourcePath < ip.items[j].SourcePath
	})
	out.Plan = append(out.Plan, ip.items...)
	for _, it := range out.Plan {
		switch it.Op {
		case ImportCreate:
			out.Summary.Create++
		case ImportSkipExisting:
			out.Summary.SkippedExistingModule++
		case ImportSkipInvalid:
			out.Summary.SkippedInvalid++
		case ImportSkipManaged:
			out.Summary.SkippedManaged++
		case ImportSkipDuplicate:
			out.Summary.SkippedDuplicate++
		}
	}
	out.Summary.Candidates = len(found)
	ip.explain()
	out.NextActions = ip.nextActions(false)
	return out
}

// find lists the assets of one spot.
func (ip *importPlanner) find(sp importSpot) []*importFound {
	sys := ip.e.Sys
	if sp.typ == module.TypeMCP {
		return ip.findMCP(sp)
	}
	if sp.file != "" {
		p := filepath.Join(sp.dir, sp.file)
		if fi, err := sys.Lstat(fsys.AbsPath(p)); err != nil || fi.IsDir() {
			return nil
		}
		return []*importFound{ip.load(sp, p, sp.file)}
	}
	ents, err := sys.ReadDir(fsys.AbsPath(sp.dir))
	if err != nil {
		return nil
	}
	var out []*importFound
	for _, ent := range ents {
		name := ent.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(sp.dir, name)
		isDir := ent.IsDir()
		if ent.Type()&fs.ModeSymlink != 0 {
			_, derr := sys.ReadDir(fsys.AbsPath(p))
			isDir = derr == nil
		}
		switch {
		case sp.suffix == "" && isDir:
			out = append(out, ip.load(sp, p, name))
		case sp.suffix != "" && !isDir && len(name) > len(sp.suffix) && strings.EqualFold(name[len(name)-len(sp.suffix):], sp.suffix):
			out = append(out, ip.load(sp, p, name))
		}
	}
	return out
}

// load reads and validates one asset.
func (ip *importPlanner) load(sp importSpot, p, base string) *importFound {
	f := &importFound{spot: sp, path: p, fileName: base, name: importName(sp, base)}
	if ip.isManaged(p, sp.typ == module.TypeSkill) {
		f.skip = ImportSkipManaged
		return f
	}
	id := string(sp.typ) + ":" + module.SafeName(f.name)
	invalid := func(err error) *importFound {
		ip.warn("import: skipping %s: %s", p, apperr.As(err).Message)
		f.skip = ImportSkipInvalid
		return f
	}
	switch sp.typ {
	case module.TypeInstructions:
		data, err := ip.e.Sys.ReadFile(fsys.AbsPath(p))
		if err != nil {
			return invalid(err)
		}
		if _, _, err := frontmatter.Parse(data); err != nil {
			return invalid(fmt.Errorf("%v", err))
		}
		f.files = []module.File{{Path: "AGENTS.md", Data: data, Mode: 0o644}}
	default:
		src := p
		if fi, err := ip.e.Sys.Lstat(fsys.AbsPath(p)); err == nil && fi.Mode()&fs.ModeSymlink != 0 && sp.typ == module.TypeSkill {
			real, err := fsys.EvalSymlinks(ip.e.Sys, fsys.AbsPath(p))
			if err != nil {
				return invalid(err)
			}
			ip.warn("import: followed the symlinked skill folder %s -> %s; deploy never writes through a linked folder, so replace the link with a real folder (or remove it) before deploying", p, real)
			src = real.String()
		}
		lm, err := module.LoadModule(ip.e.Sys, &module.Module{ID: id, Type: sp.typ}, src)
		if err != nil {
			return invalid(err)
		}
		f.files = lm.Files
		if sp.typ != module.TypeSkill {
			f.files[0].Path = base
		}
	}
	h := sha256.New()
	for _, mf := range f.files {
		if sp.typ == module.TypeSkill {
			fmt.Fprintf(h, "%s\x00%o\x00", mf.Path, mf.Mode)
		}
		h.Write(mf.Data)
		h.Write([]byte{0})
	}
	f.hash = hex.EncodeToString(h.Sum(nil))
	return f
}

// importName is the module name an asset gets: the folder of a skill, the
// file name without its type suffix, the stem of a cursor rule, and "user"
// or "project" for the instruction files.
func importName(sp importSpot, base string) string {
	switch {
	case sp.typ == module.TypeSkill:
		return base
	case sp.file != "":
		return sp.scope
	}
	name := base[:len(base)-len(sp.suffix)]
	if sp.suffix == ".md" {
		if n, ok := strings.CutSuffix(name, ".prompt"); ok && n != "" && sp.typ == module.TypePrompt {
			name = n
		}
	}
	return name
}

func baseImportID(f *importFound) string {
	return string(f.spot.typ) + ":" + module.SafeName(f.name)
}

// isManaged reports whether an agentpack target manifest in a folder above p
// lists p (or, for a folder, anything below it).
func (ip *importPlanner) isManaged(p string, dir bool) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		for _, mp := range ip.managedIn(d) {
			if mp == p || (dir && strings.HasPrefix(mp, p+string(filepath.Separator))) {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func (ip *importPlanner) managedIn(dir string) []string {
	if paths, ok := ip.managed[dir]; ok {
		return paths
	}
	var paths []string
	ents, _ := ip.e.Sys.ReadDir(fsys.AbsPath(dir))
	for _, ent := range ents {
		if !plan.IsTargetManifestName(ent.Name()) {
			continue
		}
		data, err := ip.e.Sys.ReadFile(fsys.AbsPath(dir).JoinName(ent.Name()))
		var tm plan.TargetManifest
		if err != nil || json.Unmarshal(data, &tm) != nil || tm.SchemaVersion != plan.TargetManifestSchemaVersion {
			continue
		}
		for _, mf := range tm.ManagedFiles {
			if plan.SafeRelPath(mf.Path) {
				paths = append(paths, filepath.Join(dir, filepath.FromSlash(mf.Path)))
			}
		}
	}
	ip.managed[dir] = paths
	return paths
}

var scopeOrder = map[string]int{"user": 0, "project": 1}

// group merges identical assets with the same id into one module. Assets
// with the same id and different content get ids suffixed with their
// targets, unless they share a target (one path per target): then the
// later ones are skipped and reported.
func (ip *importPlanner) group(valid []*importFound) []ImportConflict {
	sort.SliceStable(valid, func(i, j int) bool {
		a, b := valid[i], valid[j]
		if x, y := baseImportID(a), baseImportID(b); x != y {
			return x < y
		}
		if a.spot.scope != b.spot.scope {
			return scopeOrder[a.spot.scope] < scopeOrder[b.spot.scope]
		}
		if a.spot.target != b.spot.target {
			return a.spot.target < b.spot.target
		}
		return a.path < b.path
	})
	var conflicts []ImportConflict
	ids := map[string]bool{}
	for i := 0; i < len(valid); {
		j := i
		base := baseImportID(valid[i])
		for j < len(valid) && baseImportID(valid[j]) == base {
			j++
		}
		var clusters [][]*importFound
		for _, f := range valid[i:j] {
			k := -1
			for c := range clusters {
				if clusters[c][0].hash == f.hash {
					k = c
				}
			}
			if k < 0 {
				clusters = append(clusters, nil)
				k = len(clusters) - 1
			}
			clusters[k] = append(clusters[k], f)
		}
		used := map[string]bool{}
		var keep, dup [][]*importFound
		for _, c := range clusters {
			ts := foundTargets(c)
			if slices.ContainsFunc(ts, func(t string) bool { return used[t] }) {
				dup = append(dup, c)
				continue
			}
			for _, t := range ts {
				used[t] = true
			}
			keep = append(keep, c)
		}
		for _, c := range keep {
			id, suffixed := base, len(keep) > 1
			if suffixed {
				id = base + "-" + strings.Join(foundTargets(c), "-")
			}
			op := ImportCreate
			switch {
			case ids[id]:
				op = ImportSkipDuplicate
			case moduleByID(ip.m, id) != nil:
				op = ImportSkipExisting
			}
			ids[id] = true
			ip.addItem(op, id, c, "", suffixed)
		}
		if len(dup) > 0 {
			var paths []string
			for _, c := range clusters {
				for _, f := range c {
					paths = append(paths, f.path)
				}
			}
			for _, c := range dup {
				ip.addItem(ImportSkipDuplicate, base, c, conflictDuplicateID, false)
			}
			conflicts = append(conflicts, newConflict(conflictDuplicateID, base, paths,
				"these assets would get the same module id with different content; rename one (or make them identical) and run import again"))
		}
		i = j
	}
	return conflicts
}

func foundTargets(c []*importFound) []string {
	set := map[string]bool{}
	for _, f := range c {
		set[f.spot.target] = true
	}
	return keys(set)
}

func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// addItem records one plan item for assets c (and, for a create, what to
// write).
func (ip *importPlanner) addItem(op, id string, c []*importFound, reason string, suffixed bool) {
	f := c[0]
	mod := module.Module{ID: id, Type: f.spot.typ, Tags: []string{ImportTag}, Targets: foundTargets(c)}
	rel, single, files := importDest(mod, c, suffixed)
	dest := filepath.Join(ip.m.Dir, filepath.FromSlash(rel))
	it := ImportItem{Op: op, ModuleID: id, ModuleType: f.spot.typ, Targets: mod.Targets, Tags: mod.Tags,
		SourcePath: f.path, SourcePathPosix: filepath.ToSlash(f.path), DestPath: dest, DestPathPosix: filepath.ToSlash(dest),
		ModulePath: rel, Files: len(files), SkipReason: reason}
	if op != ImportCreate && reason == "" && op != ImportSkipDuplicate {
		it.SkipReason = map[string]string{ImportSkipExisting: "module_id_already_exists", ImportSkipInvalid: "invalid_module_source",
			ImportSkipManaged: "managed_by_agentpack"}[op]
	}
	if op == ImportSkipDuplicate && it.SkipReason == "" {
		it.SkipReason = "duplicate_module_id"
	}
	scopes := map[string]bool{}
	for _, x := range c {
		it.SourcePaths = append(it.SourcePaths, x.path)
		it.SourcePathsPosix = append(it.SourcePathsPosix, filepath.ToSlash(x.path))
		scopes[x.spot.scope] = true
	}
	it.Scope = f.spot.scope
	if len(scopes) > 1 {
		it.Scope = "both"
	}
	ip.items = append(ip.items, it)
	if op == ImportCreate {
		mod.Source.LocalPath = &module.LocalPathSource{Path: rel}
		ip.creates = append(ip.creates, importCreate{mod: mod, dest: dest, files: files, single: single})
	}
}

// importDest is where a module goes in the repo (repo-relative, '/'):
// modules/skills/<name>/ and modules/instructions/<name>/AGENTS.md folders,
// modules/agents/<name>.md, and modules/prompts|commands/<file> (in a
// <name>/ folder when the id was suffixed, so the file keeps the name the
// targets deploy it under).
func importDest(mod module.Module, c []*importFound, suffixed bool) (string, bool, []module.File) {
	f := c[0]
	name := mod.Name()
	files := f.files
	switch mod.Type {
	case module.TypeSkill:
		return "modules/skills/" + name, false, files
	case module.TypeInstructions:
		return "modules/instructions/" + name, false, files
	case module.TypeAgent:
		file := name + ".md"
		return "modules/agents/" + file, true, renamed(files, file)
	case module.TypeMCP:
		file := name + ".yaml"
		return "modules/mcp/" + file, true, renamed(files, file)
	}
	file := f.fileName
	if mod.Type == module.TypePrompt {
		// Codex deploys a prompt under its file name, VS Code under
		// <name>.prompt.md, which <name>.md also gives.
		file = module.SafeName(f.name) + ".md"
		for _, x := range c {
			if x.spot.target == "codex" {
				file = x.fileName
			}
		}
	}
	dir := "modules/" + string(mod.Type) + "s/"
	if suffixed {
		dir += name + "/"
	}
	return dir + file, true, renamed(files, file)
}

func renamed(files []module.File, name string) []module.File {
	if len(files) != 1 {
		return files
	}
	f := files[0]
	f.Path = name
	return []module.File{f}
}

// destConflicts marks creates whose destination exists in the repo, or is
// claimed twice.
func (ip *importPlanner) destConflicts() []ImportConflict {
	var exists, twice []string
	claimed := map[string]bool{}
	for i := range ip.items {
		it := &ip.items[i]
		if it.Op != ImportCreate {
			continue
		}
		if _, err := ip.e.Sys.Lstat(fsys.AbsPath(it.DestPath)); err == nil {
			it.DestExists = true
			exists = append(exists, it.DestPath)
		}
		if claimed[it.DestPath] {
			twice = append(twice, it.DestPath)
		}
		claimed[it.DestPath] = true
	}
	var out []ImportConflict
	if len(exists) > 0 {
		out = append(out, newConflict(conflictDestExists, "", exists,
			"delete or move the conflicting destination paths in the config repo, then re-run import"))
	}
	if len(twice) > 0 {
		out = append(out, newConflict(conflictDuplicateDst, "", twice,
			"two assets map to the same module path; rename one of them, then re-run import"))
	}
	return out
}

func newConflict(kind, id string, paths []string, hint string) ImportConflict {
	sort.Strings(paths)
	c := ImportConflict{Kind: kind, Count: len(paths), ModuleID: id, Hint: hint, SamplePaths: []string{}, SamplePathsPosix: []string{}}
	for i, p := range paths {
		if i == 20 {
			break
		}
		c.SamplePaths = append(c.SamplePaths, p)
		c.SamplePathsPosix = append(c.SamplePathsPosix, filepath.ToSlash(p))
	}
	return c
}

// importConflictError is E_IMPORT_CONFLICT for conflicts that block --apply.
func importConflictError(cs []ImportConflict) error {
	var paths, posix []string
	hint := ""
	for _, c := range cs {
		if c.Kind == conflictDestExists || c.Kind == conflictDuplicateDst {
			paths = append(paths, c.SamplePaths...)
			posix = append(posix, c.SamplePathsPosix...)
			hint = c.Hint
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return apperr.New(apperr.ImportConflict, "import destination already exists; refusing to overwrite %s", strings.Join(paths, ", ")).
		WithHint("%s", hint).With("count", len(paths)).With("paths", paths).With("paths_posix", posix).
		With("reason_code", "import_conflict").With("next_actions", []string{"resolve_import_conflict", "retry_import_apply"})
}

var cursorUnsafe = lazyregexp.New(`[^A-Za-z0-9_-]`)

// explain warns about imports that will not deploy back onto the same
// files: cursor rules get agentpack's own file names, and several
// instructions modules for one target are joined into every one of its
// instruction files.
func (ip *importPlanner) explain() {
	byTarget := map[string][]string{}
	for _, c := range ip.creates {
		if c.mod.Type != module.TypeInstructions {
			continue
		}
		for _, t := range c.mod.Targets {
			byTarget[t] = append(byTarget[t], c.mod.ID)
		}
		if slices.Contains(c.mod.Targets, "cursor") {
			key := cursorUnsafe.ReplaceAllString(c.mod.ID, "_")
			if len(key) > 64 {
				key = key[:64]
			}
			sum := sha256.Sum256([]byte(c.mod.ID))
			ip.warn("import: %s will deploy as .cursor/rules/%s--%s.mdc; remove the original rule after deploying, or cursor reads it twice",
				c.mod.ID, key, hex.EncodeToString(sum[:])[:10])
		}
	}
	for _, t := range keys(mapKeys(byTarget)) {
		if ids := byTarget[t]; len(ids) > 1 && t != "cursor" {
			ip.warn("import: %s become %d instructions modules for %s; agentpack joins them (with module markers) into each of its instruction files, so deploying rewrites them",
				strings.Join(ids, ", "), len(ids), t)
		}
	}
	for _, t := range keys(mapKeys(ip.createTargets())) {
		if _, ok := ip.m.Targets[t]; !ok {
			ip.warn("import: agentpack.yaml configures no %s target, so the modules imported for it deploy nowhere until you add one", t)
		}
	}
}

func (ip *importPlanner) createTargets() map[string][]string {
	out := map[string][]string{}
	for _, c := range ip.creates {
		for _, t := range c.mod.Targets {
			out[t] = append(out[t], c.mod.ID)
		}
	}
	return out
}

func mapKeys(m map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func (ip *importPlanner) nextActions(applied bool) []string {
	prefix := "agentpack"
	if ip.req.Repo != "" {
		prefix += " --repo " + ip.req.Repo
	}
	if len(ip.creates) == 0 {
		return []string{}
	}
	if !applied {
		return []string{prefix + " import --apply"}
	}
	return []string{prefix + " --profile " + ImportProfile + " preview --diff", prefix + " --profile " + ImportProfile + " deploy --apply"}
}
