package main

import (
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/go-git/go-git/v5"
)

// InitCmd is `agentpack init`.
type InitCmd struct {
	Git bool `help:"Also make the repo a git repository."`
}

// Run implements the command.
func (c *InitCmd) Run(a *App) error {
	return a.run("init", "init", func() (*result, error) {
		if err := a.requireYesInJSON("init"); err != nil {
			return nil, err
		}
		dir := a.Env.ResolveRepo(a.Globals.Repo)
		eng, preview := a.dryRunEngine()
		var d *engine.InitData
		var warnings []string
		err := eng.WithEditLock(a.Ctx(), "init", func(recovered []string) error {
			warnings = recovered
			var err error
			if d, err = eng.InitRepo(a.Ctx(), dir); err != nil || preview != nil || !c.Git {
				return err
			}
			if _, err := git.PlainInit(dir, false); err != nil && err != git.ErrRepositoryAlreadyExists {
				return apperr.Wrap(err, apperr.IOFailed, "cannot create a git repository in %s", dir).WithHint("check the folder's permissions")
			}
			d.Git = true
			return nil
		})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		if preview != nil {
			r := preview(d, c.Git)
			r.Warnings = warnings
			return r, nil
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			p.Printf("Created %s with %d files. Next: agentpack --repo %s plan\n", p.Path(d.Repo), len(d.Created), p.Path(d.Repo))
		}}, nil
	})
}

// AddCmd is `agentpack add`.
type AddCmd struct {
	Type    string   `arg:"" enum:"instructions,skill,prompt,command,agent,mcp" help:"Module type."`
	Source  string   `arg:"" help:"Source spec: local:<path>, git:<url>#ref=..&subdir=.., gh:owner/repo/path@ref."`
	ID      string   `help:"Module id (default <type>:<name>)."`
	Tags    []string `help:"Tags (default base)." sep:","`
	Targets []string `name:"targets" help:"Restrict to these targets." sep:","`
}

// Run implements the command.
func (c *AddCmd) Run(a *App) error {
	return a.run("add", "add", func() (*result, error) {
		if err := a.requireYesInJSON("add"); err != nil {
			return nil, err
		}
		spec, err := gitsource.ParseSpec(c.Source)
		if err != nil {
			return nil, err
		}
		mod := module.Module{ID: c.ID, Type: module.Type(c.Type), Tags: c.Tags, Targets: c.Targets}
		name := ""
		switch spec.Kind {
		case gitsource.KindLocal:
			mod.Source.LocalPath = &module.LocalPathSource{Path: filepath.ToSlash(spec.Path)}
			name = filepath.Base(spec.Path)
		case gitsource.KindGit:
			mod.Source.Git = &module.GitSource{URL: spec.URL, Ref: spec.Ref, Subdir: spec.Subdir}
			name = filepath.Base(strings.TrimSuffix(firstNonEmpty(spec.Subdir, spec.URL), ".git"))
		case gitsource.KindPackage:
			mod.Source.Package = &module.PackageSource{Name: spec.Name, Version: spec.Version, Artifact: spec.Artifact}
			name = firstNonEmpty(spec.Artifact, filepath.Base(spec.Name))
		}
		if mod.ID == "" {
			mod.ID = c.Type + ":" + strings.TrimSuffix(name, filepath.Ext(name))
		}
		if len(mod.Tags) == 0 {
			mod.Tags = []string{"base"}
		}
		eng, preview := a.dryRunEngine()
		var d *engine.AddData
		var warnings []string
		// The check reads agentpack.yaml too, so it runs under the same lock
		// as the edit.
		err = eng.WithEditLock(a.Ctx(), "add", func(recovered []string) error {
			warnings = recovered
			checked, err := eng.CheckNewModule(a.Ctx(), a.Request(), &mod)
			if err != nil {
				return err // its warnings describe a module that was not added
			}
			warnings = append(warnings, checked...)
			d, err = eng.AddModule(a.Ctx(), a.Request(), mod)
			return err
		})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		if preview != nil {
			r := preview(d, nil)
			r.Warnings = warnings
			return r, nil
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			p.Printf("Added %s (%s) to %s\n", d.Module.ID, d.Module.Source, p.Path(d.ManifestPath))
			if mod.Source.Git != nil {
				p.Printf("Next: %s pins it; then %s.\n", a.Request().Command("lock"), a.Request().Command("plan"))
			}
		}}, nil
	})
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// RemoveCmd is `agentpack remove`.
type RemoveCmd struct {
	ID string `arg:"" help:"Module id."`
}

// Run implements the command.
func (c *RemoveCmd) Run(a *App) error {
	return a.run("remove", "remove", func() (*result, error) {
		if err := a.requireYesInJSON("remove"); err != nil {
			return nil, err
		}
		eng, preview := a.dryRunEngine()
		var d *engine.RemoveData
		var warnings []string
		err := eng.WithEditLock(a.Ctx(), "remove", func(recovered []string) error {
			warnings = recovered
			var err error
			d, err = eng.RemoveModule(a.Ctx(), a.Request(), c.ID)
			return err
		})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		if preview != nil {
			r := preview(d, nil)
			r.Warnings = warnings
			return r, nil
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) { p.Printf("Removed %s from %s\n", d.ID, p.Path(d.ManifestPath)) }}, nil
	})
}
