package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// fakePkg is the stand-in archive format of these tests (JSON), so the
// engine's package flow is tested apart from the .aam format.
type fakePkg struct {
	Name      string                         `json:"name"`
	Version   string                         `json:"version"`
	Deps      map[string]string              `json:"deps"`
	Artifacts map[string][]pkgcache.Artifact `json:"artifacts"`
	Files     map[string]string              `json:"files"`
}

func fakeExtract(archive []byte) (*pkgcache.Extracted, error) {
	var p fakePkg
	if err := json.Unmarshal(archive, &p); err != nil {
		return nil, apperr.New(apperr.ManifestInvalid, "bad archive")
	}
	ex := &pkgcache.Extracted{Meta: pkgcache.Meta{Name: p.Name, Version: p.Version, Dependencies: p.Deps, Artifacts: p.Artifacts}}
	for path, c := range p.Files {
		ex.Files = append(ex.Files, pkgcache.File{Path: path, Data: []byte(c), Mode: 0o644})
	}
	slices.SortFunc(ex.Files, func(a, b pkgcache.File) int { return strings.Compare(a.Path, b.Path) })
	return ex, nil
}

// skillPkg is a package holding one skill named skill.
func skillPkg(name, version, skill string, deps ...string) []byte {
	d := map[string]string{}
	for i := 0; i+1 < len(deps); i += 2 {
		d[deps[i]] = deps[i+1]
	}
	p := fakePkg{Name: name, Version: version, Deps: d,
		Artifacts: map[string][]pkgcache.Artifact{"skills": {{Name: skill, Path: "skills/" + skill}}},
		Files:     map[string]string{"skills/" + skill + "/SKILL.md": "---\nname: " + skill + "\ndescription: \"" + name + " " + version + "\"\n---\nbody\n"}}
	b, _ := json.Marshal(p)
	return b
}

type fakeRegistry struct {
	name     string
	archives map[string]map[string][]byte // name -> version -> archive
	tags     map[string]map[string]string
	calls    int
	down     bool
}

func (r *fakeRegistry) Name() string { return r.name }
func (r *fakeRegistry) URL() string  { return "file:///registries/" + r.name }

func (r *fakeRegistry) add(archive []byte) {
	var p fakePkg
	_ = json.Unmarshal(archive, &p)
	if r.archives[p.Name] == nil {
		r.archives[p.Name] = map[string][]byte{}
	}
	r.archives[p.Name][p.Version] = archive
}

func (r *fakeRegistry) Lookup(_ context.Context, name string) (*resolve.Package, error) {
	r.calls++
	if r.down {
		return nil, apperr.New(apperr.RegistryUnreachable, "registry down")
	}
	vs, ok := r.archives[name]
	if !ok {
		return nil, apperr.New(apperr.PackageNotFound, "no %s", name)
	}
	p := &resolve.Package{Name: name, DistTags: r.tags[name]}
	for v, a := range vs {
		var fp fakePkg
		_ = json.Unmarshal(a, &fp)
		p.Versions = append(p.Versions, resolve.Version{Version: v, Dependencies: fp.Deps})
	}
	return p, nil
}

func (r *fakeRegistry) Download(_ context.Context, name, version string) ([]byte, string, error) {
	r.calls++
	if r.down {
		return nil, "", apperr.New(apperr.RegistryUnreachable, "registry down")
	}
	return r.archives[name][version], "", nil
}

const pkgManifest = `version: 1
# my packages
profiles:
  default: {include_tags: [base]}
targets:
  claude_code: {scope: project}
modules: []
`

func pkgEngine(t *testing.T, reg *fakeRegistry) (*engine.Engine, engine.Request) {
	env := testEnv(t)
	repo := writeRepo(t, map[string]string{"agentpack.yaml": pkgManifest})
	e := engine.New(env, targets.NewSet())
	e.ExtractPackage = fakeExtract
	e.OpenRegistries = func(context.Context) ([]engine.PackageRegistry, error) { return []engine.PackageRegistry{reg}, nil }
	return e, engine.Request{Repo: repo}
}

func newRegistry() *fakeRegistry {
	r := &fakeRegistry{name: "local", archives: map[string]map[string][]byte{}, tags: map[string]map[string]string{}}
	r.add(skillPkg("@acme/kit", "1.0.0", "review", "@acme/base", "^1.0.0"))
	r.add(skillPkg("@acme/kit", "1.1.0", "review", "@acme/base", "^1.0.0"))
	r.add(skillPkg("@acme/kit", "2.0.0-beta.1", "review"))
	r.add(skillPkg("@acme/base", "1.0.0", "lint"))
	r.add(skillPkg("@acme/base", "1.2.0", "lint"))
	r.add(skillPkg("@acme/base", "1.3.0-rc.1", "lint"))
	r.add(skillPkg("@acme/other", "1.0.0", "other", "@acme/base", "^2.0.0"))
	r.add(skillPkg("@acme/base", "2.0.0", "lint"))
	r.add(skillPkg("@acme/clash", "1.0.0", "review"))
	return r
}

