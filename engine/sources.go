package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"go.yaml.in/yaml/v3"
)

// SourceInfo is one registered artifact source as the source commands
// report it.
type SourceInfo struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Ref    string `json:"ref"`
	Path   string `json:"path"`
	Commit string `json:"commit"`
	// Cached says whether the pinned commit's checkout is in the git cache
	// (CachePath; "" when no commit is pinned).
	Cached         bool   `json:"cached"`
	CachePath      string `json:"cache_path"`
	CachePathPosix string `json:"cache_path_posix"`
}

// SourceListData is the data of `agentpack source list`.
type SourceListData struct {
	Sources []SourceInfo `json:"sources"`
}

// SourceAddOptions are the arguments of `agentpack source add`.
type SourceAddOptions struct {
	// Spec is owner/repo[@ref], an https URL (GitHub /tree/<ref>/<path>
	// included), git@host:o/r, git+https://, ssh:// or file://.
	Spec string
	// Ref, Path and Name override the spec's ref and path and the default
	// name (the repository's name).
	Ref, Path, Name string
}

// SourceAddData is the data of `agentpack source add`.
type SourceAddData struct {
	Source            SourceInfo `json:"source"`
	ArtifactCount     int        `json:"artifact_count"`
	ManifestPath      string     `json:"manifest_path"`
	ManifestPathPosix string     `json:"manifest_path_posix"`
	DryRun            bool       `json:"dry_run"`
}

// SourceRemoveData is the data of `agentpack source remove`.
type SourceRemoveData struct {
	RemovedSource SourceInfo `json:"removed_source"`
	// PurgedPaths are the cache folders deleted by --purge-cache.
	PurgedPaths       []string `json:"purged_paths"`
	PurgedPathsPosix  []string `json:"purged_paths_posix"`
	ManifestPath      string   `json:"manifest_path"`
	ManifestPathPosix string   `json:"manifest_path_posix"`
	DryRun            bool     `json:"dry_run"`
}

