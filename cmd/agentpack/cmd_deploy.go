package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
)

// DeployCmd is `agentpack deploy`.
type DeployCmd struct {
	Apply bool `help:"Apply the plan (asks first in a terminal; --yes to skip)."`
	Adopt bool `help:"Allow overwriting files agentpack does not manage yet (saved in the snapshot)."`
	Force bool `help:"Allow overwriting managed files edited since the last deploy (saved in the snapshot)."`
}

// Run implements the command.
func (c *DeployCmd) Run(a *App) error {
	id := "deploy"
	apply := c.Apply && !a.Globals.DryRun
	if apply {
		id = "deploy --apply"
	}
	return a.run("deploy", id, func() (*result, error) {
		eng := a.Engine()
		req := a.Request()
		expect := ""
		if apply {
			if err := a.requireYesInJSON(id); err != nil {
				return nil, err
			}
			if !a.Globals.Yes {
				// Show the plan, then ask; apply exactly the plan that was shown.
				st, p, err := eng.PlanView(a.Ctx(), req)
				if err != nil {
					return warningsOf(st), err
				}
				// Fail before asking: a plan that will be refused is not worth a prompt.
				if err := engine.CheckRefusals(p, engine.ApplyOptions{Adopt: c.Adopt, Force: c.Force}); err != nil {
					return warningsOf(st), err
				}
				if len(p.Changes) > 0 {
					a.progress.clear()
					printChanges(a.errPrinter(), p.Profile, p.Targets, p.Changes, p.Summary, c.givenFlags()...)
					if err := a.confirm(id, "Apply these changes?"); err != nil {
						return warningsOf(st), err
					}
				}
				expect = p.Hash()
			}
		}
		st, d, err := eng.Deploy(a.Ctx(), req, apply, engine.ApplyOptions{Adopt: c.Adopt, Force: c.Force, Command: id, ExpectPlanHash: expect})
		if err != nil {
			return warningsOf(st), err
		}
		return &result{Data: d, Warnings: st.Warnings, Human: func(p *Printer) {
			if !apply {
				printChanges(p, d.Profile, d.Targets, d.Changes, d.Summary, c.givenFlags()...)
				if len(d.Changes) > 0 {
					p.Printf("Run `%s` to apply.\n", req.Command(applyArgs(d.Changes, c)...))
				}
				return
			}
			if !d.Applied {
				p.Printf("Nothing to do: the disk already matches profile %s.\n", d.Profile)
				return
			}
			if len(d.Changes) == 0 {
				// Only manifests moved: the files already hold what the
				// repo now wants (a hand edit the repo took over).
				p.Printf("The files already match; recorded them in the target manifests. Snapshot %s\n", p.bold(d.SnapshotID))
			} else {
				p.Printf("Applied %d create, %d update, %d delete. Snapshot %s\n", d.Summary.Create, d.Summary.Update, d.Summary.Delete, p.bold(d.SnapshotID))
			}
			p.Printf("Undo with: agentpack rollback --last\n")
		}}, nil
	})
}

// givenFlags lists --adopt/--force when given.
func (c *DeployCmd) givenFlags() []string {
	var out []string
	if c.Adopt {
		out = append(out, "--adopt")
	}
	if c.Force {
		out = append(out, "--force")
	}
	return out
}

// applyArgs is `deploy --apply` plus the flags the plan will need, so the
// suggested command does not fail on a refusal.
func applyArgs(changes []plan.Change, c *DeployCmd) []string {
	args := []string{"deploy", "--apply"}
	adopt, force := c.Adopt, c.Force
	for _, ch := range changes {
		adopt = adopt || ch.UpdateKind == plan.UpdateAdopt
		force = force || ch.UpdateKind == plan.UpdateDrifted || ch.Op == plan.OpDelete && ch.Reason == plan.ReasonEdited
	}
	if adopt {
		args = append(args, "--adopt")
	}
	if force {
		args = append(args, "--force")
	}
	return args
}

// StatusCmd is `agentpack status`.
type StatusCmd struct {
	Only     []string `help:"Only these kinds: missing, modified, extra, pending." sep:","`
	ExitCode bool     `name:"exit-code" help:"Exit 2 when there is drift or a pending change, 0 when in sync (for CI)."`
}