func TestInstallVerifyUninstallJourney(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry()
	e, req := pkgEngine(t, reg)
	proj := e.Env.Cwd

	out, _, err := e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Installed) != 1 || out.Installed[0].Version != "1.1.0" {
		t.Fatalf("installed %+v (a pre-release must not be picked)", out.Installed)
	}
	if len(out.DependenciesResolved) != 1 || out.DependenciesResolved[0] != (engine.PackageRef{Name: "@acme/base", Version: "1.2.0"}) {
		t.Fatalf("dependencies %+v", out.DependenciesResolved)
	}
	if out.Deploy == nil || !out.Deploy.Applied || out.Deploy.SnapshotID == "" {
		t.Fatalf("not deployed: %+v", out.Deploy)
	}
	for _, p := range []string{".claude/skills/review/SKILL.md", ".claude/skills/lint/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(proj, p)); err != nil {
			t.Fatalf("%s not deployed: %v", p, err)
		}
	}
	yaml, _ := os.ReadFile(filepath.Join(req.Repo, "agentpack.yaml"))
	if !strings.Contains(string(yaml), "# my packages") || !strings.Contains(string(yaml), "name: '@acme/kit'") || !strings.Contains(string(yaml), "version: ^1.1.0") {
		t.Fatalf("agentpack.yaml:\n%s", yaml)
	}
	lf, err := lockfile.Load(filepath.Join(req.Repo, lockfile.FileName))
	if err != nil || len(lf.Packages) != 2 || lf.FindPackage("@acme/base").RequiredBy[0] != "@acme/kit" || len(lf.FindPackage("@acme/kit").Files) != 1 {
		t.Fatalf("lock %v %+v", err, lf)
	}

	// Installing again is a no-op.
	out, _, err = e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit@^1.0.0"}})
	if err != nil || len(out.AlreadyInstalled) != 1 || len(out.Installed) != 0 {
		t.Fatalf("reinstall: %v %+v", err, out)
	}

	res, clean, _, err := e.VerifyPackages(ctx, req, engine.VerifyOptions{Name: "@acme/kit"})
	if err != nil || !clean || len(res.(*engine.VerifyResult).OKFiles) != 1 {
		t.Fatalf("verify clean: %v %+v", err, res)
	}
	mustWrite(t, filepath.Join(proj, ".claude/skills/review/SKILL.md"), "hand edit\n")
	mustWrite(t, filepath.Join(proj, ".claude/skills/review/notes.txt"), "mine\n")
	res, clean, _, err = e.VerifyPackages(ctx, req, engine.VerifyOptions{Name: "@acme/kit", Diff: true})
	r := res.(*engine.VerifyResult)
	if err != nil || clean || r.ModifiedFiles[0] != "claude_code:.claude/skills/review/SKILL.md" ||
		r.UntrackedFiles[0] != "claude_code:.claude/skills/review/notes.txt" || !strings.Contains(r.Diffs[0].Unified, "+hand edit") {
		t.Fatalf("verify after edit: %v %+v", err, r)
	}
	// Uninstalling refuses the drift like deploy --apply, and writes nothing.
	_ = os.Remove(filepath.Join(proj, ".claude/skills/review/notes.txt"))
	if _, _, err := e.Uninstall(ctx, req, "@acme/kit", engine.UninstallOptions{}); apperr.CodeOf(err) != apperr.DriftConflict {
		t.Fatalf("uninstall over drift: %v", err)
	}
	if y2, _ := os.ReadFile(filepath.Join(req.Repo, "agentpack.yaml")); string(y2) != string(yaml) {
		t.Fatal("a refused uninstall wrote agentpack.yaml")
	}
	mustWrite(t, filepath.Join(proj, ".claude/skills/review/SKILL.md"), "---\nname: review\ndescription: \"@acme/kit 1.1.0\"\n---\nbody\n")
	if _, _, err := e.Uninstall(ctx, req, "@acme/base", engine.UninstallOptions{}); apperr.CodeOf(err) != apperr.DependencyConflict {
		t.Fatalf("uninstall of a dependency: %v", err)
	}
	un, _, err := e.Uninstall(ctx, req, "@acme/kit", engine.UninstallOptions{})
	if err != nil || un.FilesRemoved != 2 || len(un.RemovedDependencies) != 1 {
		t.Fatalf("uninstall: %v %+v", err, un)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude/skills/lint/SKILL.md")); !os.IsNotExist(err) {
		t.Fatal("orphaned dependency still deployed")
	}
	if _, _, err := e.Uninstall(ctx, req, "@acme/kit", engine.UninstallOptions{}); apperr.CodeOf(err) != apperr.PackageNotInstalled {
		t.Fatalf("second uninstall: %v", err)
	}
}

