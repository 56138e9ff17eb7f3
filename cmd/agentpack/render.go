package main

import (
	"slices"

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