// Run implements the command.
func (c *StatusCmd) Run(a *App) error {
	return a.run("status", "status", func() (*result, error) {
		st, d, err := a.Engine().Status(a.Ctx(), a.Request(), c.Only)
		if err != nil {
			return warningsOf(st), err
		}
		return &result{Data: d, Warnings: st.Warnings, Human: func(p *Printer) {
			if len(d.Drift) == 0 {
				p.Printf("In sync: profile %s, targets %s.\n", d.Profile, joinOrNone(d.Targets))
				return
			}
			last := ""
			for _, x := range d.Drift {
				if x.Target != last {
					p.Printf("%s\n", p.bold(x.Target))
					last = x.Target
				}
				kind := map[string]string{engine.DriftModified: p.red("modified"), engine.DriftMissing: p.yellow("missing "),
					engine.DriftExtra: p.dim("extra   "), engine.DriftPending: p.cyan("pending ")}[x.Kind]
				p.Printf("  %s  %s\n", kind, p.Path(x.Path.String()))
			}
			s := d.Summary
			p.Printf("\n%d modified, %d missing, %d extra, %d pending.\n", s.Modified, s.Missing, s.Extra, s.Pending)
			if len(d.NextActions) > 0 {
				p.Printf("Next: %s\n", strings.Join(d.NextActions, "  |  "))
			}
		}, Summary: fmt.Sprintf("%d modified, %d missing, %d extra, %d pending", d.Summary.Modified, d.Summary.Missing, d.Summary.Extra, d.Summary.Pending),
			ExitCode: changesExitCode(c.ExitCode, len(d.Drift))}, nil
	})
}

// RollbackCmd is `agentpack rollback`.
type RollbackCmd struct {
	To   string `help:"Snapshot id to return to (the state right after it was applied)."`
	Last bool   `help:"Undo the newest snapshot."`
}

// Run implements the command.
func (c *RollbackCmd) Run(a *App) error {
	return a.run("rollback", "rollback", func() (*result, error) {
		if err := a.requireYesInJSON("rollback"); err != nil && !a.Globals.DryRun {
			return nil, err
		}
		opt := engine.RollbackOptions{To: c.To, Last: c.Last, Target: a.Globals.Target}
		var d *engine.RollbackData
		var warnings []string
		var err error
		if a.Globals.Yes || a.Globals.DryRun {
			// Nothing to ask: one walk, which under --dry-run only records.
			d, warnings, err = a.Engine().Rollback(a.Ctx(), opt)
			if err != nil {
				return &result{Warnings: warnings}, err
			}
			warnings = append(warnings, a.rollbackAway(d.Files)...)
		} else if d, warnings, err = a.confirmRollback(opt); err != nil {
			return &result{Warnings: warnings}, err
		}
		// A dry run reports the files it would restore and remove, not the
		// state files the recording System saw.
		return &result{Data: d, Warnings: warnings, previewed: a.Globals.DryRun, Human: func(p *Printer) {
			to := "the state before the first snapshot"
			if d.RolledBackTo != nil {
				to = *d.RolledBackTo
			}
			if d.DryRun {
				printRollbackFiles(p, d.Files)
				p.Printf("Would roll back to %s: %d to restore, %d to remove. Nothing written (--dry-run).\n", to, d.Restored, d.Removed)
				return
			}
			p.Printf("Rolled back to %s: %d restored, %d removed. Recorded as snapshot %s\n", to, d.Restored, d.Removed, p.bold(d.EventSnapshotID))
		}}, nil
	})
}

// confirmRollback looks first, with the same walk on a System that only
// records, shows the files (in a terminal) and asks, then rolls back.
func (a *App) confirmRollback(opt engine.RollbackOptions) (*engine.RollbackData, []string, error) {
	preview, warnings, err := a.recordingEngine().Rollback(a.Ctx(), opt)
	if err != nil {
		return nil, warnings, err
	}
	warnings = append(warnings, a.rollbackAway(preview.Files)...)
	if !a.Globals.JSON && isTerminal(a.Stdin) {
		printRollbackFiles(a.errPrinter(), preview.Files)
		for _, w := range warnings {
			fmt.Fprintf(a.Stderr, "%s %s\n", a.errPrinter().yellow("warning:"), w)
		}
		warnings = nil
	}
	if err := a.confirm("rollback", fmt.Sprintf("Restore %d and remove %d file(s)?", preview.Restored, preview.Removed)); err != nil {
		return nil, warnings, err
	}
	d, more, err := a.Engine().Rollback(a.Ctx(), opt)
	return d, append(warnings, more...), err
}

