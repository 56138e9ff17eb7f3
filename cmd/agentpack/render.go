package main

import (
	"slices"
	"strings"

	"github.com/agentpack/agentpack/engine/plan"
)

// printChanges prints a compact change list grouped by target. Flags
// already given (--adopt, --force) drop the "needs" notes they answer.
func printChanges(p *Printer, profile string, targets []string, changes []plan.Change, sum plan.Summary, given ...string) {
	if len(changes) == 0 {
		p.Printf("No changes (profile %s, targets: %s).\n", profile, joinOrNone(targets))
		return
	}
	p.Printf("Plan for profile %s:\n", p.bold(profile))
	last := ""
	for _, c := range changes {
		if c.Target != last {
			p.Printf("\n%s\n", p.bold(c.Target))
			last = c.Target
		}
		mark := map[string]string{plan.OpCreate: p.green("+ create"), plan.OpUpdate: p.yellow("~ update"), plan.OpDelete: p.red("- delete")}[c.Op]
		note := ""
		if len(c.Entries) > 0 {
			p.Printf("  %s  %s\n", mark, p.Path(c.Path.String()))
			printEntries(p, c.Entries, given)
			continue
		}
		switch {
		case c.UpdateKind == plan.UpdateAdopt && !slices.Contains(given, "--adopt"):
			note = p.yellow("  (unmanaged file; needs --adopt)")
		case c.UpdateKind == plan.UpdateAdopt:
			note = p.yellow("  (unmanaged file; adopting)")
		case (c.UpdateKind == plan.UpdateDrifted || c.Op == plan.OpDelete && c.Reason == plan.ReasonEdited) && !slices.Contains(given, "--force"):
			note = p.red("  (edited since last deploy; needs --force)")
		case c.UpdateKind == plan.UpdateDrifted || c.Op == plan.OpDelete && c.Reason == plan.ReasonEdited:
			note = p.red("  (edited since last deploy; overwriting)")
		}
		p.Printf("  %s  %s%s\n", mark, p.Path(c.Path.String()), note)
	}
	p.Printf("\n%d to create, %d to update, %d to delete.\n", sum.Create, sum.Update, sum.Delete)
}

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}

// printEntries prints what a key-level change does to each entry of a
// shared config file, with the entry's own diff (never the whole file's).
func printEntries(p *Printer, entries []plan.EntryChange, given []string) {
	for _, e := range entries {
		mark := map[string]string{plan.OpCreate: p.green("+"), plan.OpUpdate: p.yellow("~"), plan.OpDelete: p.red("-")}[e.Op]
		note := ""
		switch {
		case e.UpdateKind == plan.UpdateAdopt && !slices.Contains(given, "--adopt"):
			note = p.yellow("  (not agentpack's entry; needs --adopt)")
		case (e.UpdateKind == plan.UpdateDrifted || e.Op == plan.OpDelete && e.Reason == plan.ReasonEdited) && !slices.Contains(given, "--force"):
			note = p.red("  (edited since last deploy; needs --force)")
		}
		p.Printf("      %s entry %s%s\n", mark, e.Name, note)
		for _, line := range strings.SplitAfter(strings.TrimRight(e.Unified, "\n"), "\n") {
			if line != "" {
				p.Printf("          %s", strings.TrimRight(line, "\n")+"\n")
			}
		}
	}
}
