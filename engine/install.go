package engine

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// InstallOptions are the flags of `agentpack install`.
type InstallOptions struct {
	// Specs are name, name@range, name@tag, a .aam file or a package folder.
	// None: install what agentpack.yaml and the lockfile already name.
	Specs    []string
	Tags     []string
	Targets  []string
	NoDeploy bool
	// Force resolves and fetches again packages that are already installed.
	Force bool
	// Adopt lets the deploy take over unmanaged files (as deploy --adopt).
	Adopt    bool
	Registry string
}

// InstalledPackage is one entry of install's `installed`.
type InstalledPackage struct {
	Name          string         `json:"name"`
	Version       string         `json:"version"`
	Source        string         `json:"source"`
	ArtifactCount int            `json:"artifact_count"`
	Artifacts     map[string]int `json:"artifacts"`
	Checksum      string         `json:"checksum"`
}

// FailedPackage is a spec that could not be installed.
type FailedPackage struct {
	Package string         `json:"package"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Hint    string         `json:"hint"`
	Details map[string]any `json:"details"`
}

// PackageRef names one package version.
type PackageRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PackageDeploy is the deploy part of install and uninstall.
type PackageDeploy struct {
	Applied    bool         `json:"applied"`
	SnapshotID string       `json:"snapshot_id,omitempty"`
	Summary    plan.Summary `json:"summary"`
	Reason     string       `json:"reason,omitempty"`
}

// InstallData is the data of `agentpack install` (AAM's shape plus deploy).
type InstallData struct {
	Installed            []InstalledPackage `json:"installed"`
	AlreadyInstalled     []PackageRef       `json:"already_installed"`
	Failed               []FailedPackage    `json:"failed"`
	DependenciesResolved []PackageRef       `json:"dependencies_resolved"`
	Deploy               *PackageDeploy     `json:"deploy"`
}

// localPkg is a package given as a .aam file or a folder.
type localPkg struct {
	spec    string
	url     string
	archive []byte
	entry   *pkgcache.Entry
}

// installSpec is one parsed command-line spec.
type installSpec struct {
	raw   string
	spec  resolve.Spec
	local *localPkg
}

// Install resolves the specs with the packages already installed, fetches
// them into the verified cache, records them in agentpack.yaml and the
// lockfile and deploys them in one transaction. When the deploy would be
// refused (unmanaged files, drift), nothing is written.
func (e *Engine) Install(ctx context.Context, req Request, opt InstallOptions) (*InstallData, []string, error) {
	out := &InstallData{Installed: []InstalledPackage{}, AlreadyInstalled: []PackageRef{}, Failed: []FailedPackage{}, DependenciesResolved: []PackageRef{}}
	var warnings []string
	err := e.WithLock(ctx, "install", func(recovered []string) error {
		warnings = recovered
		w, err := e.install(ctx, req, opt, out)
		warnings = append(warnings, w...)
		return err
	})
	return out, warnings, err
}

func (e *Engine) install(ctx context.Context, req Request, opt InstallOptions, out *InstallData) ([]string, error) {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil, err
	}
	lockPath := abs(filepath.Join(repo, lockfile.FileName))
	lf, err := lockfile.LoadOn(e.Sys, lockPath)
	if apperr.CodeOf(err) == apperr.LockfileMissing {
		lf, err = lockfile.New(), nil
	}
	if err != nil {
		return nil, err
	}
	rs := &registrySet{e: e}
	if opt.Registry != "" {
		rs = &registrySet{e: e}
		if _, err := rs.named(ctx, opt.Registry); err != nil {
			return nil, err
		}
		rs.regs = slices.DeleteFunc(rs.regs, func(r PackageRegistry) bool { return r.Name() != opt.Registry })
	}
	var specs []installSpec
	for _, raw := range opt.Specs {
		s, err := e.parseInstallSpec(ctx, raw)
		if err != nil {
			out.Failed = append(out.Failed, failed(raw, err))
			continue
		}
		specs = append(specs, s)
	}
	// Already installed: named in agentpack.yaml, locked, and matching.
	var fresh []installSpec
	for _, s := range specs {
		if ref, ok := alreadyInstalled(m, lf, s); ok && !opt.Force {
			out.AlreadyInstalled = append(out.AlreadyInstalled, ref)
			continue
		}
		fresh = append(fresh, s)
	}
	if len(opt.Specs) > 0 && len(fresh) == 0 {
		if len(out.Failed) > 0 && len(out.AlreadyInstalled) == 0 {
			return nil, failedError(out.Failed)
		}
		return nil, nil
	}
	resolved, ok := resolvedFromLock(m, lf)
	if len(fresh) > 0 || !ok || opt.Force {
		resolved, fresh, err = e.resolveInstall(ctx, m, lf, rs, fresh, opt.Force, out)
		if err != nil {
			return nil, err
		}
	}
	newLock, installed, err := e.fetchResolved(ctx, lf, rs, resolved, fresh)
	if err != nil {
		return nil, err
	}
	data, err := e.manifestWithPackages(m, req, fresh, resolved, opt)
	if err != nil {
		return nil, err
	}
	for _, r := range resolved {
		if !r.Direct && lf.FindPackage(r.Name) == nil {
			out.DependenciesResolved = append(out.DependenciesResolved, PackageRef{r.Name, r.Version})
		}
	}
	for _, s := range fresh {
		if ip, ok := installed[s.spec.Name]; ok {
			out.Installed = append(out.Installed, ip)
		}
	}
	lockBytes, err := newLock.Marshal()
	if err != nil {
		return nil, err
	}
	dep, warnings, err := e.commitPackages(ctx, req, abs(m.Path), data, lockPath, lockBytes, opt.NoDeploy, ApplyOptions{Adopt: opt.Adopt, Command: "install"})
	out.Deploy = dep
	return warnings, err
}

// parseInstallSpec tells a .aam file and a package folder from a registry
// spec; a local package is read and checked now.
func (e *Engine) parseInstallSpec(ctx context.Context, raw string) (installSpec, error) {
	p := e.Env.ExpandHome(raw)
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Env.Cwd, p)
	}
	info, statErr := e.Sys.Stat(abs(p))
	switch {
	case statErr == nil && info.IsDir():
		if e.PackFolder == nil {
			return installSpec{}, apperr.New(apperr.Unexpected, "this build cannot pack folders")
		}
		archive, err := e.PackFolder(ctx, p)
		if err != nil {
			return installSpec{}, err
		}
		return e.localSpec(raw, p, archive)
	case statErr == nil && strings.HasSuffix(p, ".aam"):
		archive, err := e.Sys.ReadFile(abs(p))
		if err != nil {
			return installSpec{}, apperr.Wrap(err, apperr.IOFailed, "cannot read %s", p)
		}
		return e.localSpec(raw, p, archive)
	case strings.HasSuffix(raw, ".aam") || strings.ContainsAny(raw, `/\`) && !strings.HasPrefix(raw, "@"):
		return installSpec{}, apperr.New(apperr.InvalidArgument, "%s: no such file or folder", raw).
			WithHint("give a .aam file, a package folder with aam.yaml, or a package name").With("spec", raw)
	}
	sp, err := resolve.ParseSpec(raw)
	if err != nil {
		return installSpec{}, err
	}
	return installSpec{raw: raw, spec: sp}, nil
}

func (e *Engine) localSpec(raw, p string, archive []byte) (installSpec, error) {
	ent, err := e.PackageCache().Put(archive, "")
	if err != nil {
		return installSpec{}, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
	return installSpec{raw: raw, spec: resolve.Spec{Name: ent.Meta.Name, Constraint: ent.Meta.Version},
		local: &localPkg{spec: raw, url: u.String(), archive: archive, entry: ent}}, nil
}

func alreadyInstalled(m *manifest.Manifest, lf *lockfile.Lockfile, s installSpec) (PackageRef, bool) {
	entry, lp := m.FindPackage(s.spec.Name), lf.FindPackage(s.spec.Name)
	if entry == nil || lp == nil {
		return PackageRef{}, false
	}
	if s.local != nil {
		return PackageRef{lp.Name, lp.Version}, pkgcache.Checksum(s.local.archive) == lp.Checksum
	}
	c, err := resolve.ParseConstraint(s.spec.Constraint)
	if err != nil || s.spec.Constraint != "" && (c.Tag() != "" || !matchesVersion(c, lp.Version)) {
		return PackageRef{}, false
	}
	return PackageRef{lp.Name, lp.Version}, true
}

func failed(spec string, err error) FailedPackage {
	ae := apperr.As(err)
	d := ae.Details
	if d == nil {
		d = map[string]any{}
	}
	return FailedPackage{Package: spec, Code: string(ae.Code), Message: ae.Message, Hint: ae.Hint, Details: d}
}

func failedError(fs []FailedPackage) error {
	if len(fs) == 1 {
		f := fs[0]
		e := apperr.New(apperr.Code(f.Code), "%s", f.Message).WithHint("%s", f.Hint)
		e.Details = f.Details
		return e
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Package+" ("+f.Code+")")
	}
	return apperr.New(apperr.PackageNotFound, "nothing could be installed: %s", strings.Join(names, ", ")).
		WithHint("see details.failed for each package").With("failed", fs)
}

// localFirst is a resolve.Source that knows local packages first, then the
// registries.
type localFirst struct {
	local map[string]*localPkg
	rs    *registrySet
}

// Lookup implements resolve.Source.
func (o localFirst) Lookup(ctx context.Context, name string) ([]resolve.Package, error) {
	if l, ok := o.local[name]; ok {
		return []resolve.Package{{Name: name, Versions: []resolve.Version{{Version: l.entry.Meta.Version, Dependencies: l.entry.Meta.Dependencies}}}}, nil
	}
	return o.rs.Lookup(ctx, name)
}

// resolveInstall resolves the installed packages plus the fresh specs; a
// spec that makes resolution fail lands in out.Failed and the others go on.
func (e *Engine) resolveInstall(ctx context.Context, m *manifest.Manifest, lf *lockfile.Lockfile, rs *registrySet,
	fresh []installSpec, force bool, out *InstallData) ([]resolve.Resolved, []installSpec, error) {
	ov := localFirst{local: map[string]*localPkg{}, rs: rs}
	prefer := map[string]string{}
	for _, lp := range lf.Packages {
		prefer[lp.Name] = lp.Version
		if lp.Registry == "" {
			// Installed from a file: the cache is its only source.
			if ent, err := e.PackageCache().Get(ctx, &lp, e.fetcherWith(rs, &lp)); err == nil {
				ov.local[lp.Name] = &localPkg{url: lp.URL, entry: ent}
			}
		}
	}
	for _, s := range fresh {
		if s.local != nil {
			ov.local[s.spec.Name] = s.local
		}
		if force {
			delete(prefer, s.spec.Name)
		}
	}
	base := []resolve.Spec{}
	for _, p := range m.Packages {
		if !slices.ContainsFunc(fresh, func(s installSpec) bool { return s.spec.Name == p.Name }) {
			base = append(base, resolve.Spec{Name: p.Name, Constraint: p.Version})
		}
	}
	opt := resolve.Options{Prefer: prefer}
	try := func(specs []installSpec) ([]resolve.Resolved, error) {
		roots := slices.Clone(base)
		for _, s := range specs {
			roots = append(roots, s.spec)
		}
		return resolve.Resolve(ctx, ov, roots, opt)
	}
	res, err := try(fresh)
	if err == nil {
		return res, fresh, nil
	}
	if len(fresh) <= 1 {
		if len(fresh) == 1 {
			out.Failed = append(out.Failed, failed(fresh[0].raw, err))
		}
		return nil, nil, err
	}
	// Find the specs that resolve together, one at a time.
	var ok []installSpec
	for _, s := range fresh {
		if _, err := try(append(slices.Clone(ok), s)); err != nil {
			out.Failed = append(out.Failed, failed(s.raw, err))
			continue
		}
		ok = append(ok, s)
	}
	if len(ok) == 0 {
		return nil, nil, failedError(out.Failed)
	}
	res, err = try(ok)
	return res, ok, err
}

// fetchResolved brings every resolved package into the verified cache and
// returns the new lockfile and what each package holds.
func (e *Engine) fetchResolved(ctx context.Context, lf *lockfile.Lockfile, rs *registrySet, resolved []resolve.Resolved, fresh []installSpec) (*lockfile.Lockfile, map[string]InstalledPackage, error) {
	local := map[string]*localPkg{}
	for _, s := range fresh {
		if s.local != nil {
			local[s.spec.Name] = s.local
		}
	}
	cache := e.PackageCache()
	var pkgs []lockfile.Package
	info := map[string]InstalledPackage{}
	for _, r := range resolved {
		var lp lockfile.Package
		var ent *pkgcache.Entry
		var err error
		prev := lf.FindPackage(r.Name)
		switch l := local[r.Name]; {
		case l != nil:
			ent = l.entry
			lp = lockfile.Package{Name: r.Name, Version: r.Version, URL: l.url, Checksum: pkgcache.Checksum(l.archive), Files: ent.Files}
		case prev != nil && prev.Version == r.Version && prev.Registry == r.Registry:
			lp = *prev
			if ent, err = cache.Get(ctx, &lp, e.fetcherWith(rs, &lp)); err != nil {
				return nil, nil, err
			}
		default:
			reg, err := rs.named(ctx, r.Registry)
			if err != nil {
				return nil, nil, err
			}
			archive, digest, err := reg.Download(ctx, r.Name, r.Version)
			if err != nil {
				return nil, nil, err
			}
			if ent, err = cache.Put(archive, ""); err != nil {
				return nil, nil, err
			}
			lp = lockfile.Package{Name: r.Name, Version: r.Version, Registry: r.Registry, URL: reg.URL(),
				Checksum: pkgcache.Checksum(archive), Digest: digest, Files: ent.Files}
		}
		if ent.Meta.Name != r.Name || ent.Meta.Version != r.Version {
			return nil, nil, apperr.New(apperr.ManifestInvalid, "the archive of %s@%s says it is %s@%s", r.Name, r.Version, ent.Meta.Name, ent.Meta.Version).
				WithHint("the registry entry is damaged; republish the package").With("package", r.Name)
		}
		lp.Dependencies, lp.RequiredBy = r.Dependencies, r.RequiredBy
		pkgs = append(pkgs, lp)
		counts, n := map[string]int{}, 0
		for k, as := range ent.Meta.Artifacts {
			if len(as) > 0 {
				counts[k] = len(as)
				n += len(as)
			}
		}
		src := r.Registry
		if src == "" {
			src = lp.URL
		}
		info[r.Name] = InstalledPackage{Name: r.Name, Version: r.Version, Source: src, ArtifactCount: n, Artifacts: counts, Checksum: lp.Checksum}
	}
	nl := *lf
	nl.SetPackages(pkgs)
	return &nl, info, nil
}

// manifestWithPackages returns agentpack.yaml with an entry for each fresh
// spec (added, or replaced when it was there).
func (e *Engine) manifestWithPackages(m *manifest.Manifest, req Request, fresh []installSpec, resolved []resolve.Resolved, opt InstallOptions) ([]byte, error) {
	data, err := e.Sys.ReadFile(abs(m.Path))
	if err != nil {
		return nil, err
	}
	cur := m
	tags := opt.Tags
	if len(tags) == 0 {
		profile := req.Profile
		if profile == "" {
			profile = "default"
		}
		if t := m.Profiles[profile].IncludeTags; len(t) > 0 {
			tags = t[:1]
		}
	}
	for _, s := range fresh {
		version := ""
		for _, r := range resolved {
			if r.Name == s.spec.Name {
				version = r.Version
			}
		}
		entry := manifest.PackageEntry{Name: s.spec.Name, Version: recordedConstraint(s, version), Tags: tags, Targets: opt.Targets}
		if old := m.FindPackage(s.spec.Name); old != nil {
			if len(opt.Tags) == 0 {
				entry.Tags = old.Tags
			}
			if len(opt.Targets) == 0 {
				entry.Targets = old.Targets
			}
			entry.Artifacts = old.Artifacts
		}
		doc, err := manifest.OpenDoc(bytesReader(data), abs(m.Path), e.Adapters.Names())
		if err != nil {
			return nil, err
		}
		if data, err = doc.UpsertPackage(cur, entry); err != nil {
			return nil, err
		}
		if cur, err = manifest.Parse(data, e.Adapters.Names()); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// recordedConstraint is what agentpack.yaml records: the range as given,
// else ^version (as npm does for a tag or a bare name), else the exact
// version of a local archive.
func recordedConstraint(s installSpec, version string) string {
	if s.local != nil {
		return version
	}
	if c, err := resolve.ParseConstraint(s.spec.Constraint); err == nil && c.Tag() == "" && s.spec.Constraint != "" {
		return s.spec.Constraint
	}
	if strings.Contains(version, "-") {
		return version // a pre-release picked by tag: pin it
	}
	return "^" + version
}

type bytesReader []byte

func (b bytesReader) ReadFile(fsys.AbsPath) ([]byte, error) { return b, nil }

// commitPackages checks that the deploy of the edited desired state would
// not be refused (on a recording System), then writes agentpack.yaml and
// the lockfile and deploys. With noDeploy it only writes.
func (e *Engine) commitPackages(ctx context.Context, req Request, manifestPath fsys.AbsPath, manifestData []byte,
	lockPath fsys.AbsPath, lockData []byte, noDeploy bool, opt ApplyOptions) (*PackageDeploy, []string, error) {
	write := func(sys fsys.System) error {
		if err := sys.WriteFile(manifestPath, manifestData, 0o644); err != nil {
			return err
		}
		return sys.WriteFile(lockPath, lockData, 0o644)
	}
	if noDeploy {
		// Still load the new state, so a package that cannot become modules
		// is refused before anything is written.
		dry := *e
		dry.Sys = fsys.NewDryRunSystem(e.Sys)
		if err := write(dry.Sys); err != nil {
			return nil, nil, err
		}
		st, err := dry.Load(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		return nil, st.Warnings, write(e.Sys)
	}
	dry := *e
	dry.Sys = fsys.NewDryRunSystem(e.Sys)
	if err := write(dry.Sys); err != nil {
		return nil, nil, err
	}
	_, p, err := dry.Plan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckRefusals(p, opt); err != nil {
		ae := apperr.As(err)
		ae.Hint += "; nothing was installed (or run with --no-deploy, then `agentpack deploy --apply` with the flag)"
		return nil, nil, ae
	}
	if e.dryRun() {
		// The whole command is a dry run: report the plan only.
		return &PackageDeploy{Summary: p.Summary, Reason: "dry_run"}, nil, write(e.Sys)
	}
	if err := write(e.Sys); err != nil {
		return nil, nil, err
	}
	st, d, err := e.applyLocked(ctx, req, opt, nil)
	var warnings []string
	if st != nil {
		warnings = st.Warnings
	}
	if err != nil {
		return nil, warnings, err
	}
	return &PackageDeploy{Applied: d.Applied, SnapshotID: d.SnapshotID, Summary: d.Summary, Reason: d.Reason}, warnings, nil
}

// resolvedFromLock is the resolution the lockfile already holds, when it
// still satisfies every entry of agentpack.yaml: then install needs no
// registry at all (offline).
func resolvedFromLock(m *manifest.Manifest, lf *lockfile.Lockfile) ([]resolve.Resolved, bool) {
	need := map[string]bool{}
	for _, p := range m.Packages {
		lp := lf.FindPackage(p.Name)
		if lp == nil {
			return nil, false
		}
		if c, err := resolve.ParseConstraint(p.Version); err != nil || c.Tag() == "" && p.Version != "" && !matchesVersion(c, lp.Version) {
			return nil, false
		}
		for _, n := range closure(lf, p.Name) {
			if lf.FindPackage(n) == nil {
				return nil, false
			}
			need[n] = true
		}
	}
	var out []resolve.Resolved
	for _, lp := range lf.Packages {
		if need[lp.Name] {
			out = append(out, resolve.Resolved{Name: lp.Name, Version: lp.Version, Registry: lp.Registry,
				Dependencies: lp.Dependencies, RequiredBy: lp.RequiredBy, Direct: m.FindPackage(lp.Name) != nil})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, true
}