// rollbackAway warns when a rollback touches files of other projects.
func (a *App) rollbackAway(files []engine.RollbackFile) []string {
	sys := a.Engine().Sys
	away := outsideProject(a.Env, sys, files)
	if len(away) == 0 {
		return nil
	}
	here := a.Env.ProjectRoot(sys)
	if !a.Env.InGitRepo(sys) {
		here = "no project"
	}
	return []string{fmt.Sprintf("this rollback touches files of %s (you are in %s): snapshots are shared by every project deployed from this machine",
		strings.Join(away, ", "), here)}
}

// maxAway is how many other projects a rollback's warning names.
const maxAway = 5

// outsideProject returns the folders of files that are neither in the
// current project nor in a tool's folder under $HOME (~/.codex, ~/.claude…):
// most likely another project's files.
func outsideProject(env engine.Env, sys fsys.System, files []engine.RollbackFile) []string {
	proj := env.ProjectRoot(sys)
	inProject := env.InGitRepo(sys) // outside a git repo, no folder counts as "this project"
	seen := map[string]bool{}
	var out []string
	rootOf := engine.ProjectRoots(sys)
	for _, f := range files {
		if len(out) == maxAway {
			break
		}
		if inProject && inDir(proj, f.Path) {
			continue
		}
		if rel, err := filepath.Rel(env.Home, f.Path); err == nil && strings.HasPrefix(rel, ".") && !strings.HasPrefix(rel, "..") {
			continue
		}
		dir := rootOf(filepath.Dir(f.Path)) // its project, when it is in one
		if !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	return out
}

func inDir(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func printRollbackFiles(p *Printer, files []engine.RollbackFile) {
	const max = 15
	for i, f := range files {
		if i == max {
			p.Printf("  … and %d more\n", len(files)-max)
			break
		}
		mark := p.green("restore")
		if f.Op == "remove" {
			mark = p.red("remove ")
		}
		p.Printf("  %s  %s\n", mark, p.Path(f.Path))
	}
}

// SnapshotsCmd is `agentpack snapshots`.
type SnapshotsCmd struct {
	List  SnapshotsListCmd  `cmd:"" default:"1" help:"List snapshots (default)."`
	Show  SnapshotsShowCmd  `cmd:"" help:"Show one snapshot's files."`
	Prune SnapshotsPruneCmd `cmd:"" help:"Delete all but the newest N snapshots."`
}

// SnapshotsListCmd is `agentpack snapshots list`.
type SnapshotsListCmd struct{}

// Run implements the command.
func (c *SnapshotsListCmd) Run(a *App) error {
	return a.run("snapshots", "snapshots list", func() (*result, error) {
		list, warnings, err := a.Engine().Snapshots(a.Ctx())
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: map[string]any{"snapshots": list}, Warnings: warnings, Human: func(p *Printer) {
			if len(list) == 0 {
				p.Printf("No snapshots yet.\n")
			}
			for _, s := range list {
				p.Printf("%s  %-8s  %3d files  %s\n", s.ID, s.Kind, s.Files, joinOrNone(s.Targets))
			}
		}}, nil
	})
}

// SnapshotsShowCmd is `agentpack snapshots show`.
type SnapshotsShowCmd struct {
	ID string `arg:"" help:"Snapshot id."`
}

// Run implements the command.
func (c *SnapshotsShowCmd) Run(a *App) error {
	return a.run("snapshots", "snapshots show", func() (*result, error) {
		d, err := a.Engine().Snapshot(a.Ctx(), c.ID)
		if err != nil {
			return nil, err
		}
		return &result{Data: map[string]any{"snapshot": d}, Human: func(p *Printer) {
			p.Printf("%s (%s) %s\n", p.bold(d.ID), d.Kind, d.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
			for _, f := range d.Files {
				note := ""
				if f.Manifest {
					note = p.dim("  (manifest)")
				}
				p.Printf("  %-6s %-11s %s%s\n", f.Op, f.Target, p.Path(f.Path), note)
			}
		}}, nil
	})
}

// SnapshotsPruneCmd is `agentpack snapshots prune`.
type SnapshotsPruneCmd struct {
	Keep int `required:"" help:"How many of the newest snapshots to keep."`
}

// Run implements the command.
func (c *SnapshotsPruneCmd) Run(a *App) error {
	return a.run("snapshots", "snapshots prune", func() (*result, error) {
		if err := a.requireYesInJSON("snapshots prune"); err != nil {
			return nil, err
		}
		removed, kept, err := a.Engine().PruneSnapshots(a.Ctx(), c.Keep)
		if err != nil {
			return nil, err
		}
		return &result{Data: map[string]any{"removed": removed, "kept": kept}, Human: func(p *Printer) {
			p.Printf("Removed %d snapshot(s); %d kept.\n", len(removed), kept)
		}}, nil
	})
}
