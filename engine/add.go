package engine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/module"
)

// AddSpec is what `agentpack add` is given: a module type and a source
// spec (local:…, git:…, gh:…, pkg:…), with optional id, tags and targets.
type AddSpec struct {
	Type    string
	Source  string
	ID      string
	Tags    []string
	Targets []string
}

// Add turns spec into a module (id `<type>:<name of the source>` and tag
// `base` by default), checks it (files, source kind, collisions) and appends
// it to agentpack.yaml, all under the state lock so concurrent adds each
// see the file as the last one left it. The warnings describe the module.
func (e *Engine) Add(ctx context.Context, req Request, spec AddSpec) (*AddData, []string, error) {
	mod, err := ModuleFromSpec(spec)
	if err != nil {
		return nil, nil, err
	}
	var out *AddData
	var warnings []string
	ctx = withCheckouts(ctx)
	if g := mod.Source.Git; g != nil {
		e.prefetch(ctx, []repoRef{{g.URL, g.Ref}}) // the clone runs outside the state lock
	}
	err = e.WithEditLock(ctx, "add", func(recovered []string) error {
		warnings = recovered
		checked, err := e.CheckNewModule(ctx, req, &mod)
		if err != nil {
			return err // its warnings describe a module that was not added
		}
		warnings = append(warnings, checked...)
		out, err = e.AddModule(ctx, req, mod)
		return err
	})
	return out, append(warnings, e.takeRepairs()...), err
}

// ModuleFromSpec builds the module `add` would write for spec.
func ModuleFromSpec(spec AddSpec) (module.Module, error) {
	src, err := gitsource.ParseSpec(spec.Source)
	if err != nil {
		return module.Module{}, err
	}
	mod := module.Module{ID: spec.ID, Type: module.Type(spec.Type), Tags: spec.Tags, Targets: spec.Targets}
	name := ""
	switch src.Kind {
	case gitsource.KindLocal:
		mod.Source.LocalPath = &module.LocalPathSource{Path: filepath.ToSlash(src.Path)}
		name = filepath.Base(src.Path)
	case gitsource.KindGit:
		mod.Source.Git = &module.GitSource{URL: src.URL, Ref: src.Ref, Subdir: src.Subdir}
		name = filepath.Base(strings.TrimSuffix(firstNonEmpty(src.Subdir, src.URL), ".git"))
	case gitsource.KindPackage:
		mod.Source.Package = &module.PackageSource{Name: src.Name, Version: src.Version, Artifact: src.Artifact}
		name = firstNonEmpty(src.Artifact, filepath.Base(src.Name))
	}
	if mod.ID == "" {
		mod.ID = spec.Type + ":" + strings.TrimSuffix(name, filepath.Ext(name))
	}
	if len(mod.Tags) == 0 {
		mod.Tags = []string{"base"}
	}
	return mod, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
