package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"github.com/go-git/go-git/v5/plumbing"
)

// Artifact is one asset found in an artifact source (SPEC §10): something
// `agentpack add <type> <source_spec>` can turn into a module.
type Artifact struct {
	// Source is the name of the artifact source it was found in.
	Source string      `json:"source"`
	Type   module.Type `json:"type"`
	Name   string      `json:"name"`
	// Path is repo-relative with '/' separators (a folder for skills, a file
	// otherwise); PathPosix is the same path, for the *_posix convention.
	Path        string `json:"path"`
	PathPosix   string `json:"path_posix"`
	Description string `json:"description"`
	// TreeHash is the git object id of Path at the pinned commit (a tree for
	// folders, a blob for files); see [GitObjectHash].
	TreeHash string `json:"tree_hash"`
	// SourceSpec is ready for `agentpack add <type> <source_spec>`.
	SourceSpec string `json:"source_spec"`
	// UsedBy lists the ids of the modules whose git source is this path of
	// this repository.
	UsedBy []string `json:"used_by"`

	hasFrontmatter  bool
	frontmatterName string
}

// artifactDirs maps a folder name to the artifact type of the Markdown files
// below it.
var artifactDirs = map[string]module.Type{
	"prompts":      module.TypePrompt,
	"commands":     module.TypeCommand,
	"agents":       module.TypeAgent,
	"instructions": module.TypeInstructions,
}

// ArtifactTypes are the types a scan can report, in report order.
var ArtifactTypes = []module.Type{module.TypeSkill, module.TypeInstructions, module.TypePrompt, module.TypeCommand, module.TypeAgent}

// skippedDirs are never scanned.
var skippedDirs = map[string]bool{".git": true, "node_modules": true}

// ScanArtifacts finds the artifacts in fsys below root ("" for all of it):
// a folder with SKILL.md is a skill (its files are not scanned further);
// a Markdown file below a prompts/, commands/ or instructions/ folder is a
// prompt, command or instructions; one below agents/ is an agent when it has
// frontmatter; AGENTS.md and CLAUDE.md directly in root are instructions.
// A folder with AGENTS.md below an instructions/ folder is one instructions
// artifact. README.md files are never artifacts. The nearest such folder
// decides.
// Paths are fsys-relative; results are sorted by type, then path. Only
// Source, Type, Name, Path, PathPosix, Description and TreeHash are set.
func ScanArtifacts(fsys fs.FS, root string) ([]Artifact, error) {
	root = strings.Trim(path.Clean("/"+root), "/")
	start := root
	if start == "" {
		start = "."
	}
	var out []Artifact
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != start && skippedDirs[d.Name()] {
				return fs.SkipDir
			}
			if isRegular(fsys, path.Join(p, "SKILL.md")) {
				a, err := newArtifact(fsys, module.TypeSkill, p, path.Join(p, "SKILL.md"))
				if err != nil {
					return err
				}
				if p == "." {
					// The repository itself is one skill: SKILL.md names it.
					a.Path, a.PathPosix, a.Name = "", "", a.frontmatterName
				}
				out = append(out, a)
				return fs.SkipDir
			}
			if p != start && instructionsFolder(rel(root, p)) && isRegular(fsys, path.Join(p, "AGENTS.md")) {
				a, err := newArtifact(fsys, module.TypeInstructions, p, path.Join(p, "AGENTS.md"))
				if err != nil {
					return err
				}
				a.Name = path.Base(p)
				out = append(out, a)
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.EqualFold(path.Ext(p), ".md") || strings.EqualFold(d.Name(), "README.md") {
			return nil
		}
		typ, ok := classify(rel(root, p))
		if !ok {
			return nil
		}
		a, err := newArtifact(fsys, typ, p, p)
		if err != nil {
			return err
		}
		if typ == module.TypeAgent && !a.hasFrontmatter {
			return nil
		}
		out = append(out, a)
		return nil
	})
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && root != "") {
		return nil, err
	}
	sortArtifacts(out)
	for i := range out {
		out[i].hasFrontmatter, out[i].frontmatterName = false, ""
	}
	return out, nil
}

