package main

import "fmt"

// PlanCmd is `agentpack plan`.
type PlanCmd struct {
	ExitCode bool `name:"exit-code" help:"Exit 2 when the plan has changes, 0 when it has none (for CI)."`
}

// Run implements the command.
func (c *PlanCmd) Run(a *App) error {
	return a.run("plan", "plan", func() (*result, error) {
		st, p, err := a.Engine().PlanView(a.Ctx(), a.Request())
		if err != nil {
			return warningsOf(st), err
		}
		s := p.Summary
		return &result{Data: p, Warnings: st.Warnings, Human: func(pr *Printer) {
			printChanges(pr, p.Profile, p.Targets, p.Changes, p.Summary)
		}, Summary: fmt.Sprintf("%d create, %d update, %d delete", s.Create, s.Update, s.Delete),
			ExitCode: changesExitCode(c.ExitCode, len(p.Changes))}, nil
	})
}

// DiffCmd is `agentpack diff`.
type DiffCmd struct{}

// Run implements the command.
func (c *DiffCmd) Run(a *App) error {
	return a.run("diff", "diff", func() (*result, error) {
		st, d, err := a.Engine().Diff(a.Ctx(), a.Request())
		if err != nil {
			return warningsOf(st), err
		}
		return &result{Data: d, Warnings: st.Warnings, Human: func(pr *Printer) {
			if len(d.Changes) == 0 {
				pr.Printf("No changes.\n")
				return
			}
			for _, c := range d.Changes {
				pr.Printf("%s %s %s\n", pr.bold(c.Target), c.Op, pr.Path(c.Path.String()))
				if !c.Unified.IsZero() {
					pr.DiffOf(c.Unified)
				}
			}
		}}, nil
	})
}

// PreviewCmd is `agentpack preview`.
type PreviewCmd struct {
	Diff bool `help:"Include unified diffs."`
}

// Run implements the command.
func (c *PreviewCmd) Run(a *App) error {
	return a.run("preview", "preview", func() (*result, error) {
		st, d, err := a.Engine().Preview(a.Ctx(), a.Request(), c.Diff)
		if err != nil {
			return warningsOf(st), err
		}
		return &result{Data: d, Warnings: st.Warnings, Human: func(pr *Printer) {
			printChanges(pr, d.Profile, d.Targets, d.Plan.Changes, d.Plan.Summary)
			if d.Diff != nil {
				for _, f := range d.Diff.Files {
					if f.Unified != "" {
						pr.Printf("\n")
						pr.Diff(f.Unified)
					}
				}
			}
		}}, nil
	})
}
