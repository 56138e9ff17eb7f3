package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agentpack/agentpack/engine"
)

// SourceCmd groups `agentpack source ...` (artifact sources, SPEC §10).
type SourceCmd struct {
	Add        SourceAddCmd        `cmd:"" help:"Register a git repo as an artifact source, pinned to a commit."`
	List       SourceListCmd       `cmd:"" help:"List registered artifact sources."`
	Scan       SourceScanCmd       `cmd:"" help:"List the artifacts of a source at its pinned commit."`
	Candidates SourceCandidatesCmd `cmd:"" help:"List artifacts that no module uses yet."`
	Diff       SourceDiffCmd       `cmd:"" help:"Compare the pinned commit with what the ref names now (the pin does not move)."`
	Update     SourceUpdateCmd     `cmd:"" help:"Move a source's pin to the ref's new commit and re-lock the modules that use it."`
	Remove     SourceRemoveCmd     `cmd:"" help:"Remove an artifact source from agentpack.yaml."`
}

// SourceAddCmd is `agentpack source add`.
type SourceAddCmd struct {
	Spec string `arg:"" help:"owner/repo[@ref], https://github.com/o/r[/tree/<ref>/<path>], git@host:o/r, git+https://…, file:///path."`
	Ref  string `help:"Branch, tag or commit to pin (default: the remote's default branch)."`
	Path string `help:"Only scan this folder of the repo."`
	Name string `help:"Source name (default: the repo's name)."`
}

// Run implements the command.
func (c *SourceAddCmd) Run(a *App) error {
	return a.sourceRun("source add", true, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceAdd(a.Ctx(), a.Request(), engine.SourceAddOptions{Spec: c.Spec, Ref: c.Ref, Path: c.Path, Name: c.Name})
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			p.Printf("Added source %s (%s) at %s: %d artifact(s). Next: agentpack source candidates --source %s\n",
				p.bold(d.Source.Name), d.Source.URL, shortSHA(d.Source.Commit), d.ArtifactCount, d.Source.Name)
		}}, nil
	})
}

// SourceListCmd is `agentpack source list`.
type SourceListCmd struct{}

// Run implements the command.
func (c *SourceListCmd) Run(a *App) error {
	return a.sourceRun("source list", false, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceList(a.Ctx(), a.Request())
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			if len(d.Sources) == 0 {
				p.Printf("No artifact sources. Add one with: agentpack source add <owner/repo>\n")
				return
			}
			tw := newTable(p, "NAME", "COMMIT", "REF", "PATH", "URL")
			for _, s := range d.Sources {
				tableRow(tw, s.Name, shortSHA(s.Commit), orDash(s.Ref), orDash(s.Path), s.URL)
			}
			_ = tw.Flush()
		}}, nil
	})
}

// SourceScanCmd is `agentpack source scan`.
type SourceScanCmd struct {
	Name string `arg:"" help:"Source name."`
	Type string `help:"Only this artifact type: skill, instructions, prompt, command, agent."`
}

// Run implements the command.
func (c *SourceScanCmd) Run(a *App) error {
	return a.sourceRun("source scan", false, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceScan(a.Ctx(), a.Request(), c.Name, c.Type)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			printArtifacts(p, d.Artifacts, true)
			p.Printf("%d artifact(s) in %s at %s.\n", len(d.Artifacts), d.Source.Name, shortSHA(d.Source.Commit))
		}}, nil
	})
}

// SourceCandidatesCmd is `agentpack source candidates`.
type SourceCandidatesCmd struct {
	Source string `help:"Only this source."`
	Type   string `help:"Only this artifact type: skill, instructions, prompt, command, agent."`
}

// Run implements the command.
func (c *SourceCandidatesCmd) Run(a *App) error {
	return a.sourceRun("source candidates", false, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceCandidates(a.Ctx(), a.Request(), c.Source, c.Type)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			if len(d.Candidates) == 0 {
				p.Printf("No candidates: every artifact of %s is in use.\n", joinOrNone(d.ScannedSources))
				return
			}
			printArtifacts(p, d.Candidates, false)
			p.Printf("%d candidate(s). Add one with: agentpack add <type> <source_spec> (see --json for source_spec)\n", len(d.Candidates))
		}}, nil
	})
}

// SourceDiffCmd is `agentpack source diff`.
type SourceDiffCmd struct {
	Name string `arg:"" help:"Source name."`
}