var (
	sourceNameRe = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	shorthandRe  = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]+(@[^@\s]+)?$`)
)

const sourceSpecHint = "use owner/repo[@ref], https://github.com/owner/repo[/tree/<ref>/<path>], " +
	"git@host:org/repo.git, git+https://host/org/repo.git, ssh://… or file:///abs/path/to/repo"

// ParseSourceSpec parses the spec of `source add` into a normalised git URL,
// a ref and a repo-relative path. owner/repo[@ref] is GitHub shorthand; an
// absolute local path becomes a file:// URL; any spec that is not a git
// remote with an allowed scheme is E_SOURCE_URL_INVALID.
func ParseSourceSpec(spec string) (url, ref, subdir string, err error) {
	s := strings.TrimSpace(spec)
	if shorthandRe.MatchString(s) && !strings.HasPrefix(s, ".") {
		s = "gh:" + s
	} else if filepath.IsAbs(s) && !strings.Contains(s, "://") {
		s = "file://" + filepath.ToSlash(s)
	}
	sp, err := gitsource.ParseSpec(s)
	if err != nil {
		if apperr.CodeOf(err) == apperr.InvalidArgument {
			return "", "", "", apperr.Wrap(err, apperr.SourceURLInvalid, "%s", apperr.As(err).Message).
				WithHint(sourceSpecHint).With("spec", spec)
		}
		return "", "", "", err
	}
	if sp.Kind != gitsource.KindGit {
		return "", "", "", apperr.New(apperr.SourceURLInvalid, "%q is not a git repository URL", spec).
			WithHint(sourceSpecHint).With("spec", spec)
	}
	return sp.URL, sp.Ref, sp.Subdir, nil
}

// repoName is the last path element of a git URL without ".git".
func repoName(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	return strings.TrimSuffix(u, ".git")
}

// sameRepo reports whether two git URLs name the same repository, ignoring
// a git+ prefix, a trailing ".git" or "/", the case of the host, and
// file:// versus a bare absolute path.
func sameRepo(a, b string) bool {
	return repoKey(a) == repoKey(b)
}

func repoKey(u string) string {
	if n, err := gitsource.NormalizeURL(u); err == nil {
		u = n
	}
	u = strings.TrimPrefix(u, "file://")
	u = strings.TrimSuffix(strings.TrimRight(u, "/"), ".git")
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		host, p, _ := strings.Cut(rest, "/")
		u = strings.ToLower(u[:i+3]+host) + "/" + p
	}
	return u
}

// loadSources loads the manifest of req (sources included).
func (e *Engine) loadSources(ctx context.Context, req Request) (*manifest.Manifest, error) {
	if err := e.Env.Check(); err != nil {
		return nil, err // the cache lives under $AGENTPACK_HOME
	}
	m, _, err := e.LoadManifest(ctx, req)
	return m, err
}

// findSource returns the named source or E_SOURCE_NOT_FOUND naming the
// registered ones.
func findSource(m *manifest.Manifest, name string) (*manifest.ArtifactSource, error) {
	names := make([]string, 0, len(m.Sources))
	for i := range m.Sources {
		if m.Sources[i].Name == name {
			return &m.Sources[i], nil
		}
		names = append(names, m.Sources[i].Name)
	}
	err := apperr.New(apperr.SourceNotFound, "no artifact source named %q", name).With("name", name).With("sources", names)
	if len(names) == 0 {
		return nil, err.WithHint("no sources are registered; add one with `agentpack source add <owner/repo>`")
	}
	return nil, err.WithHint("registered sources: %s", strings.Join(names, ", "))
}

func (e *Engine) sourceInfo(s manifest.ArtifactSource) SourceInfo {
	info := SourceInfo{Name: s.Name, URL: s.URL, Ref: s.Ref, Path: s.Path, Commit: s.Commit}
	if s.Commit == "" {
		return info
	}
	if p, err := e.GitCache().Path(s.URL, s.Commit); err == nil {
		info.CachePath, info.CachePathPosix = p, filepath.ToSlash(p)
		_, err := e.Sys.Lstat(abs(p).JoinName(gitsource.MarkerFile))
		info.Cached = err == nil
	}
	return info
}

// SourceList lists the registered artifact sources.
func (e *Engine) SourceList(ctx context.Context, req Request) (*SourceListData, []string, error) {
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	out := &SourceListData{Sources: []SourceInfo{}}
	for _, s := range m.Sources {
		out.Sources = append(out.Sources, e.sourceInfo(s))
	}
	return out, m.Warnings, nil
}

// SourceAdd registers a git repository as an artifact source under
// `sources:` in agentpack.yaml, pinned to the commit its ref names now.
func (e *Engine) SourceAdd(ctx context.Context, req Request, opt SourceAddOptions) (*SourceAddData, []string, error) {
	var out *SourceAddData
	var warnings []string
	ctx = withCheckouts(ctx)
	if src, err := newSource(opt); err == nil {
		e.prefetch(ctx, []repoRef{{src.URL, src.Ref}}) // the clone runs outside the state lock
	}
	err := e.withCheckedLock(ctx, "source add", func(recovered []string) error {
		warnings = recovered
		m, err := e.loadSources(ctx, req)
		if err != nil {
			return err
		}
		warnings = append(warnings, m.Warnings...)
		src, err := newSource(opt)
		if err != nil {
			return err
		}
		for _, s := range m.Sources {
			if s.Name == src.Name {
				return apperr.New(apperr.SourceAlreadyExists, "an artifact source named %q already exists (%s)", src.Name, s.URL).
					WithHint("pick another --name, or `agentpack source remove %s` first", src.Name).With("name", src.Name)
			}
		}
		commit, dir, err := e.checkout(ctx, src.URL, src.Ref)
		if err != nil {
			return err
		}
		src.Commit = commit
		if src.Path != "" {
			if fi, err := e.Sys.Stat(abs(filepath.Join(dir, filepath.FromSlash(src.Path)))); err != nil || !fi.IsDir() {
				return apperr.New(apperr.SourceNotFound, "path %q is not a folder of %s at %s", src.Path, src.URL, ShortHash(commit)).
					WithHint("check --path (or the path in the URL) against the repository").With("path", src.Path)
			}
		}
		arts, err := ScanArtifacts(fsys.NewDirFS(e.Sys, abs(dir)), src.Path)
		if err != nil {
			return apperr.Wrap(err, apperr.IOFailed, "cannot scan %s", dir)
		}
		out = &SourceAddData{Source: e.sourceInfo(src), ArtifactCount: len(arts), ManifestPath: m.Path,
			ManifestPathPosix: filepath.ToSlash(m.Path), DryRun: e.dryRun()}
		md, err := manifest.OpenDoc(e.Sys, abs(m.Path), e.Adapters.Names())
		if err != nil {
			return err
		}
		var node yaml.Node
		if err := node.Encode(src); err != nil {
			return apperr.Wrap(err, apperr.Unexpected, "cannot encode source")
		}
		seq := blockList(md.List("sources"))
		seq.Content = append(seq.Content, &node)
		return md.Save(e.Sys)
	})
	return out, append(warnings, e.takeRepairs()...), err
}

// newSource builds the source entry from the add options.
func newSource(opt SourceAddOptions) (manifest.ArtifactSource, error) {
	u, ref, sub, err := ParseSourceSpec(opt.Spec)
	if err != nil {
		return manifest.ArtifactSource{}, err
	}
	if opt.Ref != "" {
		if ref != "" && ref != opt.Ref {
			return manifest.ArtifactSource{}, apperr.New(apperr.InvalidArgument, "the spec names ref %q but --ref is %q", ref, opt.Ref).
				WithHint("give the ref once")
		}
		ref = opt.Ref
	}
	if opt.Path != "" {
		p, err := gitsource.CleanSubdir(opt.Path)
		if err != nil {
			return manifest.ArtifactSource{}, err
		}
		if sub != "" && sub != p {
			return manifest.ArtifactSource{}, apperr.New(apperr.InvalidArgument, "the spec names path %q but --path is %q", sub, p).
				WithHint("give the path once")
		}
		sub = p
	}
	name := opt.Name
	if name == "" {
		name = repoName(u)
	}
	if !sourceNameRe.MatchString(name) {
		return manifest.ArtifactSource{}, apperr.New(apperr.InvalidArgument, "invalid source name %q", name).
			WithHint("use letters, digits, '.', '_' and '-' (at most 64), e.g. --name skills").With("name", name)
	}
	return manifest.ArtifactSource{Name: name, URL: u, Ref: ref, Path: sub}, nil
}

// withCheckedLock checks the environment (a relative $HOME would put the lock
// and every user-scope file in the working directory), then runs fn under
// the state lock (on a recording System: without it, see [Engine.WithLock]).
func (e *Engine) withCheckedLock(ctx context.Context, command string, fn func(recovered []string) error) error {
	if err := e.Env.Check(); err != nil {
		return err
	}
	return e.WithLock(ctx, command, fn)
}

// SourceRemove deletes a source from agentpack.yaml; with purgeCache it also
// deletes the cached checkouts of its URL that no locked module pins.
func (e *Engine) SourceRemove(ctx context.Context, req Request, name string, purgeCache bool) (*SourceRemoveData, []string, error) {
	var out *SourceRemoveData
	var warnings []string
	err := e.withCheckedLock(ctx, "source remove", func(recovered []string) error {
		warnings = recovered
		m, err := e.loadSources(ctx, req)
		if err != nil {
			return err
		}
		warnings = append(warnings, m.Warnings...)
		src, err := findSource(m, name)
		if err != nil {
			return err
		}
		out = &SourceRemoveData{RemovedSource: e.sourceInfo(*src), PurgedPaths: []string{}, PurgedPathsPosix: []string{},
			ManifestPath: m.Path, ManifestPathPosix: filepath.ToSlash(m.Path), DryRun: e.dryRun()}
		if users := modulesUsing(m, *src); len(users) > 0 {
			warnings = append(warnings, "modules "+strings.Join(users, ", ")+" still use "+src.URL+"; they keep working (their git sources are independent of the artifact source)")
		}
		if purgeCache {
			paths, w := e.purgeable(m, *src)
			warnings = append(warnings, w...)
			for _, p := range paths {
				if err := e.Sys.RemoveAll(abs(p)); err != nil {
					return apperr.Wrap(err, apperr.IOFailed, "cannot remove %s", p).WithHint("check the folder's permissions")
				}
				out.PurgedPaths = append(out.PurgedPaths, p)
				out.PurgedPathsPosix = append(out.PurgedPathsPosix, filepath.ToSlash(p))
			}
		}
		md, err := manifest.OpenDoc(e.Sys, abs(m.Path), e.Adapters.Names())
		if err != nil {
			return err
		}
		seq := md.List("sources")
		kept := seq.Content[:0]
		for _, item := range seq.Content {
			if manifest.ItemField(item, "name") != name {
				kept = append(kept, item)
			}
		}
		seq.Content = kept
		return md.Save(e.Sys)
	})
	return out, warnings, err
}

// purgeable lists the cached checkouts of src's URL, except those a module
// of the lockfile pins (those are reported in warnings and kept).
func (e *Engine) purgeable(m *manifest.Manifest, src manifest.ArtifactSource) ([]string, []string) {
	u, err := gitsource.NormalizeURL(src.URL)
	if err != nil {
		return nil, nil
	}
	base := filepath.Join(e.GitCache().Root, gitsource.URLKey(u))
	ents, err := e.Sys.ReadDir(abs(base))
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return nil, nil
	}
	pinned := map[string]string{}
	if lf, err := lockfile.LoadOn(e.Sys, abs(filepath.Join(m.Dir, lockfile.FileName))); err == nil {
		for _, lm := range lf.Modules {
			if g := lm.ResolvedSource.Git; g != nil && sameRepo(g.URL, u) {
				pinned[strings.ToLower(g.Commit)] = lm.ID
			}
		}
	}
	var out, warnings []string
	for _, ent := range ents {
		if id, ok := pinned[ent.Name()]; ok {
			warnings = append(warnings, "kept cached commit "+ShortHash(ent.Name())+": module "+id+" is locked to it")
			continue
		}
		out = append(out, filepath.Join(base, ent.Name()))
	}
	return out, warnings
}

// modulesUsing lists the modules whose git source is in src's repository
// (and below its path, when it has one).
func modulesUsing(m *manifest.Manifest, src manifest.ArtifactSource) []string {
	var out []string
	for _, mod := range m.Modules {
		g := mod.Source.Git
		if g == nil || !sameRepo(g.URL, src.URL) {
			continue
		}
		sub := cleanSub(g.Subdir)
		if src.Path == "" || sub == src.Path || strings.HasPrefix(sub, src.Path+"/") {
			out = append(out, mod.ID)
		}
	}
	return out
}

// sourceCheckout returns the cached checkout of the source's pinned commit,
// fetching it when the cache lacks it or holds a damaged copy.
func (e *Engine) sourceCheckout(ctx context.Context, src manifest.ArtifactSource) (string, error) {
	if src.Commit == "" {
		return "", apperr.New(apperr.SourceNotFound, "artifact source %q has no pinned commit", src.Name).
			WithHint("run `agentpack source update %s` to pin it", src.Name).With("name", src.Name)
	}
	dir, err := e.GitCache().Dir(src.URL, src.Commit)
	if errors.Is(err, gitsource.ErrNotCached) || apperr.CodeOf(err) == apperr.CacheCorrupted {
		// A damaged checkout is as good as a missing one: the checkout
		// downloads it again (a warning says so).
		_, dir, err = e.checkout(ctx, src.URL, src.Commit)
	}
	return dir, err
}

// scanSource scans a checkout of src and completes each artifact's source
// spec and users.
func (e *Engine) scanSource(m *manifest.Manifest, src manifest.ArtifactSource, dir, commit string) ([]Artifact, error) {
	arts, err := ScanArtifacts(fsys.NewDirFS(e.Sys, abs(dir)), src.Path)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot scan the checkout of %s at %s", src.URL, ShortHash(commit)).
			WithHint("remove %s and run the command again", dir)
	}
	for i := range arts {
		a := &arts[i]
		a.Source = src.Name
		a.SourceSpec = "git:" + src.URL + "#ref=" + commit
		if a.Path != "" {
			a.SourceSpec += "&subdir=" + a.Path
		}
		for _, mod := range m.Modules {
			if g := mod.Source.Git; g != nil && sameRepo(g.URL, src.URL) && cleanSub(g.Subdir) == a.Path {
				a.UsedBy = append(a.UsedBy, mod.ID)
			}
		}
	}
	return arts, nil
}

// checkArtifactType accepts "" or one of [ArtifactTypes].
func checkArtifactType(t string) error {
	if t == "" {
		return nil
	}
	for _, x := range ArtifactTypes {
		if string(x) == t {
			return nil
		}
	}
	names := make([]string, len(ArtifactTypes))
	for i, x := range ArtifactTypes {
		names[i] = string(x)
	}
	return apperr.New(apperr.InvalidArgument, "unknown artifact type %q", t).
		WithHint("types: %s", strings.Join(names, ", ")).With("type", t)
}

func filterType(as []Artifact, t string) []Artifact {
	out := []Artifact{}
	for _, a := range as {
		if t == "" || string(a.Type) == t {
			out = append(out, a)
		}
	}
	return out
}
