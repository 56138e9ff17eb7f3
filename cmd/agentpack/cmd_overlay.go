package main

import (
	"os"
	"os/exec"
	"strings"

	"github.com/agentpack/agentpack/engine"
)

// OverlayCmd groups `agentpack overlay ...`.
type OverlayCmd struct {
	Edit   OverlayEditCmd   `cmd:"" help:"Create or complete a module's overlay (a copy of its files to change, or patches)."`
	Path   OverlayPathCmd   `cmd:"" help:"Print a module's overlay folder."`
	Rebase OverlayRebaseCmd `cmd:"" help:"Carry an overlay's edits onto the module's new upstream (3-way merge)."`
}

// overlayArgs are the module and scope every overlay command names.
type overlayArgs struct {
	ModuleID string `arg:"" name:"module_id" help:"Module id (e.g. skill:review)."`
	Scope    string `enum:"global,machine,project" default:"global" help:"Overlay layer: global, machine (this machine, see --machine) or project (the working project)."`
}

func (o overlayArgs) request(a *App) engine.OverlayRequest {
	return engine.OverlayRequest{Request: a.Request(), ModuleID: o.ModuleID, Scope: o.Scope}
}

// OverlayEditCmd is `agentpack overlay edit`.
type OverlayEditCmd struct {
	overlayArgs
	Kind        string `enum:"dir,patch" default:"dir" help:"dir: replacement files; patch: unified diffs in .agentpack/patches."`
	Sparse      bool   `help:"Copy no upstream file: keep only the files you change."`
	Materialize bool   `help:"Copy the upstream files the overlay lacks (never overwrites your edits)."`
}

// Run implements the command.
func (c *OverlayEditCmd) Run(a *App) error {
	return a.run("overlay", "overlay edit", func() (*result, error) {
		d, err := a.Engine().OverlayEdit(a.Ctx(), engine.OverlayEditRequest{OverlayRequest: c.request(a),
			Kind: c.Kind, Sparse: c.Sparse, Materialize: c.Materialize})
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Warnings: d.Warnings, Summary: d.OverlayDir, Human: func(p *Printer) {
			verb := "Overlay already exists at"
			if d.Created {
				verb = "Created"
			}
			p.Printf("%s %s (%s overlay of %s)\n", verb, p.bold(d.OverlayDir), d.Scope, d.ModuleID)
			switch {
			case d.PatchesDir != "":
				p.Printf("Put one unified diff per file in %s, named <file>.patch\n", d.PatchesDir)
			case d.Materialized:
				p.Printf("Copied %d upstream file(s) the overlay lacked\n", len(d.Copied))
			case d.Sparse:
				p.Printf("Sparse overlay: add only the files you change\n")
			}
			a.openEditor(d.OverlayDir, d.PatchesDir)
		}}, nil
	})
}

// openEditor opens $EDITOR on a new overlay when a person is at a
// terminal, as the original agentpack does.
func (a *App) openEditor(dir, patches string) {
	editor := strings.TrimSpace(os.Getenv("EDITOR"))
	if editor == "" || a.Globals.DryRun || !isTerminal(a.Stdin) {
		return
	}
	if patches != "" {
		dir = patches
	}
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "editor", dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_ = cmd.Run()
}

// OverlayPathCmd is `agentpack overlay path`.
type OverlayPathCmd struct {
	overlayArgs
}

// Run implements the command.
func (c *OverlayPathCmd) Run(a *App) error {
	return a.run("overlay", "overlay path", func() (*result, error) {
		d, err := a.Engine().OverlayPath(a.Ctx(), c.request(a))
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Summary: d.OverlayDir, Human: func(p *Printer) { p.Printf("%s\n", d.OverlayDir) }}, nil
	})
}

// OverlayRebaseCmd is `agentpack overlay rebase`.
type OverlayRebaseCmd struct {
	overlayArgs
	Sparsify bool `help:"Delete overlay files that end up identical to upstream."`
}

// Run implements the command.
func (c *OverlayRebaseCmd) Run(a *App) error {
	return a.run("overlay", "overlay rebase", func() (*result, error) {
		d, err := a.Engine().OverlayRebase(a.Ctx(), engine.OverlayRebaseRequest{OverlayRequest: c.request(a), Sparsify: c.Sparsify})
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			verb := "Rebased"
			if d.DryRun {
				verb = "Would rebase"
			}
			s := d.Report.Summary
			p.Printf("%s %s\n", verb, d.OverlayDir)
			p.Printf("Summary: updated=%d deleted=%d skipped=%d resolved=%d conflicts=%d\n",
				s.UpdatedFiles, s.DeletedFiles, s.SkippedFiles, s.ResolvedFiles, s.ConflictFiles)
		}}, nil
	})
}