func rel(root, p string) string {
	if root == "" {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
}

// classify names the type of a Markdown file from its path below the scan
// root.
func classify(relPath string) (module.Type, bool) {
	segs := strings.Split(relPath, "/")
	if len(segs) == 1 {
		switch strings.ToUpper(segs[0]) {
		case "AGENTS.MD", "CLAUDE.MD":
			return module.TypeInstructions, true
		}
		return "", false
	}
	for i := len(segs) - 2; i >= 0; i-- {
		if t, ok := artifactDirs[strings.ToLower(segs[i])]; ok {
			return t, true
		}
	}
	return "", false
}

// instructionsFolder reports whether the folder relDir is below an
// instructions/ folder (the nearest typed folder deciding), so that an
// AGENTS.md in it makes the folder one instructions module.
func instructionsFolder(relDir string) bool {
	segs := strings.Split(relDir, "/")
	t, ok := classify(strings.Join(append(segs, "x.md"), "/"))
	return ok && t == module.TypeInstructions && !strings.EqualFold(segs[len(segs)-1], "instructions")
}

func isRegular(fsys fs.FS, p string) bool {
	fi, err := fs.Stat(fsys, p)
	return err == nil && fi.Mode().IsRegular()
}

// newArtifact describes the artifact at p; main is the Markdown file whose
// frontmatter holds the description.
func newArtifact(fsys fs.FS, typ module.Type, p, main string) (Artifact, error) {
	a := Artifact{Type: typ, Path: p, PathPosix: p, Name: artifactName(typ, p), UsedBy: []string{}}
	data, err := fs.ReadFile(fsys, main)
	if err != nil {
		return a, err
	}
	if fm, _, err := frontmatter.Parse(data); err == nil && fm != nil {
		a.Description = fm.String("description")
		a.hasFrontmatter, a.frontmatterName = true, fm.String("name")
	}
	if a.TreeHash, err = GitObjectHash(fsys, p); err != nil {
		return a, err
	}
	return a, nil
}

// artifactName is the folder name of a skill, else the file name without
// .md (and without .prompt/.agent/.instructions before it); root AGENTS.md and
// CLAUDE.md are "agents" and "claude".
func artifactName(typ module.Type, p string) string {
	base := path.Base(p)
	if typ == module.TypeSkill {
		return base
	}
	name := base[:len(base)-len(path.Ext(base))]
	for _, suffix := range []string{".prompt", ".agent", ".instructions"} {
		if n, ok := strings.CutSuffix(name, suffix); ok && n != "" {
			name = n
			break
		}
	}
	if typ == module.TypeInstructions && !strings.Contains(p, "/") {
		name = strings.ToLower(name)
	}
	return name
}

func sortArtifacts(as []Artifact) {
	sort.SliceStable(as, func(i, j int) bool { return typeThen(as[i], as[j], as[i].Path < as[j].Path) })
}

// typeThen orders a before b by type in [ArtifactTypes] order, then by
// less.
func typeThen(a, b Artifact, less bool) bool {
	if a.Type != b.Type {
		return slices.Index(ArtifactTypes, a.Type) < slices.Index(ArtifactTypes, b.Type)
	}
	return less
}

// GitObjectHash returns the git object id (hex SHA-1) that git gives p in
// fsys: a blob for a file or symlink, a tree for a folder, computed from the
// files as git would hash them (mode 100755 when the owner may execute,
// 100644 otherwise, 120000 for symlinks; empty folders left out). Entries
// named .git, and the cache's checkout marker at the fsys root, are not part
// of the tree.
//
// Run over a cached checkout of a commit, the result equals
// `git rev-parse <commit>:<p>` unless the folder holds submodules or
// symlinks the cache leaves out (those pointing outside the checkout).
func GitObjectHash(fsys fs.FS, p string) (string, error) {
	if p == "" {
		p = "."
	}
	fi, err := fs.Lstat(fsys, p)
	if err != nil {
		return "", err
	}
	h, _, err := gitObject(fsys, p, fi)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// gitObject hashes one entry; empty reports a folder with no files, which
// git cannot record.
func gitObject(fsys fs.FS, p string, fi fs.FileInfo) (h plumbing.Hash, empty bool, err error) {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(fsys, p)
		if err != nil {
			return h, false, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), false, nil
	case fi.IsDir():
		return gitTree(fsys, p)
	case fi.Mode().IsRegular():
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return h, false, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, data), false, nil
	}
	return h, true, nil
}

