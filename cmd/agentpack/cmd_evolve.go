package main

import (
	"github.com/agentpack/agentpack/engine"
)

// EvolveCmd groups `agentpack evolve ...`.
type EvolveCmd struct {
	Propose EvolveProposeCmd `cmd:"" help:"Commit hand edits of deployed files as overlay files on a new branch of the desired-state repo."`
	Restore EvolveRestoreCmd `cmd:"" help:"Recreate deployed files that are missing (never overwrites, never deletes)."`
}

// EvolveProposeCmd is `agentpack evolve propose`.
type EvolveProposeCmd struct {
	ModuleID string `name:"module-id" help:"Only this module's edits."`
	Scope    string `enum:"global,machine,project" default:"global" help:"Overlay layer to write: global, machine or project."`
	Branch   string `help:"Branch to create (default: evolve/propose-<scope>-<module>-<timestamp>)."`
}

// Run implements the command.
func (c *EvolveProposeCmd) Run(a *App) error {
	return a.run("evolve", "evolve propose", func() (*result, error) {
		d, err := a.Engine().EvolvePropose(a.Ctx(), engine.EvolveProposeRequest{Request: a.Request(), ModuleID: c.ModuleID,
			Scope: c.Scope, Branch: c.Branch, DryRun: a.Globals.DryRun})
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Warnings: d.Warnings, Summary: d.Branch, Human: func(p *Printer) { printProposal(p, d) }}, nil
	})
}

func printProposal(p *Printer, d *engine.EvolveProposeData) {
	switch {
	case d.Created:
		p.Printf("Created branch %s with %d overlay file(s) (%s scope):\n", p.bold(d.Branch), len(d.Files), d.Scope)
		for _, f := range d.Files {
			p.Printf("  %s\n", f)
		}
		p.Printf("Review and merge it, then run `agentpack deploy --apply`.\n")
	case d.Reason == "dry_run":
		p.Printf("Dry run: would commit %d overlay file(s) (%s scope) for:\n", len(d.Files), d.Scope)
		for _, it := range d.Candidates {
			p.Printf("  %s  %s -> %s\n", it.ModuleID, p.Path(it.Path.String()), it.File)
		}
	case d.Reason == "no_drift":
		p.Printf("No hand edits to propose.\n")
	default:
		p.Printf("No proposeable hand edits.\n")
	}
	for _, s := range d.Skipped {
		p.Printf("  skipped %s %s: %s\n", s.Target, p.Path(s.Path.String()), s.ReasonMessage)
	}
}

// EvolveRestoreCmd is `agentpack evolve restore`.
type EvolveRestoreCmd struct {
	ModuleID string `name:"module-id" help:"Only this module's files."`
}

// Run implements the command.
func (c *EvolveRestoreCmd) Run(a *App) error {
	return a.run("evolve", "evolve restore", func() (*result, error) {
		d, err := a.Engine().EvolveRestore(a.Ctx(), engine.EvolveRestoreRequest{Request: a.Request(), ModuleID: c.ModuleID})
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Warnings: d.Warnings, Summary: d.Reason, Human: func(p *Printer) {
			if len(d.Restored) == 0 {
				p.Printf("No missing files.\n")
				return
			}
			verb := "Restored"
			if d.Reason == "dry_run" {
				verb = "Would restore"
			}
			p.Printf("%s %d missing file(s):\n", verb, len(d.Restored))
			for _, it := range d.Restored {
				p.Printf("  %s\n", p.Path(it.Path.String()))
			}
		}}, nil
	})
}
