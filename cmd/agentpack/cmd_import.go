package main

import (
	"strconv"
	"strings"

	"github.com/agentpack/agentpack/engine"
)

// ImportCmd is `agentpack import`.
type ImportCmd struct {
	Apply bool `help:"Write the modules (default: dry run; asks first in a terminal, --yes to skip)."`
}

// Run implements the command.
func (c *ImportCmd) Run(a *App) error {
	apply := c.Apply && !a.Globals.DryRun
	id := "import"
	if apply {
		id = "import --apply"
	}
	return a.run("import", id, func() (*result, error) {
		eng := a.Engine()
		req := a.Request()
		if apply {
			if err := a.requireYesInJSON(id); err != nil {
				return nil, err
			}
			if !a.Globals.Yes {
				// Show the plan, then ask.
				d, w, err := eng.Import(a.Ctx(), req, engine.ImportOptions{})
				if err != nil {
					return &result{Warnings: w}, err
				}
				if d.Summary.Create > 0 {
					printImport(a.errPrinter(), d)
					if err := a.confirm(id, "Import these modules?"); err != nil {
						return &result{Warnings: w}, err
					}
				}
			}
		}
		d, w, err := eng.Import(a.Ctx(), req, engine.ImportOptions{Apply: apply})
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			printImport(p, d)
			switch {
			case d.Applied:
				p.Printf("Imported %d module(s) into %s (profile %s).\n", d.Summary.Create, p.Path(d.Repo), d.Profile)
			case d.Reason == "no_changes":
				p.Printf("Nothing to import.\n")
			case d.Summary.Create > 0:
				p.Printf("Dry run: nothing written. Run `agentpack import --apply` to write.\n")
			}
			if d.Applied {
				for _, n := range d.NextActions {
					p.Printf("Next: %s\n", n)
				}
			}
		}}, nil
	})
}

// printImport prints the import plan as a table and its conflicts.
func printImport(p *Printer, d *engine.ImportData) {
	if len(d.Plan) == 0 {
		p.Printf("No assets found in %s or %s.\n", p.Path(d.HomeRoot), p.Path(d.ProjectRoot))
		return
	}
	tw := newTable(p, "OP", "MODULE", "TARGETS", "SCOPE", "FROM")
	for _, it := range d.Plan {
		op := it.Op
		if it.DestExists {
			op += "!"
		}
		from := p.Path(it.SourcePath)
		if n := len(it.SourcePaths); n > 1 {
			from += " (+" + strconv.Itoa(n-1) + ")"
		}
		tableRow(tw, op, it.ModuleID, strings.Join(it.Targets, ","), it.Scope, from)
	}
	_ = tw.Flush()
	s := d.Summary
	p.Printf("%d to create, %d already in agentpack.yaml, %d managed by agentpack, %d invalid, %d duplicate.\n",
		s.Create, s.SkippedExistingModule, s.SkippedManaged, s.SkippedInvalid, s.SkippedDuplicate)
	for _, c := range d.Conflicts {
		p.Printf("%s %s (%d): %s\n", p.yellow("conflict:"), c.Kind, c.Count, c.Hint)
		for _, x := range c.SamplePaths {
			p.Printf("  %s\n", p.Path(x))
		}
	}
}
