package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
)

// fakePackage is the stand-in package format of the CLI package scripts:
// a JSON file instead of a .aam archive, so the commands' parsing,
// rendering, envelopes and exit codes are tested apart from the archive
// format and the registry layout.
type fakePackage struct {
	Name      string                         `json:"name"`
	Version   string                         `json:"version"`
	Deps      map[string]string              `json:"deps"`
	Artifacts map[string][]pkgcache.Artifact `json:"artifacts"`
	Files     map[string]string              `json:"files"`
}

// installFakePackagesHook gives every engine of this test process a
// registry made of the *.json files in $AGENTPACK_TEST_FAKE_REGISTRY.
func installFakePackagesHook() {
	dir := os.Getenv("AGENTPACK_TEST_FAKE_REGISTRY")
	if dir == "" {
		return
	}
	prev := engineHook
	engineHook = func(e *engine.Engine) {
		if prev != nil {
			prev(e)
		}
		e.ExtractPackage = extractFake
		e.OpenRegistries = func(context.Context) ([]engine.PackageRegistry, error) {
			return []engine.PackageRegistry{fakeRegistry(dir)}, nil
		}
	}
}

func extractFake(archive []byte) (*pkgcache.Extracted, error) {
	var p fakePackage
	if err := json.Unmarshal(archive, &p); err != nil {
		return nil, apperr.New(apperr.ManifestInvalid, "not a package: %v", err)
	}
	ex := &pkgcache.Extracted{Meta: pkgcache.Meta{Name: p.Name, Version: p.Version, Dependencies: p.Deps, Artifacts: p.Artifacts}}
	for path, c := range p.Files {
		ex.Files = append(ex.Files, pkgcache.File{Path: path, Data: []byte(c), Mode: 0o644})
	}
	slices.SortFunc(ex.Files, func(a, b pkgcache.File) int { return strings.Compare(a.Path, b.Path) })
	return ex, nil
}

type fakeRegistry string

func (r fakeRegistry) Name() string { return "fake" }
func (r fakeRegistry) URL() string  { return "file://" + filepath.ToSlash(string(r)) }

func (r fakeRegistry) all() map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(string(r), "*.json"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var fp fakePackage
		if json.Unmarshal(data, &fp) != nil {
			continue
		}
		if out[fp.Name] == nil {
			out[fp.Name] = map[string][]byte{}
		}
		out[fp.Name][fp.Version] = data
	}
	return out
}

func (r fakeRegistry) Lookup(_ context.Context, name string) (*resolve.Package, error) {
	vs, ok := r.all()[name]
	if !ok {
		return nil, apperr.New(apperr.PackageNotFound, "package %s not found", name)
	}
	p := &resolve.Package{Name: name}
	for v, data := range vs {
		var fp fakePackage
		_ = json.Unmarshal(data, &fp)
		p.Versions = append(p.Versions, resolve.Version{Version: v, Dependencies: fp.Deps})
	}
	return p, nil
}

func (r fakeRegistry) Download(_ context.Context, name, version string) ([]byte, string, error) {
	data, ok := r.all()[name][version]
	if !ok {
		return nil, "", apperr.New(apperr.PackageNotFound, "%s@%s not found", name, version)
	}
	return data, "", nil
}

// scriptCondition answers the scripts' custom conditions: [aampkg] is
// true once the CLI has the registry commands (the package journey on real
// local registries needs `registry init` and `publish`).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "aampkg":
		model, err := completionModel()
		if err != nil {
			return false, err
		}
		for _, c := range model.Node.Children {
			if c.Name == "registry" {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