type treeEntry struct {
	name, mode string
	hash       plumbing.Hash
}

func gitTree(fsys fs.FS, dir string) (plumbing.Hash, bool, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	var entries []treeEntry
	for _, e := range ents {
		if e.Name() == ".git" || (dir == "." && e.Name() == lockfile.TreeMarker) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		child := path.Join(dir, e.Name())
		h, empty, err := gitObject(fsys, child, fi)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if empty {
			continue
		}
		mode := "100644"
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			mode = "120000"
		case fi.IsDir():
			mode = "40000"
		case fi.Mode()&0o100 != 0:
			mode = "100755"
		}
		entries = append(entries, treeEntry{name: e.Name(), mode: mode, hash: h})
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	// git orders entries by name, comparing a folder's name as if it ended
	// in '/'.
	key := func(t treeEntry) string {
		if t.mode == "40000" {
			return t.name + "/"
		}
		return t.name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	var buf bytes.Buffer
	for _, t := range entries {
		fmt.Fprintf(&buf, "%s %s\x00", t.mode, t.name)
		buf.Write(t.hash[:])
	}
	return plumbing.ComputeHash(plumbing.TreeObject, buf.Bytes()), false, nil
}

// ShortHash is the first 12 hex digits of a commit or object id.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// SourceScanData is the data of `agentpack source scan`.
type SourceScanData struct {
	Source    SourceInfo `json:"source"`
	Artifacts []Artifact `json:"artifacts"`
}

// SourceScan lists the artifacts of a source at its pinned commit, fetching
// the commit into the cache when it is missing. typ ("" for all) filters.
func (e *Engine) SourceScan(ctx context.Context, req Request, name, typ string) (*SourceScanData, []string, error) {
	if err := checkArtifactType(typ); err != nil {
		return nil, nil, err
	}
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	src, err := findSource(m, name)
	if err != nil {
		return nil, m.Warnings, err
	}
	dir, err := e.sourceCheckout(ctx, *src)
	if err != nil {
		return nil, m.Warnings, err
	}
	arts, err := e.scanSource(m, *src, dir, src.Commit)
	if err != nil {
		return nil, m.Warnings, err
	}
	return &SourceScanData{Source: e.sourceInfo(*src), Artifacts: filterType(arts, typ)}, append(m.Warnings, e.takeRepairs()...), nil
}

// SourceCandidatesData is the data of `agentpack source candidates`.
type SourceCandidatesData struct {
	// ScannedSources are the names of the sources that were scanned.
	ScannedSources []string `json:"scanned_sources"`
	// Candidates are the artifacts no module uses yet.
	Candidates []Artifact `json:"candidates"`
}

// SourceCandidates lists the artifacts of every source (or only the named
// one) that no module uses yet.
func (e *Engine) SourceCandidates(ctx context.Context, req Request, name, typ string) (*SourceCandidatesData, []string, error) {
	if err := checkArtifactType(typ); err != nil {
		return nil, nil, err
	}
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	warnings := append([]string(nil), m.Warnings...)
	srcs := m.Sources
	if name != "" {
		src, err := findSource(m, name)
		if err != nil {
			return nil, warnings, err
		}
		srcs = []manifest.ArtifactSource{*src}
	}
	out := &SourceCandidatesData{ScannedSources: []string{}, Candidates: []Artifact{}}
	for _, src := range srcs {
		if src.Commit == "" && name == "" {
			warnings = append(warnings, "source "+src.Name+" has no pinned commit; run `agentpack source update "+src.Name+"`")
			continue
		}
		dir, err := e.sourceCheckout(ctx, src)
		if err != nil {
			return nil, warnings, err
		}
		arts, err := e.scanSource(m, src, dir, src.Commit)
		if err != nil {
			return nil, warnings, err
		}
		out.ScannedSources = append(out.ScannedSources, src.Name)
		for _, a := range filterType(arts, typ) {
			if len(a.UsedBy) == 0 {
				out.Candidates = append(out.Candidates, a)
			}
		}
	}
	return out, append(warnings, e.takeRepairs()...), nil
}

// ArtifactChange is an artifact whose tree hash differs between two commits;
// the artifact fields describe the new commit.
type ArtifactChange struct {
	Artifact
	OldTreeHash string `json:"old_tree_hash"`
}

// SourceDiffData is the data of `agentpack source diff`.
type SourceDiffData struct {
	Source     SourceInfo `json:"source"`
	FromCommit string     `json:"from_commit"`
	ToCommit   string     `json:"to_commit"`
	// UpToDate is true when the ref still names the pinned commit.
	UpToDate bool `json:"up_to_date"`
	// New, Modified and Removed compare artifacts by type and path; New and
	// Modified describe the new commit, Removed the pinned one.
	New       []Artifact       `json:"new"`
	Modified  []ArtifactChange `json:"modified"`
	Removed   []Artifact       `json:"removed"`
	Unchanged int              `json:"unchanged"`
}

// SourceDiff fetches the commit the source's ref names now into the cache,
// without moving the pin, and compares its artifacts with the pinned ones by
// git tree hash.
func (e *Engine) SourceDiff(ctx context.Context, req Request, name string) (*SourceDiffData, []string, error) {
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	src, err := findSource(m, name)
	if err != nil {
		return nil, m.Warnings, err
	}
	newCommit, newDir, err := e.checkout(ctx, src.URL, src.Ref)
	if err != nil {
		return nil, m.Warnings, err
	}
	var old []Artifact
	if src.Commit != "" {
		oldDir, err := e.sourceCheckout(ctx, *src)
		if err != nil {
			return nil, m.Warnings, err
		}
		if old, err = e.scanSource(m, *src, oldDir, src.Commit); err != nil {
			return nil, m.Warnings, err
		}
	}
	cur, err := e.scanSource(m, *src, newDir, newCommit)
	if err != nil {
		return nil, m.Warnings, err
	}
	out := diffArtifacts(old, cur)
	out.Source, out.FromCommit, out.ToCommit = e.sourceInfo(*src), src.Commit, newCommit
	out.UpToDate = strings.EqualFold(src.Commit, newCommit)
	return out, append(m.Warnings, e.takeRepairs()...), nil
}

func diffArtifacts(old, cur []Artifact) *SourceDiffData {
	out := &SourceDiffData{New: []Artifact{}, Modified: []ArtifactChange{}, Removed: []Artifact{}}
	key := func(a Artifact) string { return string(a.Type) + "\x00" + a.Path }
	before := map[string]Artifact{}
	for _, a := range old {
		before[key(a)] = a
	}
	seen := map[string]bool{}
	for _, a := range cur {
		k := key(a)
		seen[k] = true
		o, ok := before[k]
		switch {
		case !ok:
			out.New = append(out.New, a)
		case o.TreeHash != a.TreeHash:
			out.Modified = append(out.Modified, ArtifactChange{Artifact: a, OldTreeHash: o.TreeHash})
		default:
			out.Unchanged++
		}
	}
	for _, a := range old {
		if !seen[key(a)] {
			out.Removed = append(out.Removed, a)
		}
	}
	return out
}