// Run implements the command.
func (c *SourceDiffCmd) Run(a *App) error {
	return a.sourceRun("source diff", false, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceDiff(a.Ctx(), a.Request(), c.Name)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			if d.UpToDate {
				p.Printf("%s is up to date at %s.\n", d.Source.Name, shortSHA(d.ToCommit))
				return
			}
			p.Printf("%s: %s -> %s\n", p.bold(d.Source.Name), shortSHA(d.FromCommit), shortSHA(d.ToCommit))
			tw := newTable(p, "CHANGE", "TYPE", "NAME", "PATH", "USED BY")
			for _, x := range d.New {
				tableRow(tw, "new", string(x.Type), x.Name, x.Path, orDash(strings.Join(x.UsedBy, ",")))
			}
			for _, x := range d.Modified {
				tableRow(tw, "modified", string(x.Type), x.Name, x.Path, orDash(strings.Join(x.UsedBy, ",")))
			}
			for _, x := range d.Removed {
				tableRow(tw, "removed", string(x.Type), x.Name, x.Path, orDash(strings.Join(x.UsedBy, ",")))
			}
			_ = tw.Flush()
			p.Printf("%d new, %d modified, %d removed, %d unchanged. Pin unchanged; run `agentpack source update %s` to move it.\n",
				len(d.New), len(d.Modified), len(d.Removed), d.Unchanged, d.Source.Name)
		}}, nil
	})
}

// SourceUpdateCmd is `agentpack source update`.
type SourceUpdateCmd struct {
	Name string `arg:"" optional:"" help:"Source name."`
	All  bool   `help:"Update every source."`
}

// Run implements the command.
func (c *SourceUpdateCmd) Run(a *App) error {
	return a.sourceRun("source update", true, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceUpdate(a.Ctx(), a.Request(), engine.SourceUpdateOptions{Name: c.Name, All: c.All})
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			tw := newTable(p, "SOURCE", "FROM", "TO", "STATE")
			for _, u := range d.Updated {
				state := "up to date"
				if u.Changed {
					state = "moved"
				}
				tableRow(tw, u.Name, shortSHA(u.FromCommit), shortSHA(u.ToCommit), state)
			}
			for _, r := range d.Relocked {
				tableRow(tw, "  "+r.ID, shortSHA(r.FromCommit), shortSHA(r.ToCommit), "re-locked")
			}
			_ = tw.Flush()
		}}, nil
	})
}

// SourceRemoveCmd is `agentpack source remove`.
type SourceRemoveCmd struct {
	Name       string `arg:"" help:"Source name."`
	PurgeCache bool   `help:"Also delete its cached checkouts (except commits the lockfile pins)."`
}

// Run implements the command.
func (c *SourceRemoveCmd) Run(a *App) error {
	return a.sourceRun("source remove", true, func(eng *engine.Engine) (*result, error) {
		d, w, err := eng.SourceRemove(a.Ctx(), a.Request(), c.Name, c.PurgeCache)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			p.Printf("Removed source %s", d.RemovedSource.Name)
			if len(d.PurgedPaths) > 0 {
				p.Printf(" and %d cached checkout(s)", len(d.PurgedPaths))
			}
			p.Printf(".\n")
		}}, nil
	})
}

// sourceRun runs a source subcommand; mutating ones need --yes in --json
// mode unless --dry-run.
func (a *App) sourceRun(id string, mutating bool, fn func(*engine.Engine) (*result, error)) error {
	return a.run("source", id, func() (*result, error) {
		if mutating && !a.Globals.DryRun {
			if err := a.requireYesInJSON(id); err != nil {
				return nil, err
			}
		}
		return fn(a.Engine())
	})
}

func printArtifacts(p *Printer, as []engine.Artifact, usedBy bool) {
	if len(as) == 0 {
		return
	}
	head := []string{"TYPE", "NAME", "PATH", "DESCRIPTION"}
	if usedBy {
		head = append(head, "USED BY")
	} else {
		head = append([]string{"SOURCE"}, head...)
	}
	tw := newTable(p, head...)
	for _, x := range as {
		cells := []string{string(x.Type), x.Name, x.Path, orDash(clipText(x.Description, 50))}
		if usedBy {
			cells = append(cells, orDash(strings.Join(x.UsedBy, ",")))
		} else {
			cells = append([]string{x.Source}, cells...)
		}
		tableRow(tw, cells...)
	}
	_ = tw.Flush()
}

func newTable(p *Printer, head ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(p.W, 0, 4, 2, ' ', 0)
	tableRow(tw, head...)
	return tw
}

func tableRow(tw *tabwriter.Writer, cells ...string) {
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func shortSHA(h string) string {
	if h == "" {
		return "-"
	}
	return engine.ShortHash(h)
}