func TestInstallConflictAndPartialFailure(t *testing.T) {
	ctx := context.Background()
	e, req := pkgEngine(t, newRegistry())
	out, _, err := e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit", "@acme/other", "@acme/ghost"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Installed) != 1 || len(out.Failed) != 2 {
		t.Fatalf("%+v", out)
	}
	var conflict *engine.FailedPackage
	for i := range out.Failed {
		if out.Failed[i].Code == string(apperr.DependencyConflict) {
			conflict = &out.Failed[i]
		}
	}
	if conflict == nil || !strings.Contains(conflict.Message, "app → @acme/kit@1.1.0 → @acme/base ^1.0.0") ||
		!strings.Contains(conflict.Message, "app → @acme/other@1.0.0 → @acme/base ^2.0.0") {
		t.Fatalf("conflict: %+v", out.Failed)
	}
	// Same skill name from two packages.
	_, _, err = e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/clash"}})
	if e2 := apperr.As(err); e2.Code != apperr.DesiredStateConflict || !strings.Contains(e2.Message, "@acme/clash") || !strings.Contains(e2.Message, "@acme/kit") {
		t.Fatalf("artifact clash: %v", err)
	}
}

func TestInstallOfflineFromLockAndChecksumMismatch(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry()
	e, req := pkgEngine(t, reg)
	if _, _, err := e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit"}, NoDeploy: true}); err != nil {
		t.Fatal(err)
	}
	// A registry that is down is never asked: plan, deploy and install use the lock and cache.
	reg.down, reg.calls = true, 0
	if _, _, err := e.Plan(ctx, req); err != nil {
		t.Fatal(err)
	}
	out, _, err := e.Install(ctx, req, engine.InstallOptions{})
	if err != nil || out.Deploy == nil || !out.Deploy.Applied || reg.calls != 0 {
		t.Fatalf("offline install: %v %+v calls=%d", err, out, reg.calls)
	}
	// An emptied cache is refilled from the registry; one that serves other
	// bytes is E_CHECKSUM_MISMATCH and nothing is deployed.
	if err := os.RemoveAll(filepath.Join(e.Env.CacheDir(), "packages")); err != nil {
		t.Fatal(err)
	}
	reg.down = false
	reg.archives["@acme/kit"]["1.1.0"] = skillPkg("@acme/kit", "1.1.0", "review-evil", "@acme/base", "^1.0.0")
	mustWrite(t, filepath.Join(e.Env.Cwd, ".claude/skills/review/SKILL.md"), "gone\n")
	_, _, err = e.Deploy(ctx, req, true, engine.ApplyOptions{Force: true})
	if apperr.CodeOf(err) != apperr.ChecksumMismatch {
		t.Fatalf("tampered registry: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.Env.Cwd, ".claude/skills/review/SKILL.md")); string(b) != "gone\n" {
		t.Fatal("a checksum mismatch deployed")
	}
	if _, err := os.Stat(filepath.Join(e.Env.Cwd, ".claude/skills/review-evil")); !os.IsNotExist(err) {
		t.Fatal("tampered archive deployed")
	}
}

// BenchmarkInstall100 installs 100 packages (each one skill, the odd ones
// depending on the even ones) from an in-memory registry into a fresh repo:
// resolution, cache, lockfile, agentpack.yaml edits and the deploy.
func BenchmarkInstall100(b *testing.B) {
	reg := &fakeRegistry{name: "local", archives: map[string]map[string][]byte{}, tags: map[string]map[string]string{}}
	var specs []string
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("@bench/p%03d", i)
		var deps []string
		if i%2 == 1 {
			deps = []string{fmt.Sprintf("@bench/p%03d", i-1), "^1.0.0"}
		}
		reg.add(skillPkg(name, "1.0.0", fmt.Sprintf("s%03d", i), deps...))
		specs = append(specs, name)
	}
	for b.Loop() {
		b.StopTimer()
		env := testEnv(b)
		repo := writeRepo(b, map[string]string{"agentpack.yaml": pkgManifest})
		e := engine.New(env, targets.NewSet())
		e.ExtractPackage = fakeExtract
		e.OpenRegistries = func(context.Context) ([]engine.PackageRegistry, error) { return []engine.PackageRegistry{reg}, nil }
		b.StartTimer()
		out, _, err := e.Install(context.Background(), engine.Request{Repo: repo}, engine.InstallOptions{Specs: specs})
		if err != nil || len(out.Installed) != 100 || !out.Deploy.Applied {
			b.Fatalf("%v %+v", err, out)
		}
	}
}

