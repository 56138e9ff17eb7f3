package main

import (
	"github.com/agentpack/agentpack/engine"
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
			d, err = eng.InitRepo(a.Ctx(), dir, c.Git && preview == nil)
			return err
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
		eng, preview := a.dryRunEngine()
		d, warnings, err := eng.Add(a.Ctx(), a.Request(), engine.AddSpec{Type: c.Type, Source: c.Source, ID: c.ID, Tags: c.Tags, Targets: c.Targets})
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
			if d.Module.Source.Git != nil {
				p.Printf("Next: %s pins it; then %s.\n", a.Request().Command("lock"), a.Request().Command("plan"))
			}
		}}, nil
	})
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
