package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

// memRegistry is an in-memory registry whose archives are JSON (see
// jsonArchive), so these tests drive the package tools without the .aam
// format.
type memRegistry struct{ archives map[string]map[string][]byte }

type jsonArchive struct {
	Name, Version string
	Deps          map[string]string
	Skill         string
}

func (r *memRegistry) Name() string { return "mem" }
func (r *memRegistry) URL() string  { return "file:///mem" }
func (r *memRegistry) Lookup(_ context.Context, name string) (*resolve.Package, error) {
	vs, ok := r.archives[name]
	if !ok {
		return nil, apperr.New(apperr.PackageNotFound, "no %s", name)
	}
	p := &resolve.Package{Name: name}
	for v, a := range vs {
		var ja jsonArchive
		_ = json.Unmarshal(a, &ja)
		p.Versions = append(p.Versions, resolve.Version{Version: v, Dependencies: ja.Deps})
	}
	return p, nil
}
func (r *memRegistry) Download(_ context.Context, name, version string) ([]byte, string, error) {
	return r.archives[name][version], "", nil
}

func extractJSON(archive []byte) (*pkgcache.Extracted, error) {
	var ja jsonArchive
	if err := json.Unmarshal(archive, &ja); err != nil {
		return nil, err
	}
	md := "---\nname: " + ja.Skill + "\ndescription: from " + strings.TrimPrefix(ja.Name, "@") + "\n---\nbody\n"
	return &pkgcache.Extracted{
		Meta:  pkgcache.Meta{Name: ja.Name, Version: ja.Version, Dependencies: ja.Deps, Artifacts: map[string][]pkgcache.Artifact{"skills": {{Name: ja.Skill, Path: "skills/" + ja.Skill}}}},
		Files: []pkgcache.File{{Path: "skills/" + ja.Skill + "/SKILL.md", Data: []byte(md), Mode: 0o644}},
	}, nil
}

func TestPackageToolsRoundTrip(t *testing.T) {
	te := newTestEnv(t)
	arch := func(name, version, skill string, deps map[string]string) []byte {
		b, _ := json.Marshal(jsonArchive{Name: name, Version: version, Deps: deps, Skill: skill})
		return b
	}
	reg := &memRegistry{archives: map[string]map[string][]byte{
		"@acme/kit":  {"1.0.0": arch("@acme/kit", "1.0.0", "kit-review", map[string]string{"@acme/base": "^1.0.0"})},
		"@acme/base": {"1.0.0": arch("@acme/base", "1.0.0", "kit-lint", nil), "1.1.0-rc.1": arch("@acme/base", "1.1.0-rc.1", "kit-lint", nil)},
	}}
	newEngine := func() *engine.Engine {
		e := engine.New(te.Env, targets.NewSet())
		e.ExtractPackage = extractJSON
		e.OpenRegistries = func(context.Context) ([]engine.PackageRegistry, error) { return []engine.PackageRegistry{reg}, nil }
		return e
	}
	cs := connect(t, te.server(t, allowWrite, func(o *Options) { o.NewEngine = newEngine }), "2025-11-25")

	if env := callTool(t, cs, "install", map[string]any{"packages": []string{"@acme/kit"}}); env.code() != "E_CONFIRM_REQUIRED" {
		t.Fatalf("install without yes: %s", env.raw)
	}
	env := callTool(t, cs, "install", map[string]any{"packages": []string{"@acme/kit", "@acme/nope"}, "platform": "claude_code", "yes": true})
	if !env.OK || env.Command != "install" {
		t.Fatalf("install: %s", env.raw)
	}
	deps, _ := env.Data["dependencies_resolved"].([]any)
	failed, _ := env.Data["failed"].([]any)
	if len(deps) != 1 || deps[0].(map[string]any)["version"] != "1.0.0" || len(failed) != 1 {
		t.Fatalf("install data: %s", env.raw)
	}

	env = callTool(t, cs, "list", map[string]any{})
	if pk, _ := env.Data["packages"].([]any); !env.OK || len(pk) != 2 {
		t.Fatalf("list: %s", env.raw)
	}
	c, err := readURI(t, cs, URIPackagesInstalled)
	if err != nil || !strings.Contains(c.Text, `"@acme/base"`) {
		t.Fatalf("%s: %v %+v", URIPackagesInstalled, err, c)
	}
	c, err = readURI(t, cs, "agentpack://packages/%40acme%2Fkit")
	if err != nil || !strings.Contains(c.Text, `"direct": true`) {
		t.Fatalf("package resource: %v %+v", err, c)
	}
	if _, err := readURI(t, cs, "agentpack://packages/ghost"); err == nil {
		t.Fatal("a package that is not installed was read")
	}

	env = callTool(t, cs, "verify", map[string]any{"package_name": "@acme/kit"})
	if !env.OK || env.Data["is_clean"] != true {
		t.Fatalf("verify: %s", env.raw)
	}
	env = callTool(t, cs, "uninstall", map[string]any{"package_name": "@acme/kit", "yes": true})
	if rd, _ := env.Data["removed_dependencies"].([]any); !env.OK || len(rd) != 1 {
		t.Fatalf("uninstall: %s", env.raw)
	}
	if env := callTool(t, cs, "uninstall", map[string]any{"package_name": "@acme/kit", "yes": true}); env.code() != "E_PACKAGE_NOT_INSTALLED" {
		t.Fatalf("second uninstall: %s", env.raw)
	}
}