func TestInstallAAMAgentFolderAndInstructionFile(t *testing.T) {
	reg := &fakeRegistry{name: "local", archives: map[string]map[string][]byte{}}
	p := fakePkg{Name: "aam-kit", Version: "1.0.0",
		Artifacts: map[string][]pkgcache.Artifact{
			"agents":       {{Name: "mentor", Path: "agents/mentor"}},
			"instructions": {{Name: "py-style", Path: "instructions/py-style.md"}},
		},
		Files: map[string]string{
			"agents/mentor/agent.yaml":       "name: mentor\ndescription: Python mentor\nversion: 1.0.0\nsystem_prompt: system-prompt.md\ntools: [file_read]\n",
			"agents/mentor/system-prompt.md": "You teach Python.\n",
			"instructions/py-style.md":       "---\nname: py-style\ndescription: Python style\n---\n# Style\nUse type hints.\n",
		}}
	b, _ := json.Marshal(p)
	reg.add(b)
	e, req := pkgEngine(t, reg)
	if _, _, err := e.Install(context.Background(), req, engine.InstallOptions{Specs: []string{"aam-kit"}}); err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile(filepath.Join(e.Env.Cwd, ".claude/agents/mentor.md"))
	if err != nil || !strings.Contains(string(agent), "description: Python mentor") || !strings.Contains(string(agent), "You teach Python.") {
		t.Fatalf("agent: %v\n%s", err, agent)
	}
	if md, err := os.ReadFile(filepath.Join(e.Env.Cwd, "CLAUDE.md")); err != nil || !strings.Contains(string(md), "Use type hints.") {
		t.Fatalf("instructions: %v\n%s", err, md)
	}
}

func TestLockKeepsPackages(t *testing.T) {
	ctx := context.Background()
	e, req := pkgEngine(t, newRegistry())
	if _, _, err := e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit"}, NoDeploy: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Lock(ctx, req); err != nil {
		t.Fatal(err)
	}
	lf, err := lockfile.Load(filepath.Join(req.Repo, lockfile.FileName))
	if err != nil || len(lf.Packages) != 2 {
		t.Fatalf("lock dropped the packages: %v %+v", err, lf)
	}
	// A module can use one artifact of an installed package as its source.
	y, _ := os.ReadFile(filepath.Join(req.Repo, "agentpack.yaml"))
	y = []byte(strings.Replace(string(y), "modules: []\n", "modules:\n  - id: skill:lint2\n    type: skill\n    tags: [base]\n    source: {package: {name: '@acme/base', version: ^1.0.0, artifact: lint}}\n", 1))
	mustWrite(t, filepath.Join(req.Repo, "agentpack.yaml"), string(y))
	st, p, err := e.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if st.Desired.File(fsys.AbsPath(filepath.Join(e.Env.Cwd, ".claude/skills/lint2/SKILL.md"))) == nil || len(p.Changes) != 3 {
		t.Fatalf("package-source module not planned: %+v", p.Changes)
	}
}

func TestOutdatedAndList(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry()
	reg.tags["@acme/kit"] = map[string]string{"latest": "1.1.0"}
	e, req := pkgEngine(t, reg)
	if _, _, err := e.Install(ctx, req, engine.InstallOptions{Specs: []string{"@acme/kit@~1.0.0"}, NoDeploy: true}); err != nil {
		t.Fatal(err)
	}
	out, _, err := e.Outdated(ctx, req)
	if err != nil || len(out.Packages) != 1 || out.Packages[0] != (engine.OutdatedPackage{Name: "@acme/kit", Installed: "1.0.0", Wanted: "1.0.0", Latest: "1.1.0", Registry: "local"}) {
		t.Fatalf("outdated: %v %+v", err, out)
	}
	list, _, err := e.ListPackages(ctx, req)
	if err != nil || len(list.Packages) != 2 || !list.Packages[1].Direct || list.Packages[1].Artifacts["skills"] != 1 {
		t.Fatalf("list: %v %+v", err, list)
	}
}
